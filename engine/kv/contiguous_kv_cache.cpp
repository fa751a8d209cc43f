// Strategy "contiguous": one page per layer holding every position up to the capacity,
// allocated up front ([layer][K|V][pos][row]). Simplest and fastest; pays for the whole context
// from the first token.
#include "engine/kv/kv_pages.hpp"

namespace trilemma::engine {
namespace {

class ContiguousKv final : public PagedKvBase {
 public:
  explicit ContiguousKv(const KvConfig& c) : PagedKvBase(c, c.capacity) {
    for (int l = 0; l < m_layers; ++l) m_layer_pages.push_back(new_page());
  }
  void store(int layer, int pos, const float* k, const float* v) override {
    write_row(m_layer_pages[std::size_t(layer)], pos, k, v);
    note_stored(pos);
  }
  void reset() override { m_filled = 0; }
  KvStats stats() const override { return usage(std::uint64_t(m_filled)); }

 protected:
  void visible_runs(int layer, int n_pos, std::vector<Run>& out) const override {
    std::byte* page = m_layer_pages[std::size_t(layer)];
    out.push_back({n_pos, k_rows(page), v_rows(page)});
  }

 private:
  std::vector<std::byte*> m_layer_pages;
};

}  // namespace

std::unique_ptr<KvCache> make_contiguous_kv(const KvConfig& c) { return std::make_unique<ContiguousKv>(c); }

std::unique_ptr<KvCache> make_contiguous_f32(int layers, int capacity, int heads, int kv_heads, int head_dim, Isa isa) {
  KvConfig c;
  c.layers = layers, c.capacity = capacity, c.heads = heads, c.kv_heads = kv_heads, c.head_dim = head_dim, c.isa = isa;
  return make_contiguous_kv(c);
}

}  // namespace trilemma::engine
