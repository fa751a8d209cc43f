// Attention over runs of stored rows, in one storage format. The arithmetic follows llama2.c
// run.c operation for operation (scores divided by sqrt(head_dim), softmax with the max
// subtracted, V accumulated position by position), so with f32 rows and the scalar dot the
// fp32 engine reproduces run.c, and every strategy gives bit-identical results whenever it
// shows a query the same positions in the same format.
#include "engine/kv/kv_pages.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

namespace trilemma::engine {

void PagedKvBase::Free::operator()(std::byte* p) const { std::free(p); }

PagedKvBase::PagedKvBase(const KvConfig& c, int page_positions)
    : m_layers(c.layers),
      m_capacity(c.capacity),
      m_heads(c.heads),
      m_kv_heads(c.kv_heads),
      m_head_dim(c.head_dim),
      m_kv_dim(c.kv_heads * c.head_dim),
      m_page(page_positions),
      m_row_bytes(kv_row_bytes(c.format, c.kv_heads * c.head_dim)),
      m_page_bytes(2 * std::size_t(page_positions) * m_row_bytes),
      m_format(*find_kv_format(c.format)),
      m_scores(select_kv_scores(m_format, c.isa)),
      m_mix(select_kv_mix(m_format, c.isa)),
      m_mix_heads(select_kv_mix_heads(m_format, c.isa)),
      m_scores_heads(select_kv_scores_heads(m_format, c.isa)),
      m_softmax(select_softmax(c.isa)) {}

std::byte* PagedKvBase::new_page() {
  const std::size_t bytes = (m_page_bytes + 63) / 64 * 64;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(64, bytes));
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  m_pages.emplace_back(p);
  m_allocated += m_page_bytes;
  return p;
}

void PagedKvBase::free_page(std::byte* page) {
  const auto it = std::find_if(m_pages.begin(), m_pages.end(), [&](const auto& p) { return p.get() == page; });
  if (it == m_pages.end()) return;
  m_pages.erase(it);
  m_allocated -= m_page_bytes;
}

void PagedKvBase::write_row(std::byte* page, int slot, const float* k, const float* v) const {
  m_format.store_row(k, k_rows(page) + std::size_t(slot) * m_row_bytes, m_kv_dim);
  m_format.store_row(v, v_rows(page) + std::size_t(slot) * m_row_bytes, m_kv_dim);
}

AttendScratch PagedKvBase::make_scratch() const {
  AttendScratch s;
  s.scores.resize(std::size_t(m_heads / m_kv_heads) * std::size_t(m_capacity));
  s.runs.reserve(2 * std::size_t((m_capacity + m_page - 1) / m_page) + 2);
  return s;
}

// Run by run, every head of the group: the run's K (then V) rows are read from memory once and
// from L1 by the other heads. Each head's scores, softmax and sums are the one-head arithmetic
// in the same order, so grouping changes no bit.
void PagedKvBase::attend(int layer, int head, int heads, int n_pos, const float* q, float* out, AttendScratch& scratch) const {
  std::vector<Run>& runs = scratch.runs;
  runs.clear();
  visible_runs(layer, n_pos, runs);
  const int first = (head / (m_heads / m_kv_heads)) * m_head_dim;  // element offset of the kv head
  const float scale = std::sqrt(float(m_head_dim));
  const std::size_t hd = std::size_t(m_head_dim);
  int n = 0;
  for (const Run& r : runs) {
    float* scores = scratch.scores.data() + std::size_t(n);
    if (m_scores_heads != nullptr)
      m_scores_heads(r.k, m_row_bytes, r.count, first, m_head_dim, q, hd, heads, scale, scores, std::size_t(m_capacity));
    else
      for (int h = 0; h < heads; ++h)
        m_scores(r.k, m_row_bytes, r.count, first, m_head_dim, q + std::size_t(h) * hd, scale, scores + std::size_t(h) * std::size_t(m_capacity));
    n += r.count;
  }
  for (int h = 0; h < heads; ++h) m_softmax(scratch.scores.data() + std::size_t(h) * std::size_t(m_capacity), n);
  std::fill(out, out + std::size_t(heads) * hd, 0.0f);
  int t = 0;
  for (const Run& r : runs) {
    const float* w = scratch.scores.data() + std::size_t(t);
    if (m_mix_heads != nullptr) m_mix_heads(r.v, m_row_bytes, r.count, first, m_head_dim, w, std::size_t(m_capacity), heads, out, hd);
    else
      for (int h = 0; h < heads; ++h)
        m_mix(r.v, m_row_bytes, r.count, first, m_head_dim, w + std::size_t(h) * std::size_t(m_capacity), out + std::size_t(h) * hd);
    t += r.count;
  }
}

}  // namespace trilemma::engine
