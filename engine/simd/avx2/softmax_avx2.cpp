// AVX2 + FMA softmax column (kv/softmax.hpp), exp by avx2::exp_ps (avx2_common.hpp): a score
// more than 87.3 below the max gets weight 0 (under 1e-38 beside the max's weight of 1).
// The sum runs in eight lanes, then across them; the tail (n % 8 scores) goes through the same
// vector code with the unused lanes masked, so no score is computed differently from another.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "engine/kv/softmax.hpp"
#include "engine/simd/avx2/avx2_common.hpp"

namespace trilemma::engine {
using avx2::exp_ps;
using avx2::first_lanes;

void softmax_avx2(float* scores, int n) {
  const int whole = n / 8 * 8;
  const __m256i tail = first_lanes(n - whole);
  __m256 vmax = _mm256_set1_ps(-INFINITY);
  for (int t = 0; t < whole; t += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(scores + t));
  float max = -INFINITY;
  {
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, vmax);
    for (float l : lanes) max = std::max(max, l);
    for (int t = whole; t < n; ++t) max = std::max(max, scores[t]);
  }
  const __m256 m = _mm256_set1_ps(max);
  __m256 vsum = _mm256_setzero_ps();
  for (int t = 0; t < whole; t += 8) {
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(scores + t), m));
    _mm256_storeu_ps(scores + t, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  if (whole < n) {
    const __m256 x = _mm256_maskload_ps(scores + whole, tail);
    const __m256 e = _mm256_and_ps(exp_ps(_mm256_sub_ps(x, m)), _mm256_castsi256_ps(tail));
    _mm256_maskstore_ps(scores + whole, tail, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  const __m256 sum = _mm256_set1_ps(avx2::hsum(vsum));
  for (int t = 0; t < whole; t += 8) _mm256_storeu_ps(scores + t, _mm256_div_ps(_mm256_loadu_ps(scores + t), sum));
  if (whole < n) _mm256_maskstore_ps(scores + whole, tail, _mm256_div_ps(_mm256_maskload_ps(scores + whole, tail), sum));
}

}  // namespace trilemma::engine
