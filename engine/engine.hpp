// The engine's facade for the CLI: plain option structs in, plain reports out. Nothing here
// prints; errors are values. Every report says whether the weights were real or synthetic.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/kv/kv_strategy_options.hpp"
#include "types/deployment.hpp"
#include "types/model_shape.hpp"
#include "types/result.hpp"
#include "types/tensor_type.hpp"
#include "types/weight_format.hpp"

namespace trilemma::engine {

// KV cache (docs/engine.md "KV cache"). Invalid combinations are usage errors naming the option
// (e.g. a window with a strategy other than sliding, q4_0 on a kv_dim that is not a multiple of 32).
struct KvOptions {
  TensorType format = TensorType::f32;  // f32 | f16 | q8_0 | q4_0 (kv_formats())
  KvStrategy strategy = KvStrategy::contiguous;
  KvStrategyOptions options;            // page size, sliding window, offload budget
};
// "q8_0 sliding W64+4", "f16 offload resident 1048576 B", "f32 contiguous"
std::string describe(const KvOptions& kv);

struct GenerateOptions {
  // Either a model file (GGUF `llama`, or a llama2.c checkpoint which needs tokenizer_path)
  // or a synthetic shape (deterministic weights; tokenizer_path optional).
  std::optional<std::filesystem::path> model_path, tokenizer_path;
  std::optional<ModelShape> synthetic_shape;
  std::string synthetic_name;
  std::optional<TensorType> weights;  // nullopt = as stored (f32 for synthetic)
  // A llama.cpp recipe's type per matrix (GGUF name: blk.0.attn_v.weight -> q6_k), from the
  // planner's tensor plan; wins over `weights` for the tensors it names.
  std::map<std::string, TensorType, std::less<>> weights_by_tensor;
  std::optional<WeightFormat> recipe;  // the recipe weights_by_tensor lays out: reports name it ("q4_k_m")
  int threads = 0;                    // 0 = all cores
  std::string prompt;
  // > 0: the prompt text repeated (joined by spaces) until it encodes to at least this many
  // tokens (BOS included), then cut to exactly this many: a prompt of a set length for any
  // vocabulary (verify measures at the length it predicts for).
  int prompt_tokens = 0;
  int steps = 64;           // tokens to generate at most (stops early at EOS/BOS)
  float temperature = 0;    // 0 = greedy
  float top_p = 1;          // nucleus sampling when < 1
  std::uint64_t seed = 42;  // sampling seed
  bool force_scalar = false;  // use the `_ref` kernels (also: TRILEMMA_FORCE_SCALAR=1)

  KvOptions kv;
  int context = 0;  // KV capacity in positions; 0 = prompt + steps (+ draft length); at most
                    // the model's context

  // Speculative decoding (docs/engine.md "Speculative decoding"); off when draft == none.
  DraftKind draft = DraftKind::none;
  std::optional<std::filesystem::path> draft_model_path, draft_tokenizer_path;  // draft == model
  std::optional<ModelShape> draft_synthetic_shape;  // draft == model, synthetic weights instead of a file
  std::optional<TensorType> draft_weights;  // self: required; model: nullopt = as stored
  int draft_layers = 0;                     // layers: the target's first k layers
  int draft_len = 4;                        // g: tokens drafted per target pass
  bool measure_baseline = false;  // also run plain decoding (same options, no draft) and report
                                  // the speed-up measured in the same process
};

// Memory by owner, bytes. resident_total() is what should be in RAM; peak_rss is measured.
struct MemoryBreakdown {
  std::uint64_t weights = 0;        // target weights as run (x4 copies and fallbacks included)
  std::uint64_t draft_weights = 0;  // draft weights beyond the target's (0 for layer-skip)
  std::uint64_t kv_resident = 0;    // KV pages in memory, target + draft
  std::uint64_t kv_spilled = 0;     // KV in the slower tier (a file: not resident)
  std::uint64_t scratch = 0;        // activations, attention scores, matmul buffers, offload staging
  std::uint64_t runtime = 0;        // RSS before loading: code, libraries, thread stacks, heap
  std::uint64_t peak_rss = 0;       // VmHWM at the end of the run
  std::uint64_t resident_total() const { return weights + draft_weights + kv_resident + scratch + runtime; }
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

  std::string kv;  // describe(options.kv)
  std::uint64_t kv_allocated_bytes = 0, kv_used_bytes = 0;  // target cache: in memory / positions held
  std::uint64_t kv_spilled_bytes = 0;                       // offload: in the slower tier at the end
  std::uint64_t kv_slow_read_bytes = 0, kv_slow_write_bytes = 0;  // offload: tier traffic
  MemoryBreakdown memory;

  // Speculative decoding (zero / empty when off).
  std::string draft;             // "self q4_0", "layers 2/5", "model ..."
  double acceptance_rate = 0;    // accepted draft tokens / drafted tokens
  double tokens_per_pass = 0;    // emitted tokens / target passes after the prompt
  int target_passes = 0, drafted = 0, accepted = 0;
  double draft_cost_ratio = 0;   // c: draft forward time per draft call / target time per
                                 // plain decode step (baseline), or per verify pass without one
  std::optional<double> baseline_decode_tok_s;  // plain decoding measured in the same run
  std::optional<double> speculative_speedup;    // decode_tok_s / baseline_decode_tok_s
  std::optional<double> predicted_speedup;      // (1-a^(g+1)) / ((1-a)(g c + 1)) for measured a, c
  std::vector<int> baseline_tokens;             // plain decoding's tokens (measure_baseline)
};

// Loads (or synthesizes) the model, prefills the prompt in one batch, then decodes; calls
// on_text with each generated piece as it is produced.
Result<GenerateReport> generate(const GenerateOptions& options, const std::function<void(std::string_view piece)>& on_text);

// Accuracy of one configuration on a text (the engine side of `trilemma eval`). The text is
// tokenized with the model's tokenizer (no BOS), cut into chunks of `context - 1` tokens, and
// each chunk runs as BOS + chunk from position 0 in one batched forward pass (fresh KV cache
// per chunk); every position predicts the next token of the chunk, so a chunk scores
// context - 1 tokens (the last, shorter chunk fewer). Perplexity = exp(mean NLL).
// KL divergence compares, at every scored position, the next-token distribution of the
// reference run (the same model with f32 weights, f32 KV, contiguous, i.e. full attention) P
// with this configuration's Q: KL(P || Q) = sum_v P(v) (ln P(v) - ln Q(v)), in nats, as
// llama.cpp's --kl-divergence. Top-1 agreement: argmax P = argmax Q.
struct EvalOptions {
  std::optional<std::filesystem::path> model_path, tokenizer_path;
  std::optional<ModelShape> synthetic_shape;
  std::string synthetic_name;
  std::optional<TensorType> weights;  // nullopt = as stored
  std::map<std::string, TensorType, std::less<>> weights_by_tensor;  // as GenerateOptions
  std::optional<WeightFormat> recipe;                                 // as GenerateOptions
  KvOptions kv;
  std::filesystem::path text_path;
  int context = 256;     // tokens per chunk, BOS included; >= 2, <= the model's context
  int max_chunks = 0;    // 0 = the whole text
  int threads = 0;
  bool force_scalar = false;
};

struct EvalReport {
  bool synthetic = false;
  std::string weights, kv;             // "q4_0+mixed", describe(kv)
  std::vector<std::string> fallbacks;
  int text_tokens = 0, chunks = 0, context = 0, scored = 0;
  double perplexity = 0, reference_perplexity = 0;
  double kl_mean = 0, kl_median = 0, kl_p99 = 0, kl_max = 0;  // nats
  double top1_agreement = 0;           // fraction of scored positions
};

Result<EvalReport> evaluate(const EvalOptions& options);

struct ExportOptions {
  std::optional<std::filesystem::path> model_path, tokenizer_path;  // as GenerateOptions
  std::optional<ModelShape> synthetic_shape;
  std::string synthetic_name;
  TensorType weights = TensorType::f16;  // any format with a GGUF id: f32, f16, bf16, q8_0, q4_0, q4_k, ...
  // A llama.cpp recipe: its per-matrix types (as GenerateOptions) and the file type it writes
  // (general.file_type: Q4_K_M = 15); `weights` is then the recipe's bulk type.
  std::map<std::string, TensorType, std::less<>> weights_by_tensor;
  std::optional<WeightFormat> recipe;
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

// Whether the engine has kernels for a tensor type (runs it, converts to it, exports it).
bool has_kernels(TensorType type);
// The types `export` writes (a GGUF id and kernels), in table order: "f32, f16, bf16, q8_0, ...".
std::string export_type_names();

}  // namespace trilemma::engine
