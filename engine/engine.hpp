// The engine's facade for the CLI: plain option structs in, plain reports out. Nothing here
// prints; errors are values. Every report says whether the weights were real or synthetic.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "types/model_shape.hpp"
#include "types/result.hpp"
#include "types/tensor_type.hpp"

namespace trilemma::engine {

struct GenerateOptions {
  // Either a model file (GGUF `llama`, or a llama2.c checkpoint which needs tokenizer_path)
  // or a synthetic shape (deterministic weights; tokenizer_path optional).
  std::optional<std::filesystem::path> model_path, tokenizer_path;
  std::optional<ModelShape> synthetic_shape;
  std::string synthetic_name;
  std::optional<TensorType> weights;  // nullopt = as stored (f32 for synthetic)
  int threads = 0;                    // 0 = all cores
  std::string prompt;
  int steps = 64;           // tokens to generate at most (stops early at EOS/BOS)
  float temperature = 0;    // 0 = greedy
  float top_p = 1;          // nucleus sampling when < 1
  std::uint64_t seed = 42;  // sampling seed
  bool force_scalar = false;  // use the `_ref` kernels (also: TRILEMMA_FORCE_SCALAR=1)
};

struct GenerateReport {
  std::vector<int> prompt_tokens, tokens;  // prompt_tokens include BOS
  std::string text;                        // decoded `tokens`
  bool synthetic = false;
  std::string weights;                     // e.g. "q4_0"
  std::vector<std::string> fallbacks;      // "blk.0.ffn_down.weight: q4_0 -> f32 (row 172 not a multiple of 32)"
  std::string kernels;  // kernel columns used, most weight bytes first: "avx512vnni", "avx2",
                        // "neon", "scalar", or a mix such as "avx512vnni+avx2"
  int threads = 0;
  double ttft_ms = 0;        // start of prefill to the first sampled token (loading excluded)
  double prefill_tok_s = 0;  // prompt tokens (BOS included) / prefill time
  double decode_tok_s = 0;   // tokens / time of the single-token forward passes
  std::uint64_t weight_bytes = 0;    // all weights as run (a tied classifier counted once)
  std::uint64_t peak_rss_bytes = 0;  // VmHWM of the process at the end of the run
};

// Loads (or synthesizes) the model, prefills the prompt in one batch, then decodes; calls
// on_text with each generated piece as it is produced.
Result<GenerateReport> generate(const GenerateOptions& options, const std::function<void(std::string_view piece)>& on_text);

struct ExportOptions {
  std::optional<std::filesystem::path> model_path, tokenizer_path;  // as GenerateOptions
  std::optional<ModelShape> synthetic_shape;
  std::string synthetic_name;
  TensorType weights = TensorType::f16;  // any format with a GGUF id: f32, f16, bf16, q8_0, q4_0, q4_k, ...
  std::filesystem::path output;
  int threads = 0;
};

struct ExportReport {
  bool synthetic = false;
  std::vector<std::string> fallbacks;
  std::uint64_t file_bytes = 0;
};

// Writes a GGUF v3 `llama` file with the tokenizer embedded. The file is written to a
// temporary name beside `output` and renamed on success: never a half-written output.
Result<ExportReport> export_gguf(const ExportOptions& options);

}  // namespace trilemma::engine
