// AVX-512 VNNI strip kernels: strips of 16 Q4_0 or Q8_0 weight rows in the x16 layout
// (quant/x16_layout.hpp) against tokens of a Q8 panel (q8_panel.hpp), in slabs of up to 8. Compiled with
// -mavx512f -mavx512bw -mavx512vl -mavx512vnni; called only when the CPU has them.
//
// Lane r of every vector is row r. Per block and token, eight vpdpbusd each multiply 4 codes of
// all 16 rows by one broadcast 4-byte piece of the activation block, and leave the block's exact
// integer dot in every lane; then one convert, one scale multiply (16 row scales x the token's
// scale) and one FMA finish 16 rows. The x4 tile spends its convert, scale and FMA per row and 4
// blocks; here they serve 16 rows and 1 block, a quarter of the float work per weight.
//   Q4_0: the unsigned nibbles against the signed activations (panel.s8), starting from the
//         block's zero point -8 * sum(y) (panel.zero), the same for every row.
//   Q8_0: signed weights, so the activations are the unsigned operand (panel.u8 = y + 128),
//         starting from -128 * sum(w) per row: eight more vpdpbusd per block against ones,
//         shared by the tokens.
//
// Batch invariance: a token's 16 results are summed over blocks in one fixed order (two chains,
// even and odd blocks, added at the end) whatever the token count, so decode and a batched
// prefill agree bit for bit.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "engine/quant/kernels.hpp"
#include "engine/quant/q8_panel.hpp"
#include "engine/quant/x16_layout.hpp"
#include "engine/simd/avx512/strip_slabs.hpp"

namespace trilemma::engine {
namespace {

// Code bytes of one block of 16 rows.
template <bool q8>
constexpr std::size_t k_block_bytes = q8 ? 512 : 256;
// Decode streams each strip once (codes, and beside them its scales): blocks this far ahead are
// requested explicitly, as the f16 rows and k-quant dots do (a prefetch past the end is
// harmless). 1.1B decode, 2 threads, alternated with no prefetch: q8_0 24.5 -> 26.3 tok/s, q4_0
// 42.7 -> 44.5 at 4 blocks ahead; 16 blocks gained nothing.
constexpr std::size_t k_prefetch_blocks = 4;

// Block b of the strip against nt tokens: acc[j] += dot over the block, 16 rows at once.
template <bool q8, int nt>
__attribute__((always_inline)) inline void block_step(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t b,
                                                      const Q8Panel& panel, int t0, __m512 (&acc)[nt]) {
  const std::uint8_t* blk = codes + std::size_t(b) * k_block_bytes<q8>;  // 64-byte aligned
  if constexpr (nt == 1) {  // decode: the strip's codes and scales this many blocks ahead are requested now
    for (std::size_t l = 0; l < k_block_bytes<q8>; l += 64)
      _mm_prefetch(reinterpret_cast<const char*>(blk) + k_prefetch_blocks * k_block_bytes<q8> + l, _MM_HINT_T0);
    if (b % 2 == 0) _mm_prefetch(reinterpret_cast<const char*>(scales + 16 * (b + k_prefetch_blocks)), _MM_HINT_T0);
  }
  // w[q] pairs with activation bytes 4q..4q+3 of the block (q < 4: codes 0..15, panel offset
  // 16k + 4q; q >= 4: codes 16..31, panel offset 64 + 16k + 4(q - 4)).
  __m512i w[8];
  __m512i init = _mm512_setzero_si512();
  if constexpr (q8) {
    const __m512i ones = _mm512_set1_epi8(1);
    __m512i w_sum = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q) {
      w[q] = _mm512_load_si512(blk + 64 * q);
      w_sum = _mm512_dpbusd_epi32(w_sum, ones, w[q]);
    }
    init = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(w_sum, 7));
  } else {
    const __m512i low4 = _mm512_set1_epi8(0x0F);
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
      const __m512i v = _mm512_load_si512(blk + 64 * q);
      w[q] = _mm512_and_si512(v, low4);
      w[4 + q] = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
    }
  }
  const __m512 dx = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales + 16 * b)));
  const std::int64_t g = b / 4, k = b % 4;
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) {
    const std::size_t at = std::size_t(t0 + j) * std::size_t(panel.groups) + std::size_t(g);
    const std::size_t y_at = at * 128 + 16 * std::size_t(k);
    const auto* y = static_cast<const std::uint8_t*>(q8 ? static_cast<const void*>(&panel.u8[y_at]) : &panel.s8[y_at]);
    __m512i sum = q8 ? init : _mm512_set1_epi32(panel.zero[at * 4 + std::size_t(k)]);
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q) {
      std::int32_t piece;  // bytes 4q..4q+3 of the block, through memcpy: the panel holds bytes
      std::memcpy(&piece, y + (q < 4 ? 4 * q : 64 + 4 * (q - 4)), 4);
      const __m512i yq = _mm512_set1_epi32(piece);
      sum = q8 ? _mm512_dpbusd_epi32(sum, yq, w[q]) : _mm512_dpbusd_epi32(sum, w[q], yq);
    }
    const __m512 s = _mm512_mul_ps(dx, _mm512_set1_ps(panel.dy[at * 4 + std::size_t(k)]));
    acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), s, acc[j]);
  }
}

template <bool q8, int nt>
void strip_n(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, const Q8Panel& panel, int t0,
             float* out, std::size_t out_stride) {
  __m512 even[nt], odd[nt];
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) even[j] = _mm512_setzero_ps(), odd[j] = _mm512_setzero_ps();
  std::int64_t b = 0;
  for (; b + 2 <= blocks; b += 2) {
    block_step<q8, nt>(codes, scales, b, panel, t0, even);
    block_step<q8, nt>(codes, scales, b + 1, panel, t0, odd);
  }
  if (b < blocks) block_step<q8, nt>(codes, scales, b, panel, t0, even);
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) _mm512_storeu_ps(out + std::size_t(j) * out_stride, _mm512_add_ps(even[j], odd[j]));
}

template <bool q8>
void strips(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int count, const Q8Panel& panel, int t0,
            int nt, float* out, std::size_t out_stride) {
  const std::size_t strip_bytes = std::size_t(blocks) * k_block_bytes<q8>;
  for_strip_slabs(count, strip_bytes, nt, [&](int s, int t, int n) {
    const std::uint8_t* c = codes + std::size_t(s) * strip_bytes;
    const std::uint16_t* sc = scales + std::size_t(s) * std::size_t(blocks) * k_x16_rows;
    float* o = out + std::size_t(t) * out_stride + std::size_t(s) * k_x16_rows;
    with_slab_tokens(n, [&]<int nt_>() { strip_n<q8, nt_>(c, sc, blocks, panel, t0 + t, o, out_stride); });
  });
}

}  // namespace

void strip_q4_0_x16_avx512vnni(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int count,
                               const Q8Panel& panel, int t0, int nt, float* out, std::size_t out_stride) {
  strips<false>(codes, scales, blocks, count, panel, t0, nt, out, out_stride);
}
void strip_q8_0_x16_avx512vnni(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int count,
                               const Q8Panel& panel, int t0, int nt, float* out, std::size_t out_stride) {
  strips<true>(codes, scales, blocks, count, panel, t0, nt, out, out_stride);
}

}  // namespace trilemma::engine
