// AVX-512 twins of quantize_row_q8_k and quantize_row_q8_0 (the `quantize_avx512` column of
// quant/kernel_table.cpp): activations, quantized once per prompt token and matrix input. The
// scalar references took 5-6% of a Q4_K_M prefill (q8_k) and 11% of a 512-token q4_0 prefill
// (q8_0). Compiled with -mavx512f -mavx512bw -mavx512vl -mf16c; called only when the CPU has
// them. Neither includes quant/fp16.hpp: its inline functions compiled here with AVX-512 flags
// could be the copy the linker keeps for every caller.
//
// Byte for byte the references (tested).
// q8_k: the same largest-magnitude element (the first one, NaN never wins), the same -127 / max
//       scale, products rounded to nearest even as nearbyint does under the default rounding
//       mode, the same clamp and NaN -> 0, integer sums of each 16 codes.
// q8_0: the same amax / 127 scale (F16C's round-to-nearest-even conversion, which is the
//       reference's for every non-NaN value), the same clamp to +-127 with NaN -> 127, the same
//       half-away-from-zero rounding from the truncated value and its fraction. A block holding
//       a NaN goes to the reference: its running maximum restarts after a NaN, an order that a
//       lane-parallel maximum does not keep.
#include <immintrin.h>

#include <cmath>

#include "engine/quant/blocks.hpp"
#include "engine/quant/kernels.hpp"

namespace trilemma::engine {

void quantize_row_q8_k_avx512(const float* x, void* y, std::int64_t n) {
  auto* b = static_cast<BlockQ8K*>(y);
  const __m512 hi = _mm512_set1_ps(127.0f), lo = _mm512_set1_ps(-127.0f);
  for (std::int64_t i = 0; i < n / k_qk_k; ++i, x += k_qk_k) {
    __m512 amax16 = _mm512_setzero_ps();
    for (int k = 0; k < k_qk_k / 16; ++k)  // maxps returns its second operand when one is NaN
      amax16 = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + 16 * k)), amax16);
    const float amax = _mm512_reduce_max_ps(amax16);
    BlockQ8K& blk = b[i];
    blk = BlockQ8K{};
    if (amax == 0.0f || !std::isfinite(amax)) continue;
    float max = 0.0f;  // the first element whose magnitude is amax, sign included
    for (int k = 0; k < k_qk_k / 16; ++k) {
      const __mmask16 hit = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + 16 * k)), _mm512_set1_ps(amax), _CMP_EQ_OQ);
      if (hit != 0) {
        max = x[16 * k + __builtin_ctz(hit)];
        break;
      }
    }
    const float iscale = -127.0f / max;
    const __m512 scale = _mm512_set1_ps(iscale);
    for (int k = 0; k < k_qk_k / 16; ++k) {
      const __m512 v = _mm512_roundscale_ps(_mm512_mul_ps(scale, _mm512_loadu_ps(x + 16 * k)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __mmask16 number = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
      const __m512i q = _mm512_cvtps_epi32(_mm512_maskz_mov_ps(number, _mm512_min_ps(_mm512_max_ps(v, lo), hi)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(blk.qs + 16 * k), _mm512_cvtepi32_epi8(q));
      blk.bsums[k] = std::int16_t(_mm512_reduce_add_epi32(q));
    }
    blk.d = 1.0f / iscale;
  }
}

void quantize_row_q8_0_avx512(const float* x, void* y, std::int64_t n) {
  auto* b = static_cast<BlockQ8_0*>(y);
  const __m512 hi = _mm512_set1_ps(127.0f), lo = _mm512_set1_ps(-127.0f), half = _mm512_set1_ps(0.5f);
  const __m512 minus_half = _mm512_set1_ps(-0.5f);
  const __m512i one = _mm512_set1_epi32(1);
  for (std::int64_t i = 0; i < n / k_qk8_0; ++i, x += k_qk8_0) {
    const __m512 x0 = _mm512_loadu_ps(x), x1 = _mm512_loadu_ps(x + 16);
    if ((_mm512_cmp_ps_mask(x0, x0, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(x1, x1, _CMP_UNORD_Q)) != 0) {
      quantize_row_q8_0(x, &b[i], k_qk8_0);
      continue;
    }
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(x0), _mm512_abs_ps(x1)));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = std::uint16_t(_cvtss_sh(d, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __m512 vid = _mm512_set1_ps(id);
    for (int h = 0; h < 2; ++h) {
      // min/max return their second operand for NaN (an infinity times a zero scale): +127.
      const __m512 v = _mm512_max_ps(_mm512_min_ps(_mm512_mul_ps(h == 0 ? x0 : x1, vid), hi), lo);
      __m512i q = _mm512_cvttps_epi32(v);
      const __m512 frac = _mm512_sub_ps(v, _mm512_cvtepi32_ps(q));
      q = _mm512_mask_add_epi32(q, _mm512_cmp_ps_mask(frac, half, _CMP_GE_OQ), q, one);
      q = _mm512_mask_sub_epi32(q, _mm512_cmp_ps_mask(frac, minus_half, _CMP_LE_OQ), q, one);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(b[i].qs + 16 * h), _mm512_cvtepi32_epi8(q));
    }
  }
}

}  // namespace trilemma::engine
