// AVX2 dots of Q2_K and Q3_K against Q8_K activations (the _ref twins: quant/quant_ref_k_low.cpp).
// A 32-byte plane of qs holds, at bits 2j, the low two bits of 32 consecutive codes; their two
// 16-code halves have their own sub-block scales, which madd applies to the maddubs pair sums
// in the same step; the int32 sums run over the super-block, then one convert and FMA.
#include "engine/simd/avx2/avx2_common.hpp"

#include "engine/quant/blocks.hpp"
#include "engine/quant/kernels.hpp"

namespace trilemma::engine {
namespace {

using avx2::fp16;
using avx2::hsum;

__m256i load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// x = d * sc * q - dmin * m: the codes (0..3) are unsigned, so maddubs takes them as they are;
// the min term is the activations' 16 sums (bsums) against the 16 mins, one madd.
float dot_q2_k(const BlockQ2K* b, const BlockQ8K* y, std::int64_t blocks) {
  const __m256i three = _mm256_set1_epi8(3);
  const __m128i low4 = _mm_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps(), acc_min = _mm256_setzero_ps();
  for (std::int64_t i = 0; i < blocks; ++i, ++y) {
    // The 16 scales and mins are the low and high nibbles of scales[], widened to int16.
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].scales));
    const __m256i scales16 = _mm256_cvtepu8_epi16(_mm_and_si128(packed, low4));
    const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), low4));
    __m256i isum = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i plane = load(b[i].qs + 32 * h), half = avx2::broadcast_half(scales16, h);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const __m256i q = _mm256_and_si256(_mm256_srli_epi16(plane, 2 * j), three);
        const __m256i qy = load(y->qs + 128 * h + 32 * j);
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(_mm256_maddubs_epi16(q, qy), avx2::scale_pair(half, j)));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(y->d * fp16(b[i].d)), _mm256_cvtepi32_ps(isum), acc);
    acc_min = _mm256_fmadd_ps(_mm256_set1_ps(-y->d * fp16(b[i].dmin)), _mm256_cvtepi32_ps(_mm256_madd_epi16(load(y->bsums), mins)), acc_min);
  }
  return hsum(_mm256_add_ps(acc, acc_min));
}

// x = d * s * (q - 4 * !high): the codes are signed (-4..3), so they go through maddubs with
// the sign trick, as q4_0's do.
float dot_q3_k(const BlockQ3K* b, const BlockQ8K* y, std::int64_t blocks) {
  const __m256i three = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4), zero = _mm256_setzero_si256();
  __m256 acc = _mm256_setzero_ps();
  std::uint32_t w[4];
  for (std::int64_t i = 0; i < blocks; ++i, ++y) {
    q3_k_scale_words(b[i].scales, w);  // into a register by value (a reload of the stores would stall)
    const __m128i biased = _mm_setr_epi32(int(w[0]), int(w[1]), int(w[2]), int(w[3]));
    const __m256i scales16 = _mm256_cvtepi8_epi16(_mm_sub_epi8(biased, _mm_set1_epi8(32)));
    const __m256i hmask = load(b[i].hmask);
    __m256i bit = _mm256_set1_epi8(1);  // hmask's bit 4h + j, doubled per piece
    __m256i isum = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i plane = load(b[i].qs + 32 * h), half = avx2::broadcast_half(scales16, h);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j, bit = _mm256_add_epi8(bit, bit)) {
        const __m256i low = _mm256_and_si256(_mm256_srli_epi16(plane, 2 * j), three);
        const __m256i clear = _mm256_cmpeq_epi8(_mm256_and_si256(hmask, bit), zero);
        const __m256i q = _mm256_sub_epi8(low, _mm256_and_si256(clear, four));
        const __m256i qy = load(y->qs + 128 * h + 32 * j);
        const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(qy, q));
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(pairs, avx2::scale_pair(half, j)));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(y->d * fp16(b[i].d)), _mm256_cvtepi32_ps(isum), acc);
  }
  return hsum(acc);
}

}  // namespace

float dot_q2_k_q8_k_avx2(const void* w, const void* a, std::int64_t n) {
  return dot_q2_k(static_cast<const BlockQ2K*>(w), static_cast<const BlockQ8K*>(a), n / k_qk_k);
}
float dot_q3_k_q8_k_avx2(const void* w, const void* a, std::int64_t n) {
  return dot_q3_k(static_cast<const BlockQ3K*>(w), static_cast<const BlockQ8K*>(a), n / k_qk_k);
}

}  // namespace trilemma::engine
