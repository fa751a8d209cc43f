// Published quality-loss measurements (data/measurements/loss.csv; schema in
// data/measurements/README.md): one row per model x format (x KV cache) x metric as somebody
// published it, with its source. Read strictly: the schema's columns, numbers where numbers
// belong, a source on every row, unique ids.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "types/result.hpp"

namespace trilemma::measurements {

struct LossRow {
  std::string file;
  std::size_t line = 0;
  std::string id, model, family, base_precision, format, format_published;
  std::optional<double> params_b;         // total, billions (empty when not published)
  std::optional<double> active_params_b;  // MoE: active per token
  std::optional<double> bpw;
  std::optional<bool> imatrix;            // empty: unknown
  std::string kv_k, kv_v;                 // empty: f16 (not part of the measurement)
  std::string metric;                     // kld_mean, ppl, ppl_delta_pct, top1_pct, mmlu, ...
  double value = 0;
  std::optional<double> baseline_value;
  std::string eval_text, engine, source_url, locator, notes;
  std::optional<std::uint32_t> context;
  std::string where() const;  // "file:line"
};

Result<std::vector<LossRow>> parse_loss_csv(const std::string& text, const std::string& file);

// data/measurements/loss.csv: the built-in copy, or `path` when given.
Result<std::vector<LossRow>> load_loss_rows(const std::string& path = "");

}  // namespace trilemma::measurements
