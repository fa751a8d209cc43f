// AVX2 + FMA column of the FFN gate (quant/activation.hpp): the _ref arithmetic (multiply by
// 1 / (1 + exp(-x)), then by the up branch) with exp from avx2::exp_ps, eight elements at a
// time; the tail goes through the same code with masked loads and stores.
#include <immintrin.h>

#include "engine/quant/activation.hpp"
#include "engine/simd/avx2/avx2_common.hpp"

namespace trilemma::engine {
namespace {

__m256 swiglu8(__m256 x, __m256 up) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = avx2::exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), x));
  return _mm256_mul_ps(_mm256_mul_ps(x, _mm256_div_ps(one, _mm256_add_ps(one, e))), up);
}

}  // namespace

void swiglu_avx2(float* h, const float* up, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(h + i, swiglu8(_mm256_loadu_ps(h + i), _mm256_loadu_ps(up + i)));
  if (i < n) {
    const __m256i mask = avx2::first_lanes(int(n - i));
    _mm256_maskstore_ps(h + i, mask, swiglu8(_mm256_maskload_ps(h + i, mask), _mm256_maskload_ps(up + i, mask)));
  }
}

}  // namespace trilemma::engine
