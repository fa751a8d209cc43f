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

}  // namespace trilemma::engine::avx2
