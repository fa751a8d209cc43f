// AVX-512 VNNI strip kernel: 16 Q4_0 weight rows in the x16 layout (quant/x16_layout.hpp) against
// up to 8 tokens of a Q8 panel (q8_panel.hpp). Compiled with -mavx512f -mavx512bw -mavx512vl
// -mavx512vnni; called only when the CPU has them.
//
// Lane r of every vector is row r. Per block and token: eight vpdpbusd, each multiplying the
// unsigned nibbles of 4 codes of all 16 rows by one broadcast 4-byte piece of the signed
// activation block, starting from the block's zero point (-8 * sum of its activation codes, the
// same for every row), leave the block's exact integer dot in every lane; then one convert, one
// scale multiply (16 row scales x the token's scale) and one FMA finish 16 rows. The x4 tile
// spends its convert, scale and FMA per row and 4 blocks; here they serve 16 rows and 1 block,
// a quarter of the float work per weight.
//
// Batch invariance: a token's 16 results are summed over blocks in one fixed order (two chains,
// even and odd blocks, added at the end) whatever the token count, so decode and a batched
// prefill agree bit for bit.
#include <immintrin.h>

#include "engine/quant/kernels.hpp"
#include "engine/quant/q8_panel.hpp"
#include "engine/quant/x16_layout.hpp"

namespace trilemma::engine {
namespace {

// Block b of the strip against nt tokens: acc[j] += dot over the block, 16 rows at once.
template <int nt>
__attribute__((always_inline)) inline void block_step(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t b,
                                                      const Q8Panel& panel, int t0, __m512 (&acc)[nt]) {
  const std::uint8_t* blk = codes + std::size_t(b) * 256;  // 64-byte aligned
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  __m512i lo[4], hi[4];
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    const __m512i v = _mm512_load_si512(blk + 64 * k);
    lo[k] = _mm512_and_si512(v, low4);
    hi[k] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
  }
  const __m512 dx = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales + 16 * b)));
  const std::int64_t g = b / 4, k = b % 4;
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) {
    const std::size_t at = std::size_t(t0 + j) * std::size_t(panel.groups) + std::size_t(g);
    // Codes 0..15 of block k of the group at 16k, codes 16..31 at 64 + 16k (q8_panel.hpp).
    const auto* y = reinterpret_cast<const std::int32_t*>(&panel.s8[at * 128 + 16 * std::size_t(k)]);
    __m512i sum = _mm512_set1_epi32(panel.zero[at * 4 + std::size_t(k)]);
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
      sum = _mm512_dpbusd_epi32(sum, lo[q], _mm512_set1_epi32(y[q]));
      sum = _mm512_dpbusd_epi32(sum, hi[q], _mm512_set1_epi32(y[16 + q]));
    }
    const __m512 s = _mm512_mul_ps(dx, _mm512_set1_ps(panel.dy[at * 4 + std::size_t(k)]));
    acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), s, acc[j]);
  }
}

template <int nt>
void strip_n(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, const Q8Panel& panel, int t0,
             float* out, std::size_t out_stride) {
  __m512 even[nt], odd[nt];
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) even[j] = _mm512_setzero_ps(), odd[j] = _mm512_setzero_ps();
  std::int64_t b = 0;
  for (; b + 2 <= blocks; b += 2) {
    block_step<nt>(codes, scales, b, panel, t0, even);
    block_step<nt>(codes, scales, b + 1, panel, t0, odd);
  }
  if (b < blocks) block_step<nt>(codes, scales, b, panel, t0, even);
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) _mm512_storeu_ps(out + std::size_t(j) * out_stride, _mm512_add_ps(even[j], odd[j]));
}

}  // namespace

void strip_q4_0_x16_avx512vnni(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int strips,
                               const Q8Panel& panel, int t0, int nt, float* out, std::size_t out_stride) {
  for (int s = 0; s < strips; ++s) {
    const std::uint8_t* c = codes + std::size_t(s) * x16_strip_code_bytes(blocks);
    const std::uint16_t* sc = scales + std::size_t(s) * std::size_t(blocks) * k_x16_rows;
    float* o = out + std::size_t(s) * k_x16_rows;
    switch (nt) {
      case 1: strip_n<1>(c, sc, blocks, panel, t0, o, out_stride); break;
      case 2: strip_n<2>(c, sc, blocks, panel, t0, o, out_stride); break;
      case 3: strip_n<3>(c, sc, blocks, panel, t0, o, out_stride); break;
      case 4: strip_n<4>(c, sc, blocks, panel, t0, o, out_stride); break;
      case 5: strip_n<5>(c, sc, blocks, panel, t0, o, out_stride); break;
      case 6: strip_n<6>(c, sc, blocks, panel, t0, o, out_stride); break;
      case 7: strip_n<7>(c, sc, blocks, panel, t0, o, out_stride); break;
      default: strip_n<8>(c, sc, blocks, panel, t0, o, out_stride); break;
    }
  }
}

}  // namespace trilemma::engine
