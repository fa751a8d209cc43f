// The KV cache interface between the forward pass and attention storage. The forward pass
// only stores K/V rows at positions and asks for attention over a prefix of positions; how
// K/V are kept (format: kv_format.hpp; strategy: contiguous, paged, sliding, offload) is the
// implementation's business. Keys arrive already rotated (RoPE) at their true positions, so a
// strategy that drops old positions never re-rotates anything.
// Positions may be rewritten: storing at pos p replaces what was there, so speculative
// decoding rolls back by running the forward pass again from an earlier position.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "engine/kv/kv_strategy_options.hpp"
#include "engine/quant/kernel_table.hpp"
#include "types/deployment.hpp"
#include "types/result.hpp"
#include "types/tensor_type.hpp"

namespace trilemma::engine {

struct KvStats {
  std::uint64_t allocated_bytes = 0;  // K/V bytes resident in memory (pages allocated)
  std::uint64_t used_bytes = 0;       // bytes of the positions attention can currently see
  std::uint64_t spilled_bytes = 0;    // bytes held in the slower tier (offload)
  std::uint64_t slow_read_bytes = 0, slow_write_bytes = 0;  // slower-tier traffic since creation
  std::uint64_t staging_bytes = 0;    // scratch for pages read back from the slower tier
};

// A run of `count` consecutive visible positions of one layer whose K rows start at `k` and V
// rows at `v` (one storage row apart).
struct KvRun {
  int count;
  const std::byte* k;
  const std::byte* v;
};

// One thread's scratch for attend(). Made by KvCache::make_scratch() on the thread that owns
// the cache, sized so that attend() never allocates on a worker thread.
struct AttendScratch {
  std::vector<float> scores;  // capacity() floats per head of a kv head's group
  std::vector<KvRun> runs;    // reserved to the most runs a query can see
};

class KvCache {
 public:
  virtual ~KvCache() = default;
  virtual int capacity() const = 0;  // positions that may be addressed
  // k, v: [kv_heads * head_dim] of the token at `pos`. REQUIRES: 0 <= pos < capacity().
  virtual void store(int layer, int pos, const float* k, const float* v) = 0;
  // Called once per layer, single-threaded, after the layer's stores and before its attend
  // calls; n_pos is the largest n_pos those calls use. Offload reads spilled pages here.
  virtual void prepare_attend(int layer, int n_pos) { (void)layer, (void)n_pos; }
  // Causal attention of `heads` consecutive query heads head, head + 1, ... at position
  // n_pos - 1, each:
  //   out_h[head_dim] = sum_t softmax_t(q_h . k_t / sqrt(head_dim)) v_t
  // over the positions t < n_pos the strategy keeps (all of them, or sinks + window), reading
  // kv head `head / (heads per kv head)` (GQA). q and out hold the heads side by side
  // ([heads][head_dim]). One call per group of heads that share a kv head reads each stored row
  // once for all of them while it is in L1; a head's result does not depend on the grouping.
  // REQUIRES: the heads share one kv head; kept positions of `layer` stored; prepare_attend(layer,
  // >= n_pos) called since the last store; scratch from make_scratch(); safe to call
  // concurrently for different (heads, out, scratch).
  virtual void attend(int layer, int head, int heads, int n_pos, const float* q, float* out, AttendScratch& scratch) const = 0;
  virtual AttendScratch make_scratch() const = 0;
  // Forgets every position; strategies that allocate on demand free their pages.
  virtual void reset() = 0;
  virtual KvStats stats() const = 0;
  // Bytes held in memory, for memory reports.
  std::uint64_t bytes() const { return stats().allocated_bytes; }
  // A sticky failure of the slower tier (offload), checked by the forward pass after each call.
  virtual Status status() const { return Ok{}; }
};

// What to build. Shape fields come from the model; the rest from GenerateOptions.
struct KvConfig {
  int layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
  int capacity = 0;                       // positions
  TensorType format = TensorType::f32;    // one of kv_formats()
  KvStrategy strategy = KvStrategy::contiguous;
  KvStrategyOptions options;              // the strategy's own: page size, window, resident budget
  int max_rewrite = 64;                   // sliding: positions a forward call may write ahead of
                                          // what it attends (the batch size); the ring keeps them
  Isa isa = Isa::scalar;                  // picks the score dot column
};

// The options `strategy` takes, as the engine's reports print them: " W64+4 page 16",
// " resident 1048576 B page 16", "" for contiguous.
std::string describe_strategy_options(KvStrategy strategy, const KvStrategyOptions& options);

// Checks the combination (format, strategy, window, sinks, page size, budget, kv_dim against
// the format's block) and builds the cache. Errors name the option.
Result<std::unique_ptr<KvCache>> make_kv_cache(const KvConfig& config);

}  // namespace trilemma::engine
