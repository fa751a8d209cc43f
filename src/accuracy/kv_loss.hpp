// The KV-cache term of the loss: what storing K and V in a quantized llama.cpp type costs, read
// from the published measurements in data/measurements/loss.csv that isolate it (full-precision
// weights, or the same quantized weights with an f16 cache as the baseline).
//
// The rows do not support a fitted model: a handful of measurements per type, and what varies
// between them (key outliers of one model, Hadamard rotation, K or V alone) is not a trait the
// planner knows. Size is not one of them either: q4_0 K alone costs Qwen3-30B-A3B +11.3% and q4_0
// K and V cost TinyLlama-1.1B +13.6%, while rotated q4_0 K and V cost Qwen3-8B +2.2% and
// Qwen3-0.6B +254% (same head size, 128). So the term is not scaled by size: mid = the geometric
// mean of the plain (unrotated) measurements of the type in both K and V, range = the 10th to
// 90th percentile of the caches with K and V both of the type (rotated included), held around
// the mid. (Every row naming the type, K or V alone too, spanned 0.9-254% for q4_0: a range
// nobody could use, and wider than caches quantized the way a plan quantizes them.)
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "measurements/loss_rows.hpp"
#include "types/estimate.hpp"
#include "types/tensor_type.hpp"

namespace trilemma::accuracy {

struct KvLoss {
  TensorType type = TensorType::f16;  // K and V both
  Range kld{0, 0, 0};                 // nats
  Range ppl_delta_pct{0, 0, 0};
  std::size_t measurements = 0;       // rows naming the type in K or V
  std::size_t both_measurements = 0;  // behind the range: caches with K and V both of the type
  std::vector<std::string> mid_models;  // behind the mid: models measured with the type in K and V
};

struct KvLossTable {
  std::vector<KvLoss> types;
  std::map<std::string, std::size_t> skipped;  // reason -> rows
};

// The table for `types` from `rows`; `knee` converts between KLD and perplexity
// (loss_fit.hpp) where a row publishes one of them.
KvLossTable kv_loss_table(const std::vector<measurements::LossRow>& rows, const std::vector<TensorType>& types,
                          double knee);

// The quantized cache types among the planner's KV formats (types/deployment.hpp): the ones
// the table has a term for.
std::vector<TensorType> quantized_kv_formats();

// The KV cache types the planner offers, from the built-in data; nullptr for f16/f32 caches, a
// type without measurements, or when the data do not load.
const KvLoss* builtin_kv_loss(TensorType kv_type);

// Whether a row measures a KV cache the table can use, and why not.
std::optional<std::string> kv_row_unusable(const measurements::LossRow& row);

}  // namespace trilemma::accuracy
