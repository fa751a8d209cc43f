// Helpers of the multi-token k-quant dots (kernels.hpp DotMultiFn): token t's activation
// blocks, the one reduction tree every token's result takes, and nt as a template argument.
// Include only from files compiled with -mavx2 -mfma -mf16c.
#pragma once
#include <cstddef>

#include "engine/quant/blocks.hpp"
#include "engine/simd/avx2/avx2_common.hpp"

namespace trilemma::engine::avx2 {

// Token t's activation block i (tokens `stride` bytes apart).
inline const BlockQ8K* token_block(const BlockQ8K* y, std::size_t stride, int t, std::int64_t i) {
  return reinterpret_cast<const BlockQ8K*>(reinterpret_cast<const std::byte*>(y) + std::size_t(t) * stride) + i;
}

// acc (8 lanes) + acc_min (4 lanes) -> one float, the same tree for every caller.
inline float reduce(__m256 acc, __m128 acc_min) {
  __m128 s = _mm_add_ps(_mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1)), acc_min);
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

// The float step of a super-block for each token: acc[t] += y_t.d * d * isum[t].
template <int NT>
inline void add_super_block(__m256 (&acc)[NT], const __m256i (&isum)[NT], const BlockQ8K* y, std::size_t stride,
                            std::int64_t i, float d) {
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t)
    acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(token_block(y, stride, t, i)->d * d), _mm256_cvtepi32_ps(isum[t]), acc[t]);
}

// Decode (one token) streams each weight row once: the bytes a few super-blocks ahead are
// requested now (rows lie back to back, so the stream runs on into the next row; a prefetch
// past a matrix's end is harmless). On a 2-vCPU Xeon (session 22) the AVX-512 Q4_K and Q6_K
// decode dots went from 39% / 44% of the read bandwidth to 85% / 79% with it. Prefill reuses
// a row across tokens from L1 and needs none.
inline constexpr int k_prefetch_bytes = 2048;
template <int NT, class Block>
[[gnu::always_inline]] inline void prefetch_ahead(const Block* b) {
  if constexpr (NT == 1) _mm_prefetch(reinterpret_cast<const char*>(b) + k_prefetch_bytes, _MM_HINT_T0);
}

// kernel.template operator()<NT>() for nt = 1..4 (k_dot_multi_tokens): a templated lambda
// takes the token count as a compile-time constant.
template <class Kernel>
void for_token_count(int nt, Kernel&& kernel) {
  switch (nt) {
    case 1: return kernel.template operator()<1>();
    case 2: return kernel.template operator()<2>();
    case 3: return kernel.template operator()<3>();
    default: return kernel.template operator()<4>();
  }
}

}  // namespace trilemma::engine::avx2
