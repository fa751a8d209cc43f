// The one table of KV strategies the engine runs (rows in KvStrategy order, the names and
// summaries are src/types/deployment.cpp's), and the checks that every strategy shares.
// Adding a strategy: a file with its make function and a row here.
#include <array>
#include <string>

#include "engine/kv/kv_pages.hpp"
#include "types/table_order.hpp"

namespace trilemma::engine {
namespace {

Error bad(const std::string& option, const std::string& message) {
  return make_error(ErrorKind::usage, "", option, message);
}

struct StrategyRow {
  KvStrategy strategy;
  bool pages, window, budget;  // which options apply
  Result<std::unique_ptr<KvCache>> (*make)(const KvConfig&);
};

Result<std::unique_ptr<KvCache>> contiguous(const KvConfig& c) { return make_contiguous_kv(c); }
Result<std::unique_ptr<KvCache>> paged(const KvConfig& c) { return make_paged_kv(c); }
Result<std::unique_ptr<KvCache>> sliding(const KvConfig& c) { return make_sliding_kv(c); }

constexpr std::array k_rows = {
    StrategyRow{KvStrategy::contiguous, false, false, false, contiguous},
    StrategyRow{KvStrategy::paged, true, false, false, paged},
    StrategyRow{KvStrategy::sliding, true, true, false, sliding},
    StrategyRow{KvStrategy::offload, true, false, true, make_offload_kv},
};
static_assert(k_rows.size() == k_kv_strategy_count && rows_in_enum_order(k_rows, &StrategyRow::strategy),
              "one row per KvStrategy, in enum order");

}  // namespace

std::string describe_strategy_options(KvStrategy strategy, const KvStrategyOptions& o) {
  const StrategyRow& row = k_rows[std::size_t(strategy)];
  std::string s;
  if (row.window) s += " W" + std::to_string(o.sliding.window) + (o.sliding.sinks ? "+" + std::to_string(o.sliding.sinks) : "");
  if (row.budget) s += " resident " + std::to_string(o.offload.resident_bytes) + " B";
  if (row.pages) s += " page " + std::to_string(o.page_positions);
  return s;
}

Result<std::unique_ptr<KvCache>> make_kv_cache(const KvConfig& c) {
  const std::string fmt(info(c.format).name), strategy(info(c.strategy).name);
  const KvFormatKernels* k = find_kv_format(c.format);
  if (k == nullptr || !is_kv_format(c.format)) return bad("kv_format", fmt + " is not a KV storage format (" + kv_format_names() + ")");
  if (c.layers <= 0 || c.heads <= 0 || c.kv_heads <= 0 || c.head_dim <= 0 || c.heads % c.kv_heads != 0)
    return bad("kv_shape", "layers, heads, kv_heads and head_dim must be > 0 and heads a multiple of kv_heads");
  if (c.capacity <= 0) return bad("context", "KV capacity must be > 0 positions");
  const int kv_dim = c.kv_heads * c.head_dim;
  if (kv_dim % int(info(c.format).block_elems) != 0)
    return bad("kv_format", fmt + " stores blocks of " + std::to_string(info(c.format).block_elems) +
                                " along kv_dim, which is " + std::to_string(kv_dim) + " for this model");
  const StrategyRow& row = k_rows[std::size_t(c.strategy)];
  if (row.pages && (c.options.page_positions <= 0 || c.options.page_positions > k_max_page_positions))
    return bad("page_size", "must be 1 to " + std::to_string(k_max_page_positions) + " positions, got " +
                                std::to_string(c.options.page_positions));
  if (!row.window && (c.options.sliding.window != 0 || c.options.sliding.sinks != 0))
    return bad("window", "window and sinks apply to the sliding strategy only, not " + strategy);
  if (row.window && c.options.sliding.window <= 0) return bad("window", "sliding needs a window of at least 1 position");
  if (c.options.sliding.sinks < 0) return bad("sinks", "must be >= 0");
  if (row.window && c.max_rewrite < 1) return bad("max_rewrite", "must be >= 1");
  if (!row.budget && c.options.offload.resident_bytes != 0)
    return bad("kv_resident_bytes", "a resident budget applies to the offload strategy only, not " + strategy);
  return row.make(c);
}

}  // namespace trilemma::engine
