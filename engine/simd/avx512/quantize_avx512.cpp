// AVX-512 twin of quantize_row_q8_k (the `quantize_avx512` column of quant/kernel_table.cpp):
// the k-quants' activations, quantized once per prompt token and matrix input. The scalar
// reference took 5-6% of a Q4_K_M prefill. Compiled with -mavx512f -mavx512bw -mavx512vl;
// called only when the CPU has them.
//
// Byte for byte the reference (tested): the same largest-magnitude element (the first one, NaN
// never wins), the same -127 / max scale, products rounded to nearest even as nearbyint does
// under the default rounding mode, the same clamp and NaN -> 0, integer sums of each 16 codes.
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

}  // namespace trilemma::engine
