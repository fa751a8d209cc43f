// One deployment configuration: every choice the solver makes, the plan document records, the
// emitters translate and the engine runs. Plain data; the planner and engine share it.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "types/backend.hpp"
#include "types/tensor_type.hpp"
#include "types/weight_format.hpp"

namespace trilemma {

// Append at the end: names are persisted in plan documents.
enum class KvStrategy : std::uint8_t {
  contiguous,  // one buffer sized for the whole context, allocated up front
  paged,       // fixed-size pages allocated on demand (vLLM's PagedAttention)
  sliding,     // keep the last `window` positions (+ `sinks` first tokens, StreamingLLM)
  offload,     // pages beyond a resident budget live in a slower tier
};
// One row per strategy in each strategy table; the last enumerator + 1.
inline constexpr std::size_t k_kv_strategy_count = static_cast<std::size_t>(KvStrategy::offload) + 1;

// Tokens per KV page: the paged strategy allocates, and the planner counts, whole pages
// (vLLM's default block size, and the engine's page).
inline constexpr std::uint32_t k_kv_page_tokens = 16;

struct DeploymentConfig;

// A parameter a strategy adds to the configuration (DeploymentConfig::kv_params), as plan
// documents store it under `key`: a whole number, or a share in (0, 1] when not `whole`.
// The row also says how `plan` pins it and which values the solver tries when it is not pinned.
struct KvStrategyParam {
  std::string_view key;
  bool whole;
  double (*get)(const DeploymentConfig& config);
  void (*set)(DeploymentConfig& config, double value);
  std::string_view flag;             // plan's pin: "--window"
  std::string_view help;
  bool pins_strategy;                // giving the flag pins the strategy too (--window: sliding)
  std::uint32_t min_whole;           // whole: the smallest value the flag takes
  double unsearched;                 // the value when neither pinned nor searched (sinks: 4)
  std::span<const double> searched;  // the solver's grid when unpinned; empty: `unsearched`
};

// What dropping positions does to attention, for the accuracy model: nothing, an eviction that
// keeps the first tokens as attention sinks (StreamingLLM's fluent case), or one that drops
// them too (its collapse).
enum class AttentionLoss : std::uint8_t { none, evicts_keeping_sinks, evicts_without_sinks };

// Everything the planner's layers ask of a strategy, so that one row answers the memory model,
// the estimates, the solver's search, plan's pins, the accuracy model, verify's engine flags and
// the configuration's text and checks (emitters keep their own spellings).
struct KvStrategyInfo {
  KvStrategy strategy;
  std::string_view name;
  std::string_view summary;
  // Positions one layer holds with `positions` tokens in context (paged: whole pages; sliding:
  // at most window + sinks).
  double (*held)(const DeploymentConfig& config, double positions);
  // Positions one layer reads, and a query attends to, with `positions` tokens in context
  // (paged: only the pages in use; sliding: at most window + sinks).
  double (*attended)(const DeploymentConfig& config, double positions);
  // Share of the KV kept in the fast memory tier.
  double (*resident_share)(const DeploymentConfig& config);
  std::span<const KvStrategyParam> params;
  // The strategy's own parameters as describe() prints them (" 2048+4"), "" when it has none.
  std::string (*describe_params)(const DeploymentConfig& config);
  // "" when the strategy's own parameters are valid, else "field: problem".
  std::string (*validate_params)(const DeploymentConfig& config);
  // Whether a configuration from the searched grid is worth estimating (a window as long as
  // the context is no window); null: every one. Pinned values are always tried.
  bool (*worth_searching)(const DeploymentConfig& config);
  // Runs on backends whose graphs are compiled for fixed shapes (NPUs): one buffer of the
  // whole context, nothing allocated or moved while decoding.
  bool fixed_shapes;
  AttentionLoss (*attention_loss)(const DeploymentConfig& config);
  // The engine's `run` flags for the strategy's parameters (" --window 2048 --sinks 4"), given
  // the KV bytes a full cache of the run would hold.
  std::string (*engine_flags)(const DeploymentConfig& config, double full_kv_bytes);
};
std::span<const KvStrategyInfo> kv_strategies();
const KvStrategyInfo& info(KvStrategy strategy);
std::optional<KvStrategy> kv_strategy_from_name(std::string_view name);
// "contiguous, paged, sliding, offload": for help texts and error messages.
std::string kv_strategy_names();

// KV storage formats the planner and engine support (a subset of tensor types).
inline constexpr std::size_t k_kv_format_count = 4;
std::span<const TensorType> kv_formats();
bool is_kv_format(TensorType type);
// "f32, f16, q8_0, q4_0": for help texts and error messages.
std::string kv_format_names();
// Position of `type` in kv_formats(); REQUIRES: is_kv_format(type).
std::size_t kv_format_index(TensorType type);

enum class DraftKind : std::uint8_t { none, model, self, layers };
std::string_view draft_kind_name(DraftKind kind);
std::optional<DraftKind> draft_kind_from_name(std::string_view name);
// "none, model, self, layers": for help texts and error messages; without `none`, the kinds
// that draft ("model, self, layers").
std::string draft_kind_names(bool with_none = true);

struct SpeculativeConfig {
  DraftKind kind = DraftKind::none;
  std::string draft_model;         // catalog id when kind == model
  WeightFormat draft_weights = WeightFormat::q4_0;  // model: its format; self: the lower-bit copy
  std::uint32_t draft_layers = 0;  // layers: the first k layers of the target
  std::uint32_t draft_len = 0;     // g, tokens drafted per target pass
  double measured_acceptance = 0;  // > 0: a rate verify measured, used instead of the prior
  bool on() const { return kind != DraftKind::none; }
  // A draft with weights of its own (a model, or the target's lower-bit copy): layer-skip
  // drafts run the target's.
  bool has_draft_weights() const { return kind == DraftKind::model || kind == DraftKind::self; }
};

// The parameters of the strategies that take some, each under its strategy. Only the configured
// strategy's are read (through its row's `params`); the others keep their defaults.
struct SlidingParams {
  std::uint32_t window = 0;  // positions kept
  std::uint32_t sinks = 0;   // first tokens kept besides the window (StreamingLLM's attention sinks)
};
struct OffloadParams {
  double resident_fraction = 1.0;  // share of the KV kept in fast memory
};
struct KvParams {
  SlidingParams sliding;
  OffloadParams offload;
};

struct DeploymentConfig {
  WeightFormat weights = WeightFormat::q4_k_m;
  // The llama.cpp weights are quantized with an importance matrix (llama-imatrix, then
  // llama-quantize --imatrix): same bytes and speed, less loss (docs/estimates.md).
  bool imatrix = false;
  TensorType kv_type = TensorType::f16;
  KvStrategy kv_strategy = KvStrategy::contiguous;
  KvParams kv_params;                 // the strategy's own parameters
  std::uint32_t context = 4096;       // tokens
  std::uint32_t prompt = 512;         // prompt tokens for TTFT
  // Tokens already in the cache when the prompt arrives (a later turn of a conversation,
  // llama-bench's `pp512 @ d4096`): the prompt attends to them too. 0: a fresh conversation.
  std::uint32_t prompt_depth = 0;
  Backend backend = Backend::cpu;
  // Empty: the backend's own runtime (BackendInfo::engine), the one plans are for. Fidelity
  // checks set another (ExecuTorch on the CPU) to cost the memory that runtime keeps.
  std::string runtime;
  std::uint32_t threads = 0;
  SpeculativeConfig speculative;
};

// The strategy with its parameters: "sliding 2048+4", "offload 50% resident", "paged".
std::string describe_kv_strategy(const DeploymentConfig& config);

// "q4_k_m / kv q8_0 sliding 2048+4 / spec model:llama-3.2-1b g4 / cpu x4"
std::string describe(const DeploymentConfig& config);

// The one validation of a configuration, for every command that reads one (plan's pins, a plan
// document that emit, export or verify read back): "" when it can run, else "field: problem".
std::string validate_config(const DeploymentConfig& config);

// Limits validate_config applies, for the flags that set the same fields.
inline constexpr std::uint32_t k_max_threads = 1024, k_max_draft_len = 32, k_max_context = 1u << 24;

}  // namespace trilemma
