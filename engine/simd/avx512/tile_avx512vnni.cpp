// AVX-512 VNNI tiles (the `tile_x4_avx512` column of quant/kernel_table.cpp): one weight row in
// the x4 layout (quant/x4_layout.hpp) against up to 8 tokens of a Q8 panel (q8_panel.hpp).
// Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni; called only when the CPU has them.
//
// vpdpbusd multiplies unsigned by signed bytes and sums groups of four into int32 lanes without
// saturation. A group of 4 blocks is two 64-byte halves (codes 0..15 and 16..31 of each block),
// so two vpdpbusd leave block k's integer sum in lanes 4k..4k+3:
//   signed weights (Q8_0 codes, or Q4_0 nibbles - 8; used with 3+ tokens): the activations
//         are the unsigned operand (y + 128); the lanes start from -128 * sum(w), computed
//         once per group for all tokens, and end at sum(w y). Two panel loads per token.
//   unsigned nibbles (Q4_0 with 1-2 tokens, i.e. decode): q in [0, 15] against signed y; the
//         lanes start from the panel's -8 * sum(y) and end at sum((q - 8) y). One more load
//         per token, but no per-group correction work, which decode cannot amortize.
// Then one convert, a scale multiply (dx * dy, spread to the 4 lanes of each block) and an FMA
// per (group, token). Integer sums are exact; only the float summation order differs from _ref.
//
// Batch invariance: a token's result does not depend on how many tokens share the call, so a
// batched prefill or speculative verify pass gives the single-token decode's logits bit for
// bit. Both Q4_0 variants leave the same int32 lanes (the panel's init is per lane), and every
// token count uses the same k_sets accumulator chains, groups in turn, summed in one order.
#include <immintrin.h>

#include "engine/quant/blocks.hpp"
#include "engine/quant/kernels.hpp"
#include "engine/quant/q8_panel.hpp"
#include "engine/quant/x4_layout.hpp"

namespace trilemma::engine {
namespace {

// Group g of a row against nt tokens: acc[j] += the group's share of dot(row, token t0 + j).
template <bool q8, int nt>
__attribute__((always_inline)) inline void group_step(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t g,
                                                      const Q8Panel& panel, int t0, __m512i spread, __m512 (&acc)[nt]) {
  constexpr bool signed_w = q8 || nt > 2;
  const std::uint8_t* grp = codes + std::size_t(g) * (q8 ? 128 : 64);  // 64-byte aligned
  const __m128 dx = _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales + 4 * g)));
  __m512i lo, hi, w_init = _mm512_setzero_si512();
  if constexpr (q8) {
    lo = _mm512_load_si512(grp);
    hi = _mm512_load_si512(grp + 64);
  } else {
    const __m512i v = _mm512_load_si512(grp);
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    lo = _mm512_and_si512(v, low4);
    hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low4);
    if constexpr (signed_w) {
      lo = _mm512_sub_epi8(lo, _mm512_set1_epi8(8));
      hi = _mm512_sub_epi8(hi, _mm512_set1_epi8(8));
    }
  }
  if constexpr (signed_w) {
    const __m512i ones = _mm512_set1_epi8(1);
    const __m512i w_sum = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, lo), ones, hi);
    w_init = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_slli_epi32(w_sum, 7));
  }
#pragma GCC unroll 8  // -O2 does not unroll: the accumulators would live in memory
  for (int j = 0; j < nt; ++j) {
    const std::size_t at = std::size_t(t0 + j) * std::size_t(panel.groups) + std::size_t(g);
    __m512i sum;
    if constexpr (signed_w) {
      sum = _mm512_dpbusd_epi32(w_init, _mm512_loadu_si512(&panel.u8[at * 128]), lo);
      sum = _mm512_dpbusd_epi32(sum, _mm512_loadu_si512(&panel.u8[at * 128 + 64]), hi);
    } else {
      sum = _mm512_dpbusd_epi32(_mm512_loadu_si512(&panel.init[at * 16]), lo, _mm512_loadu_si512(&panel.s8[at * 128]));
      sum = _mm512_dpbusd_epi32(sum, hi, _mm512_loadu_si512(&panel.s8[at * 128 + 64]));
    }
    const __m128 s = _mm_mul_ps(dx, _mm_loadu_ps(&panel.dy[at * 4]));
    acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_permutexvar_ps(spread, _mm512_castps128_ps512(s)), acc[j]);
  }
}

// Accumulator chains per token. The same for every token count (batch invariance, above): 2
// chains hide the FMA latency for decode (1 token) and keep 8 tokens' 16 accumulators in zmm
// registers.
constexpr int k_sets = 2;

// One row x nt tokens; nt is a template parameter so the accumulators stay in registers and
// the token loop unrolls. k_sets accumulator sets take groups in turn. (Taking several rows at
// once instead would share the panel loads, but splits the weight stream into short runs the
// hardware prefetcher does not follow: measured 25% slower decode.)
template <bool q8, int nt, int sets = k_sets>
void tile_n(const std::uint8_t* codes, const std::uint16_t* scales, const Q8Panel& panel, int t0, float* out,
            std::size_t out_stride) {
  __m512 acc[sets][nt];
  for (auto& set : acc)
#pragma GCC unroll 8
    for (int j = 0; j < nt; ++j) set[j] = _mm512_setzero_ps();
  // Lane l <- scale l / 4. (Not a global: static initialisers would run AVX-512 code on CPUs
  // without it.)
  const __m512i spread = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
  std::int64_t g = 0;
  if constexpr (sets > 1)
    for (; g + sets <= panel.groups; g += sets)
#pragma GCC unroll 4
      for (int k = 0; k < sets; ++k) group_step<q8, nt>(codes, scales, g + k, panel, t0, spread, acc[k]);
  for (; g < panel.groups; ++g) group_step<q8, nt>(codes, scales, g, panel, t0, spread, acc[0]);
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) {
    __m512 total = acc[0][j];
    for (int k = 1; k < sets; ++k) total = _mm512_add_ps(total, acc[k][j]);
    out[std::size_t(j) * out_stride] = _mm512_reduce_add_ps(total);
  }
}

template <bool q8>
void tile(const std::uint8_t* codes, std::size_t code_stride, const std::uint16_t* scales, std::size_t scale_stride, int rows,
          const Q8Panel& panel, int t0, int nt, float* out, std::size_t out_stride) {
  for (int r = 0; r < rows; ++r) {
    const std::uint8_t* c = codes + std::size_t(r) * code_stride;
    const std::uint16_t* sc = scales + std::size_t(r) * scale_stride;
    float* o = out + r;
    switch (nt) {
      case 1: tile_n<q8, 1>(c, sc, panel, t0, o, out_stride); break;
      case 2: tile_n<q8, 2>(c, sc, panel, t0, o, out_stride); break;
      case 3: tile_n<q8, 3>(c, sc, panel, t0, o, out_stride); break;
      case 4: tile_n<q8, 4>(c, sc, panel, t0, o, out_stride); break;
      case 5: tile_n<q8, 5>(c, sc, panel, t0, o, out_stride); break;
      case 6: tile_n<q8, 6>(c, sc, panel, t0, o, out_stride); break;
      case 7: tile_n<q8, 7>(c, sc, panel, t0, o, out_stride); break;
      default: tile_n<q8, 8>(c, sc, panel, t0, o, out_stride); break;
    }
  }
}

}  // namespace

void tile_q8_0_x4_avx512vnni(const std::uint8_t* codes, std::size_t code_stride, const std::uint16_t* scales,
                             std::size_t scale_stride, int rows, const Q8Panel& panel, int t0, int nt, float* out,
                             std::size_t out_stride) {
  tile<true>(codes, code_stride, scales, scale_stride, rows, panel, t0, nt, out, out_stride);
}
void tile_q4_0_x4_avx512vnni(const std::uint8_t* codes, std::size_t code_stride, const std::uint16_t* scales,
                             std::size_t scale_stride, int rows, const Q8Panel& panel, int t0, int nt, float* out,
                             std::size_t out_stride) {
  tile<false>(codes, code_stride, scales, scale_stride, rows, panel, t0, nt, out, out_stride);
}

}  // namespace trilemma::engine
