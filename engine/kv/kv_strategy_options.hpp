// The options of the KV strategies that take some, each under its strategy: what `run` and
// `eval` are given (KvOptions) and what a cache is built from (KvConfig) hold the same struct.
// make_kv_cache refuses options set for another strategy than the configured one.
#pragma once
#include <cstdint>
#include <filesystem>

namespace trilemma::engine {

struct SlidingOptions {
  int window = 0;  // the last `window` positions are kept (required > 0)...
  int sinks = 0;   // ...and the first `sinks` (StreamingLLM's attention sinks)
};

struct OffloadOptions {
  std::uint64_t resident_bytes = 0;  // K/V bytes kept in memory (whole pages, per cache)
  std::filesystem::path spill_dir;   // directory of the slower tier's temp file (empty: the temp dir)
};

// A page larger than this holds more than any context the planner plans (16M positions at
// most): refused rather than allocated.
inline constexpr int k_max_page_positions = 65536;

struct KvStrategyOptions {
  int page_positions = 16;  // paged, sliding, offload: positions per page (1..k_max_page_positions)
  SlidingOptions sliding;
  OffloadOptions offload;
};

}  // namespace trilemma::engine
