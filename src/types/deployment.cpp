#include "types/deployment.hpp"
#include "types/table_order.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace trilemma {
namespace {

double all_positions(const DeploymentConfig&, double positions) { return positions; }
double whole_pages(const DeploymentConfig&, double positions) { return std::ceil(positions / k_kv_page_tokens) * k_kv_page_tokens; }
double window_and_sinks(const DeploymentConfig& c, double positions) { return std::min(positions, double(c.kv_params.sliding.window) + c.kv_params.sliding.sinks); }
double all_resident(const DeploymentConfig&) { return 1.0; }
double resident_fraction(const DeploymentConfig& c) { return c.kv_params.offload.resident_fraction; }
std::string no_params(const DeploymentConfig&) { return {}; }

std::string sliding_params(const DeploymentConfig& c) {
  const auto& s = c.kv_params.sliding;
  return " " + std::to_string(s.window) + (s.sinks ? "+" + std::to_string(s.sinks) : "");
}
std::string sliding_invalid(const DeploymentConfig& c) {
  return c.kv_params.sliding.window == 0 ? "window: a sliding window keeps at least 1 position" : "";
}
std::string offload_params(const DeploymentConfig& c) {
  return " " + std::to_string(static_cast<int>(c.kv_params.offload.resident_fraction * 100 + 0.5)) + "% resident";
}
std::string offload_invalid(const DeploymentConfig& c) {
  const double share = c.kv_params.offload.resident_fraction;
  return share > 0 && share <= 1 ? "" : "kv_resident_fraction: must be in (0, 1]";
}

bool window_shorter_than_context(const DeploymentConfig& c) { return c.kv_params.sliding.window < c.context; }
AttentionLoss keeps_everything(const DeploymentConfig&) { return AttentionLoss::none; }
AttentionLoss sliding_loss(const DeploymentConfig& c) {
  const auto& s = c.kv_params.sliding;
  if (c.context <= std::uint64_t(s.window) + s.sinks) return AttentionLoss::none;
  return s.sinks >= 4 ? AttentionLoss::evicts_keeping_sinks : AttentionLoss::evicts_without_sinks;
}
std::string no_engine_flags(const DeploymentConfig&, double) { return {}; }
std::string sliding_engine_flags(const DeploymentConfig& c, double) {
  return " --window " + std::to_string(c.kv_params.sliding.window) + " --sinks " + std::to_string(c.kv_params.sliding.sinks);
}
std::string offload_engine_flags(const DeploymentConfig& c, double full_kv_bytes) {
  return " --kv-resident-mib " + std::to_string(full_kv_bytes * c.kv_params.offload.resident_fraction / 1048576.0);
}

// The solver's grids: windows of a few thousand positions (Mistral 7B's 4096, Gemma 2's
// 4096 local layers, shorter for small devices), and half or a quarter of the KV resident.
constexpr std::array k_windows = {1024.0, 2048.0, 4096.0};
constexpr std::array k_resident_shares = {0.5, 0.25};

double get_window(const DeploymentConfig& c) { return c.kv_params.sliding.window; }
void set_window(DeploymentConfig& c, double v) { c.kv_params.sliding.window = static_cast<std::uint32_t>(v); }
double get_sinks(const DeploymentConfig& c) { return c.kv_params.sliding.sinks; }
void set_sinks(DeploymentConfig& c, double v) { c.kv_params.sliding.sinks = static_cast<std::uint32_t>(v); }
double get_resident(const DeploymentConfig& c) { return c.kv_params.offload.resident_fraction; }
void set_resident(DeploymentConfig& c, double v) { c.kv_params.offload.resident_fraction = v; }

constexpr std::array<KvStrategyParam, 0> k_no_params{};
constexpr std::array k_sliding_params = {
    KvStrategyParam{"window", true, get_window, set_window, "--window", "sliding window positions (implies --kv-strategy sliding)",
                    true, 1, 0, k_windows},
    KvStrategyParam{"sinks", true, get_sinks, set_sinks, "--sinks", "sink tokens kept with a sliding window (default 4)", false,
                    0, 4, {}}};
constexpr std::array k_offload_params = {KvStrategyParam{"kv_resident_fraction", false, get_resident, set_resident,
                                                         "--kv-resident", "share of the KV kept in fast memory (implies offload)", true,
                                                         0, 1, k_resident_shares}};

constexpr std::array k_strategies = {
    KvStrategyInfo{KvStrategy::contiguous, "contiguous", "one buffer for the whole context, allocated up front", all_positions,
                   all_positions, all_resident, k_no_params, no_params, no_params, nullptr, true, keeps_everything, no_engine_flags},
    KvStrategyInfo{KvStrategy::paged, "paged", "fixed-size pages allocated as the context grows", whole_pages, all_positions,
                   all_resident, k_no_params, no_params, no_params, nullptr, false, keeps_everything, no_engine_flags},
    KvStrategyInfo{KvStrategy::sliding, "sliding", "keeps the last W positions plus S sink tokens", window_and_sinks,
                   window_and_sinks, all_resident, k_sliding_params, sliding_params, sliding_invalid, window_shorter_than_context,
                   false, sliding_loss, sliding_engine_flags},
    KvStrategyInfo{KvStrategy::offload, "offload", "pages beyond a resident budget move to a slower tier", all_positions,
                   all_positions, resident_fraction, k_offload_params, offload_params, offload_invalid, nullptr, false,
                   keeps_everything, offload_engine_flags},
};
static_assert(k_strategies.size() == k_kv_strategy_count && rows_in_enum_order(k_strategies, &KvStrategyInfo::strategy),
              "one row per KvStrategy, in enum order");

constexpr std::array k_kv_formats = {TensorType::f32, TensorType::f16, TensorType::q8_0, TensorType::q4_0};
static_assert(k_kv_formats.size() == k_kv_format_count);

constexpr auto k_draft_names = std::to_array<std::string_view>({"none", "model", "self", "layers"});
static_assert(k_draft_names.size() == static_cast<std::size_t>(DraftKind::layers) + 1, "one name per DraftKind");

}  // namespace

std::span<const KvStrategyInfo> kv_strategies() { return k_strategies; }
const KvStrategyInfo& info(KvStrategy s) { return k_strategies[static_cast<std::size_t>(s)]; }
std::optional<KvStrategy> kv_strategy_from_name(std::string_view name) {
  for (const auto& row : k_strategies)
    if (row.name == name) return row.strategy;
  return std::nullopt;
}

std::string kv_strategy_names() {
  std::string out;
  for (const auto& row : k_strategies) out += (out.empty() ? "" : ", ") + std::string(row.name);
  return out;
}

std::span<const TensorType> kv_formats() { return k_kv_formats; }
bool is_kv_format(TensorType t) {
  for (auto f : k_kv_formats)
    if (f == t) return true;
  return false;
}

std::string kv_format_names() {
  std::string out;
  for (auto f : k_kv_formats) out += (out.empty() ? "" : ", ") + std::string(info(f).name);
  return out;
}

std::size_t kv_format_index(TensorType t) {
  for (std::size_t i = 0; i < k_kv_formats.size(); ++i)
    if (k_kv_formats[i] == t) return i;
  return 0;
}

std::string_view draft_kind_name(DraftKind k) { return k_draft_names[static_cast<std::size_t>(k)]; }
std::optional<DraftKind> draft_kind_from_name(std::string_view name) {
  for (std::size_t i = 0; i < k_draft_names.size(); ++i)
    if (k_draft_names[i] == name) return static_cast<DraftKind>(i);
  return std::nullopt;
}

std::string draft_kind_names(bool with_none) {
  std::string out;
  for (std::size_t i = 0; i < k_draft_names.size(); ++i)
    if (with_none || static_cast<DraftKind>(i) != DraftKind::none) out += (out.empty() ? "" : ", ") + std::string(k_draft_names[i]);
  return out;
}

std::string describe_kv_strategy(const DeploymentConfig& c) {
  return std::string(info(c.kv_strategy).name) + info(c.kv_strategy).describe_params(c);
}

std::string describe(const DeploymentConfig& c) {
  std::string s = std::string(info(c.weights).name) + (c.imatrix ? "+imatrix" : "") + " / kv " + std::string(info(c.kv_type).name) + " " +
                  describe_kv_strategy(c);
  if (c.speculative.on()) {
    s += " / spec " + std::string(draft_kind_name(c.speculative.kind));
    if (c.speculative.kind == DraftKind::model) s += ":" + c.speculative.draft_model;
    if (c.speculative.kind == DraftKind::self) s += ":" + std::string(info(c.speculative.draft_weights).name);
    if (c.speculative.kind == DraftKind::layers) s += ":" + std::to_string(c.speculative.draft_layers);
    s += " g" + std::to_string(c.speculative.draft_len);
  }
  s += " / " + std::string(info(c.backend).name);
  if (c.threads) s += " x" + std::to_string(c.threads);
  s += " / ctx " + std::to_string(c.context);
  return s;
}

std::string validate_config(const DeploymentConfig& c) {
  if (c.context == 0 || c.context > k_max_context) return "context: must be in 1.." + std::to_string(k_max_context);
  if (c.prompt > c.context) return "prompt: " + std::to_string(c.prompt) + " tokens do not fit the context of " + std::to_string(c.context);
  if (c.prompt_depth > c.context - c.prompt) return "prompt_depth: the cache and the prompt exceed the context";
  if (c.threads > k_max_threads) return "threads: at most " + std::to_string(k_max_threads);
  if (std::string why = info(c.kv_strategy).validate_params(c); !why.empty()) return why;
  const auto& s = c.speculative;
  if (s.on()) {
    if (s.draft_len == 0 || s.draft_len > k_max_draft_len) return "speculative.draft_len: must be in 1.." + std::to_string(k_max_draft_len);
    if (s.kind == DraftKind::layers && s.draft_layers == 0) return "speculative.draft_layers: must be >= 1";
    if (s.kind == DraftKind::model && s.draft_model.empty()) return "speculative.draft_model: required for a model draft";
  }
  return {};
}

}  // namespace trilemma
