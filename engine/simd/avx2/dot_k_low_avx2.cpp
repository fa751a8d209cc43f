// AVX2 dots of Q2_K and Q3_K against Q8_K activations (the _ref twins: quant/quant_ref_k_low.cpp).
// A 32-byte plane of qs holds, at bits 2j, the low two bits of 32 consecutive codes; their two
// 16-code halves have their own sub-block scales, which madd applies to the maddubs pair sums
// in the same step; the int32 sums run over the super-block, then one convert and FMA.
#include "engine/simd/avx2/multi_token.hpp"

#include "engine/quant/blocks.hpp"
#include "engine/quant/kernels.hpp"

namespace trilemma::engine {
namespace {

using avx2::fp16;
using avx2::reduce;
using avx2::token_block;

__m256i load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// x = d * sc * q - dmin * m, for NT tokens at once (the single dot is NT = 1): the codes
// (0..3) are unsigned, so maddubs takes them as they are; the min term is the activations'
// 16 sums (bsums) against the 16 mins, one madd.
template <int NT>
void dot_q2_k(const BlockQ2K* b, const BlockQ8K* y, std::size_t stride, std::int64_t blocks, float* out) {
  const __m256i three = _mm256_set1_epi8(3);
  const __m128i low4 = _mm_set1_epi8(0x0F);
  __m256 acc[NT], acc_min[NT];
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t) acc[t] = acc_min[t] = _mm256_setzero_ps();
  for (std::int64_t i = 0; i < blocks; ++i) {
    avx2::prefetch_ahead<NT>(b + i);
    // The 16 scales and mins are the low and high nibbles of scales[], widened to int16.
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].scales));
    const __m256i scales16 = _mm256_cvtepu8_epi16(_mm_and_si128(packed, low4));
    const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), low4));
    __m256i isum[NT];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i plane = load(b[i].qs + 32 * h), half = avx2::broadcast_half(scales16, h);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const __m256i q = _mm256_and_si256(_mm256_srli_epi16(plane, 2 * j), three), scale = avx2::scale_pair(half, j);
#pragma GCC unroll 4
        for (int t = 0; t < NT; ++t) {
          const __m256i qy = load(token_block(y, stride, t, i)->qs + 128 * h + 32 * j);
          isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(_mm256_maddubs_epi16(q, qy), scale));
        }
      }
    }
    const float d = fp16(b[i].d), dmin = fp16(b[i].dmin);
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) {
      const BlockQ8K* yt = token_block(y, stride, t, i);
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(yt->d * d), _mm256_cvtepi32_ps(isum[t]), acc[t]);
      acc_min[t] = _mm256_fmadd_ps(_mm256_set1_ps(-yt->d * dmin), _mm256_cvtepi32_ps(_mm256_madd_epi16(load(yt->bsums), mins)), acc_min[t]);
    }
  }
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t) out[t] = reduce(_mm256_add_ps(acc[t], acc_min[t]), _mm_setzero_ps());
}

// x = d * s * (q - 4 * !high), for NT tokens at once: the codes are signed (-4..3), so they
// go through maddubs with the sign trick, as q4_0's do.
template <int NT>
void dot_q3_k(const BlockQ3K* b, const BlockQ8K* y, std::size_t stride, std::int64_t blocks, float* out) {
  const __m256i three = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4), zero = _mm256_setzero_si256();
  __m256 acc[NT];
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
  std::uint32_t w[4];
  for (std::int64_t i = 0; i < blocks; ++i) {
    avx2::prefetch_ahead<NT>(b + i);
    q3_k_scale_words(b[i].scales, w);  // into a register by value (a reload of the stores would stall)
    const __m128i biased = _mm_setr_epi32(int(w[0]), int(w[1]), int(w[2]), int(w[3]));
    const __m256i scales16 = _mm256_cvtepi8_epi16(_mm_sub_epi8(biased, _mm_set1_epi8(32)));
    const __m256i hmask = load(b[i].hmask);
    __m256i bit = _mm256_set1_epi8(1);  // hmask's bit 4h + j, doubled per piece
    __m256i isum[NT];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i plane = load(b[i].qs + 32 * h), half = avx2::broadcast_half(scales16, h);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j, bit = _mm256_add_epi8(bit, bit)) {
        const __m256i low = _mm256_and_si256(_mm256_srli_epi16(plane, 2 * j), three);
        const __m256i clear = _mm256_cmpeq_epi8(_mm256_and_si256(hmask, bit), zero);
        const __m256i q = _mm256_sub_epi8(low, _mm256_and_si256(clear, four));
        const __m256i aq = _mm256_sign_epi8(q, q), scale = avx2::scale_pair(half, j);
#pragma GCC unroll 4
        for (int t = 0; t < NT; ++t) {
          const __m256i qy = load(token_block(y, stride, t, i)->qs + 128 * h + 32 * j);
          isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(_mm256_maddubs_epi16(aq, _mm256_sign_epi8(qy, q)), scale));
        }
      }
    }
    avx2::add_super_block(acc, isum, y, stride, i, fp16(b[i].d));
  }
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t) out[t] = reduce(acc[t], _mm_setzero_ps());
}


}  // namespace

float dot_q2_k_q8_k_avx2(const void* w, const void* a, std::int64_t n) {
  float out;
  dot_q2_k<1>(static_cast<const BlockQ2K*>(w), static_cast<const BlockQ8K*>(a), 0, n / k_qk_k, &out);
  return out;
}
float dot_q3_k_q8_k_avx2(const void* w, const void* a, std::int64_t n) {
  float out;
  dot_q3_k<1>(static_cast<const BlockQ3K*>(w), static_cast<const BlockQ8K*>(a), 0, n / k_qk_k, &out);
  return out;
}
void dot_multi_q2_k_q8_k_avx2(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out) {
  avx2::for_token_count(nt, [&]<int NT>() { dot_q2_k<NT>(static_cast<const BlockQ2K*>(w), static_cast<const BlockQ8K*>(a), a_stride, n / k_qk_k, out); });
}
void dot_multi_q3_k_q8_k_avx2(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out) {
  avx2::for_token_count(nt, [&]<int NT>() { dot_q3_k<NT>(static_cast<const BlockQ3K*>(w), static_cast<const BlockQ8K*>(a), a_stride, n / k_qk_k, out); });
}

}  // namespace trilemma::engine
