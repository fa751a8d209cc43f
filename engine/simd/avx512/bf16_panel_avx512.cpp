// AVX-512 twin of pack_bf16_panel_token (quant/bf16_panel.cpp): 32 elements per k-step at
// once, the halves split with the same integer steps as bf16_hi / bf16_lo, so the bytes are the
// reference's. Compiled with -mavx512f -mavx512bw.
#include <immintrin.h>

#include <algorithm>

#include "engine/quant/bf16_panel.hpp"

namespace trilemma::engine {

void pack_bf16_panel_token_avx512(const float* x, int t, Bf16Panel& panel) {
  const int slab = t / k_bf16_slab, j = t % k_bf16_slab;
  const __m512i hi_mask = _mm512_set1_epi32(int(0xFFFF0000u)), round = _mm512_set1_epi32(0x7FFF), one = _mm512_set1_epi32(1);
  // The upper halves of 32 elements, pairs (2p, 2p + 1) in dword p.
  const __m512i pick_odd = _mm512_load_si512(k_bf16_upper_words);
  const __m512i rows = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi32(16));
  for (std::int64_t s = 0; s < panel.ksteps; ++s) {
    const std::int64_t k0 = s * k_bf16_kstep, left = std::min<std::int64_t>(k_bf16_kstep, panel.n - k0);
    const __mmask16 m0 = left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    const __mmask16 m1 = left >= 32 ? __mmask16(0xFFFF) : left <= 16 ? __mmask16(0) : __mmask16((1u << (left - 16)) - 1);
    __m512i hi[2], lo[2];
    for (int h = 0; h < 2; ++h) {
      const __m512 v = _mm512_maskz_loadu_ps(h == 0 ? m0 : m1, x + k0 + 16 * h);
      const __m512i bits = _mm512_castps_si512(v);
      hi[h] = _mm512_and_si512(bits, hi_mask);
      const __m512i l = _mm512_castps_si512(_mm512_sub_ps(v, _mm512_castsi512_ps(hi[h])));
      lo[h] = _mm512_add_epi32(l, _mm512_add_epi32(round, _mm512_and_si512(_mm512_srli_epi32(l, 16), one)));
    }
    // Dword p of each half to row p of the tile, column j: 64 bytes apart.
    _mm512_i32scatter_epi32(panel.tile(slab, s, 0) + 2 * j, rows, _mm512_permutex2var_epi16(hi[0], pick_odd, hi[1]), 4);
    _mm512_i32scatter_epi32(panel.tile(slab, s, 1) + 2 * j, rows, _mm512_permutex2var_epi16(lo[0], pick_odd, lo[1]), 4);
  }
}

}  // namespace trilemma::engine
