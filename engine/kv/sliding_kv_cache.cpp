// Strategy "sliding": a query at position p sees the first S positions (attention sinks,
// StreamingLLM, Xiao et al. 2023) and the last W positions (p - W, p]; everything between is
// dropped. Keys are stored already rotated at their true positions, so RoPE stays correct
// after drops (trilemma does not re-number positions inside the cache as StreamingLLM does).
//   sinks: pages for positions [0, S), allocated on demand.
//   ring:  positions p >= S live at slot (p - S) mod R of a ring of R = ceil((W + B) / P) * P
//          slots (pages allocated on demand), where B = KvConfig::max_rewrite: a forward call
//          stores all of its B tokens before any of them attends, so the ring keeps B more
//          positions than the window so the earliest token of a batch still sees its own window.
// With W >= the context this is full attention, bit for bit (same rows, same order).
#include "engine/kv/kv_pages.hpp"

#include <algorithm>

namespace trilemma::engine {
namespace {

class SlidingKv final : public PagedKvBase {
 public:
  explicit SlidingKv(const KvConfig& c)
      : PagedKvBase(c, c.options.page_positions),
        // A window or sink count beyond the capacity holds no more than the capacity: capped,
        // so an absurd --window costs what full attention costs, not its own size.
        m_window(std::min(c.options.sliding.window, c.capacity)),
        m_sinks(std::min(c.options.sliding.sinks, c.capacity)) {
    const int ring_pages = int((std::int64_t(m_window) + c.max_rewrite + m_page - 1) / m_page);
    m_ring_slots = ring_pages * m_page;
    m_sink_pages.assign(std::size_t(m_layers), std::vector<std::byte*>(std::size_t((m_sinks + m_page - 1) / m_page), nullptr));
    m_ring.assign(std::size_t(m_layers), std::vector<std::byte*>(std::size_t(ring_pages), nullptr));
  }
  void store(int layer, int pos, const float* k, const float* v) override {
    const auto [page, slot] = locate(layer, pos);
    if (*page == nullptr) *page = new_page();
    write_row(*page, slot, k, v);
    note_stored(pos);
  }
  void reset() override {
    for (auto* table : {&m_sink_pages, &m_ring})
      for (auto& layer : *table)
        for (auto& page : layer)
          if (page != nullptr) free_page(page), page = nullptr;
    m_filled = 0;
  }
  KvStats stats() const override {
    const int sinks = std::min(m_filled, m_sinks);
    return usage(std::uint64_t(sinks + std::min(m_filled - sinks, m_window)));
  }

 protected:
  void visible_runs(int layer, int n_pos, std::vector<Run>& out) const override {
    const int sinks = std::min(n_pos, m_sinks);
    for (int begin = 0; begin < sinks; begin += m_page) {
      std::byte* page = m_sink_pages[std::size_t(layer)][std::size_t(begin / m_page)];
      out.push_back({std::min(m_page, sinks - begin), k_rows(page), v_rows(page)});
    }
    for (int pos = std::max(sinks, n_pos - m_window); pos < n_pos;) {
      const int r = (pos - m_sinks) % m_ring_slots, slot = r % m_page;
      std::byte* page = m_ring[std::size_t(layer)][std::size_t(r / m_page)];
      const int count = std::min(m_page - slot, n_pos - pos);
      out.push_back({count, k_rows(page) + std::size_t(slot) * m_row_bytes, v_rows(page) + std::size_t(slot) * m_row_bytes});
      pos += count;
    }
  }

 private:
  std::pair<std::byte**, int> locate(int layer, int pos) {
    if (pos < m_sinks) return {&m_sink_pages[std::size_t(layer)][std::size_t(pos / m_page)], pos % m_page};
    const int r = (pos - m_sinks) % m_ring_slots;
    return {&m_ring[std::size_t(layer)][std::size_t(r / m_page)], r % m_page};
  }

  int m_window, m_sinks, m_ring_slots = 0;
  std::vector<std::vector<std::byte*>> m_sink_pages, m_ring;  // [layer][page]
};

}  // namespace

std::unique_ptr<KvCache> make_sliding_kv(const KvConfig& c) { return std::make_unique<SlidingKv>(c); }

}  // namespace trilemma::engine
