// The reference packer of the bf16 panel (quant/bf16_panel.hpp).
#include "engine/quant/bf16_panel.hpp"

namespace trilemma::engine {

void resize_bf16_panel(Bf16Panel& panel, int tokens, std::int64_t n) {
  panel.tokens = tokens, panel.n = n;
  panel.slabs = (tokens + k_bf16_slab - 1) / k_bf16_slab;
  panel.ksteps = (n + k_bf16_kstep - 1) / k_bf16_kstep;
  panel.data.resize(std::size_t(panel.slabs) * std::size_t(panel.ksteps) * 2 * 512);
}

void pack_bf16_panel_token(const float* x, int t, Bf16Panel& panel) {
  const int slab = t / k_bf16_slab, j = t % k_bf16_slab;
  for (std::int64_t s = 0; s < panel.ksteps; ++s) {
    std::uint16_t* hi = panel.tile(slab, s, 0);
    std::uint16_t* lo = panel.tile(slab, s, 1);
    for (int e = 0; e < k_bf16_kstep; ++e) {
      const std::int64_t k = s * k_bf16_kstep + e;
      const std::size_t at = std::size_t(e / 2) * 32 + std::size_t(j) * 2 + std::size_t(e % 2);
      hi[at] = k < panel.n ? bf16_hi(x[k]) : 0;
      lo[at] = k < panel.n ? bf16_lo(x[k]) : 0;
    }
  }
}

}  // namespace trilemma::engine
