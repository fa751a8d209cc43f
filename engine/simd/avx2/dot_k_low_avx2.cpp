// AVX2 dots of Q2_K and Q3_K against Q8_0 activations (the _ref twins: quant/quant_ref_k_low.cpp).
// A 32-byte plane of qs holds, at bits 2j, the low two bits of the 32 consecutive codes that
// one Q8_0 block meets; its two 16-code halves have their own sub-block scales, which madd
// applies to the maddubs pair sums in the same step, so each block's integer sum is exact.
#include "engine/simd/avx2/avx2_common.hpp"

#include "engine/quant/blocks.hpp"
#include "engine/quant/kernels.hpp"

namespace trilemma::engine {
namespace {

using avx2::fp16;
using avx2::hsum;

// Lanes 0-7 (the first 16 codes' pair sums) times `lo`, lanes 8-15 times `hi`.
__m256i scaled(__m256i pairs, int lo, int hi) {
  return _mm256_madd_epi16(pairs, _mm256_set_m128i(_mm_set1_epi16(std::int16_t(hi)), _mm_set1_epi16(std::int16_t(lo))));
}

__m256i load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// x = d * sc * q - dmin * m: the codes (0..3) are unsigned, so maddubs takes them as they are;
// the min term needs the activations' sums per 16, from maddubs against ones.
float dot_q2_k(const BlockQ2K* b, const BlockQ8_0* y, std::int64_t blocks) {
  const __m256i three = _mm256_set1_epi8(3), ones8 = _mm256_set1_epi8(1);
  __m256 acc = _mm256_setzero_ps(), acc_min = _mm256_setzero_ps();
  for (std::int64_t i = 0; i < blocks; ++i) {
    const float d = fp16(b[i].d), dmin = fp16(b[i].dmin);
    const std::uint8_t* sc = b[i].scales;
    for (int h = 0; h < 2; ++h) {
      const __m256i plane = load(b[i].qs + 32 * h);
      for (int j = 0; j < 4; ++j, ++y) {
        const int t = 8 * h + 2 * j;
        const __m256i q = _mm256_and_si256(_mm256_srli_epi16(plane, 2 * j), three);
        const __m256i qy = load(y->qs);
        const __m256i sum = scaled(_mm256_maddubs_epi16(q, qy), sc[t] & 0xF, sc[t + 1] & 0xF);
        const __m256i mins = scaled(_mm256_maddubs_epi16(ones8, qy), sc[t] >> 4, sc[t + 1] >> 4);
        const float dy = fp16(y->d);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(dy * d), _mm256_cvtepi32_ps(sum), acc);
        acc_min = _mm256_fmadd_ps(_mm256_set1_ps(-dy * dmin), _mm256_cvtepi32_ps(mins), acc_min);
      }
    }
  }
  return hsum(_mm256_add_ps(acc, acc_min));
}

// x = d * s * (q - 4 * !high): the codes are signed (-4..3), so they go through maddubs with
// the sign trick, as q4_0's do.
float dot_q3_k(const BlockQ3K* b, const BlockQ8_0* y, std::int64_t blocks) {
  const __m256i three = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4), zero = _mm256_setzero_si256();
  __m256 acc = _mm256_setzero_ps();
  int s[16];
  for (std::int64_t i = 0; i < blocks; ++i) {
    const float d = fp16(b[i].d);
    q3_k_scales(b[i].scales, s);
    const __m256i hmask = load(b[i].hmask);
    for (int h = 0; h < 2; ++h) {
      const __m256i plane = load(b[i].qs + 32 * h);
      for (int j = 0; j < 4; ++j, ++y) {
        const int t = 8 * h + 2 * j;
        const __m256i low = _mm256_and_si256(_mm256_srli_epi16(plane, 2 * j), three);
        const __m256i bit = _mm256_set1_epi8(std::int8_t(1 << (4 * h + j)));
        const __m256i clear = _mm256_cmpeq_epi8(_mm256_and_si256(hmask, bit), zero);
        const __m256i q = _mm256_sub_epi8(low, _mm256_and_si256(clear, four));
        const __m256i qy = load(y->qs);
        const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(qy, q));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d * fp16(y->d)), _mm256_cvtepi32_ps(scaled(pairs, s[t], s[t + 1])), acc);
      }
    }
  }
  return hsum(acc);
}

}  // namespace

float dot_q2_k_q8_0_avx2(const void* w, const void* a, std::int64_t n) {
  return dot_q2_k(static_cast<const BlockQ2K*>(w), static_cast<const BlockQ8_0*>(a), n / k_qk_k);
}
float dot_q3_k_q8_0_avx2(const void* w, const void* a, std::int64_t n) {
  return dot_q3_k(static_cast<const BlockQ3K*>(w), static_cast<const BlockQ8_0*>(a), n / k_qk_k);
}

}  // namespace trilemma::engine
