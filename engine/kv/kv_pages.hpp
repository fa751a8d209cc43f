// What every strategy shares: pages of K/V rows in one storage format, and attention over the
// runs of consecutive positions a strategy exposes. A page holds `P` positions of one layer:
//   K rows [P][row_bytes] then V rows [P][row_bytes], row_bytes = kv_row_bytes(format, kv_dim)
// (docs/formats.md "KV cache"). Strategies differ only in where position p of a layer lives
// (which page, which slot) and which positions a query sees; one strategy per file:
// contiguous_kv_cache.cpp, paged_kv_cache.cpp, sliding_kv_cache.cpp, offload_kv_cache.cpp.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "engine/kv/kv_cache.hpp"
#include "engine/kv/kv_format.hpp"
#include "engine/kv/softmax.hpp"

namespace trilemma::engine {

class PagedKvBase : public KvCache {
 public:
  int capacity() const override { return m_capacity; }
  void attend(int layer, int head, int heads, int n_pos, const float* q, float* out, AttendScratch& scratch) const final;
  AttendScratch make_scratch() const final;

 protected:
  using Run = KvRun;
  // REQUIRES: config validated by make_kv_cache.
  PagedKvBase(const KvConfig& config, int page_positions);
  // Appends, in position order, the runs a query at position n_pos - 1 of `layer` sees: at
  // most two per page (a ring may wrap inside one), so make_scratch() reserves that many.
  virtual void visible_runs(int layer, int n_pos, std::vector<Run>& out) const = 0;

  std::byte* new_page();                 // zeroed, counted in allocated bytes
  void free_page(std::byte* page);
  void write_row(std::byte* page, int slot, const float* k, const float* v) const;
  std::byte* k_rows(std::byte* page) const { return page; }
  std::byte* v_rows(std::byte* page) const { return page + std::size_t(m_page) * m_row_bytes; }
  void note_stored(int pos) { m_filled = std::max(m_filled, pos + 1); }
  std::uint64_t position_bytes() const { return 2 * m_row_bytes * std::uint64_t(m_layers); }  // all layers
  // What every strategy reports: pages allocated, and `positions` kept of all layers.
  KvStats usage(std::uint64_t positions) const {
    KvStats s;
    s.allocated_bytes = m_allocated;
    s.used_bytes = positions * position_bytes();
    return s;
  }

  int m_layers, m_capacity, m_heads, m_kv_heads, m_head_dim, m_kv_dim, m_page;
  std::size_t m_row_bytes, m_page_bytes;
  const KvFormatKernels& m_format;
  KvScoresFn m_scores;  // per run of positions
  KvMixFn m_mix;
  KvMixHeadsFn m_mix_heads;  // nullptr: m_mix head by head
  KvScoresHeadsFn m_scores_heads;  // nullptr: m_scores head by head
  SoftmaxFn m_softmax;
  int m_filled = 0;  // 1 + the highest position stored since reset
  std::uint64_t m_allocated = 0;

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::vector<std::unique_ptr<std::byte[], Free>> m_pages;  // every page allocated, for freeing
};

// The four strategies (one file each); make_kv_cache picks by KvConfig::strategy.
std::unique_ptr<KvCache> make_contiguous_kv(const KvConfig& c);
std::unique_ptr<KvCache> make_paged_kv(const KvConfig& c);
std::unique_ptr<KvCache> make_sliding_kv(const KvConfig& c);
Result<std::unique_ptr<KvCache>> make_offload_kv(const KvConfig& c);

// fp32 contiguous cache with the signature tests and benches used before the strategy table.
class ContiguousKvCache;
std::unique_ptr<KvCache> make_contiguous_f32(int layers, int capacity, int heads, int kv_heads, int head_dim,
                                             Isa isa = Isa::scalar);

}  // namespace trilemma::engine
