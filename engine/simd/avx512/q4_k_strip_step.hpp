// What the Q4_K strip kernels (simd/avx512/strip_k_avx512vnni.cpp, simd/amx/strip_k_amx.cpp)
// share: a super-block's scales and mins for 16 rows unpacked from the x16 layout
// (quant/x16_layout.hpp), and the float step that turns a token's exact integer sums into the
// `_ref` dot's float for the super-block. Include only from files compiled with AVX-512 F/BW/VL +
// VNNI and -ffp-contract=off (the step must stay unfused to keep the reference's bits).
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "engine/quant/blocks.hpp"
#include "engine/quant/x16_layout.hpp"

namespace trilemma::engine {

inline constexpr std::size_t k_q4_k_strip_codes = k_x16_rows * sizeof(BlockQ4K::qs);  // 2048 code bytes per super-block
inline constexpr std::size_t k_q4_k_strip_scales = 8 * k_x16_rows;                   // 128 uint16 (256 bytes)

// 6-bit field i (0-4) of every lane.
template <int i>
[[gnu::always_inline]] inline __m512i q4_k_field(__m512i v) {
  return _mm512_and_si512(_mm512_srli_epi32(v, 6 * i), _mm512_set1_epi32(63));
}

struct Q4KStripScales {
  __m512i sc[8];    // int32 lanes: sub-block j's 6-bit scale of each row
  __m512i mins[4];  // int16 lanes (m_2k, m_2k+1) of each row, for vpdpwssd
  __m512 d, dmin;

  [[gnu::always_inline]] explicit Q4KStripScales(const std::uint16_t* scales) {
    const auto* f = reinterpret_cast<const __m512i*>(scales + 2 * k_x16_rows);
    const __m512i v0 = _mm512_load_si512(f), v1 = _mm512_load_si512(f + 1), v2 = _mm512_load_si512(f + 2);
    sc[0] = q4_k_field<0>(v0), sc[1] = q4_k_field<1>(v0), sc[2] = q4_k_field<2>(v0), sc[3] = q4_k_field<3>(v0);
    sc[4] = q4_k_field<4>(v0), sc[5] = q4_k_field<0>(v1), sc[6] = q4_k_field<1>(v1), sc[7] = q4_k_field<2>(v1);
    const __m512i m15 = _mm512_or_si512(_mm512_srli_epi32(v0, 30), _mm512_or_si512(_mm512_slli_epi32(_mm512_srli_epi32(v1, 30), 2),
                                                                                 _mm512_slli_epi32(_mm512_srli_epi32(v2, 30), 4)));
    mins[0] = _mm512_or_si512(q4_k_field<3>(v1), _mm512_slli_epi32(q4_k_field<4>(v1), 16));
    mins[1] = _mm512_or_si512(q4_k_field<0>(v2), _mm512_slli_epi32(q4_k_field<1>(v2), 16));
    mins[2] = _mm512_or_si512(q4_k_field<2>(v2), _mm512_slli_epi32(q4_k_field<3>(v2), 16));
    mins[3] = _mm512_or_si512(q4_k_field<4>(v2), _mm512_slli_epi32(m15, 16));
    d = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales)));
    dmin = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales + k_x16_rows)));
  }

  // The super-block's float for 16 rows and token y, from sum = sum_j sc_j * (sub-block j's
  // integer dot): the reference's y.d * (d * sum - dmin * sum_j m_j * s_j), s_j the token's
  // sub-block sums (its 16-code sums pairwise).
  [[gnu::always_inline]] __m512 step(__m512i sum, const BlockQ8K& y) const {
    const auto* bs = reinterpret_cast<const __m128i*>(y.bsums);
    const __m512i pairs = _mm512_castsi128_si512(_mm_hadd_epi16(_mm_loadu_si128(bs), _mm_loadu_si128(bs + 1)));
    __m512i m = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) m = _mm512_dpwssd_epi32(m, mins[k], _mm512_permutexvar_epi32(_mm512_set1_epi32(k), pairs));
    const __m512 inner = _mm512_sub_ps(_mm512_mul_ps(d, _mm512_cvtepi32_ps(sum)), _mm512_mul_ps(dmin, _mm512_cvtepi32_ps(m)));
    return _mm512_mul_ps(_mm512_set1_ps(y.d), inner);
  }
};

}  // namespace trilemma::engine
