// Small AVX2/F16C helpers shared by the AVX2 kernel files. Include only from files compiled
// with -mavx2 -mfma -mf16c (see engine/CMakeLists.txt).
#pragma once
#include <immintrin.h>

#include <cstdint>

namespace trilemma::engine::avx2 {

// Sum of the 8 lanes.
inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline float fp16(std::uint16_t h) { return _cvtsh_ss(h); }

// exp of eight floats, within 2 ulp of std::exp on [-87.3, 88.3] (tested through its users):
//   n = round(x / ln 2), r = x - n ln 2 (ln 2 in two parts, so r is exact to float),
//   exp(r) by Cephes expf's degree-6 polynomial on |r| <= ln 2 / 2, times 2^n built in the
//   exponent bits. Below -87.3 the result would be denormal and is flushed to 0; above 88.3 it
//   saturates at exp(88.3) (2e38) instead of overflowing to infinity.
inline __m256 exp_ps(__m256 x) {
  const __m256 min_x = _mm256_set1_ps(-87.3f);
  const __m256 underflow = _mm256_cmp_ps(x, min_x, _CMP_LT_OQ);
  x = _mm256_min_ps(_mm256_max_ps(x, min_x), _mm256_set1_ps(88.3f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i pow2n = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(underflow, _mm256_mul_ps(p, _mm256_castsi256_ps(pow2n)));
}

// Sixteen int16 sub-block scales (lanes 0-7 of `half` hold scales 8h..8h+7 in both 128-bit
// halves, from broadcast_half) -> lanes 0-7 = scale 8h + 2k, lanes 8-15 = scale 8h + 2k + 1:
// the madd multipliers of the 32 codes that span sub-blocks 8h + 2k and 8h + 2k + 1.
inline __m256i broadcast_half(__m256i scales16, int h) {
  return _mm256_broadcastsi128_si256(h == 0 ? _mm256_castsi256_si128(scales16) : _mm256_extracti128_si256(scales16, 1));
}
inline __m256i scale_pair(__m256i half, int k) {
  const auto pick = [](int e) { return _mm_set1_epi16(std::int16_t(((2 * e + 1) << 8) | (2 * e))); };
  return _mm256_shuffle_epi8(half, _mm256_insertf128_si256(_mm256_castsi128_si256(pick(2 * k)), pick(2 * k + 1), 1));
}

// Eight vectors -> one vector of their eight sums, lane p = ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7))
// of v[p]'s lanes a0..a7. sum1 is the same tree for one vector, so a dot reduced alone gets
// the bits it gets reduced among seven others (the KV score kernels rely on it).
inline __m256 sum8(const __m256 v[8]) {
  const __m256 t0 = _mm256_hadd_ps(v[0], v[1]), t1 = _mm256_hadd_ps(v[2], v[3]);
  const __m256 t2 = _mm256_hadd_ps(v[4], v[5]), t3 = _mm256_hadd_ps(v[6], v[7]);
  const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
  return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}
inline float sum1(__m256 v) {
  alignas(32) float a[8];
  _mm256_store_ps(a, v);
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

// Lanes [0, count) set, for masked loads and stores of a tail.
inline __m256i first_lanes(int count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

}  // namespace trilemma::engine::avx2
