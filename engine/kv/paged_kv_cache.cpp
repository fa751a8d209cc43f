// Strategy "paged" (vLLM's PagedAttention, one sequence): pages of P positions per layer,
// allocated when a position in them is first stored; a block table per layer maps logical
// page pos / P to its physical page. reset() frees every page. Allocated bytes grow in steps
// of one page per layer; used bytes are the positions stored.
#include "engine/kv/kv_pages.hpp"

namespace trilemma::engine {
namespace {

class PagedKv final : public PagedKvBase {
 public:
  explicit PagedKv(const KvConfig& c)
      : PagedKvBase(c, c.options.page_positions),
        m_table(std::size_t(m_layers), std::vector<std::byte*>(std::size_t((m_capacity + m_page - 1) / m_page), nullptr)) {}
  void store(int layer, int pos, const float* k, const float* v) override {
    std::byte*& page = m_table[std::size_t(layer)][std::size_t(pos / m_page)];
    if (page == nullptr) page = new_page();
    write_row(page, pos % m_page, k, v);
    note_stored(pos);
  }
  void reset() override {
    for (auto& layer : m_table)
      for (auto& page : layer)
        if (page != nullptr) free_page(page), page = nullptr;
    m_filled = 0;
  }
  KvStats stats() const override { return usage(std::uint64_t(m_filled)); }

 protected:
  void visible_runs(int layer, int n_pos, std::vector<Run>& out) const override {
    const auto& table = m_table[std::size_t(layer)];
    for (int begin = 0; begin < n_pos; begin += m_page) {
      std::byte* page = table[std::size_t(begin / m_page)];
      out.push_back({std::min(m_page, n_pos - begin), k_rows(page), v_rows(page)});
    }
  }

 private:
  std::vector<std::vector<std::byte*>> m_table;  // [layer][logical page] -> page or nullptr
};

}  // namespace

std::unique_ptr<KvCache> make_paged_kv(const KvConfig& c) { return std::make_unique<PagedKv>(c); }

}  // namespace trilemma::engine
