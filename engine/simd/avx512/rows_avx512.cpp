// AVX-512 float rows (the `rows_avx512` column of quant/kernel_table.cpp): f32 or f16 weight
// rows in ggml layout against f32 activations, several rows and tokens per call. Compiled with
// -mavx512f -mavx512bw -mavx512vl; called only when the CPU has them.
//
// Prefill blocks 4 rows x 3 tokens (24 accumulators, 2 per pair): one weight load and
// conversion serves 3 tokens and one activation load 4 rows, so the FMAs, not the loads and
// conversions, set the pace. Decode (1-2 tokens) takes one row at a time: the weight stream
// stays one sequential run the hardware prefetcher follows.
//
// Batch invariance: every (row, token) pair gets the same arithmetic whatever the blocking:
// two 16-lane chains taking 16-element chunks in turn (chunk c into chain c % 2), a masked
// last chunk into the chain whose turn it is, then one reduction of chain 0 + chain 1. So a
// 1-token call (decode) and a batched one (prefill, speculative verify) give the same floats bit
// for bit; against the `_ref` dot only the summation order differs.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "engine/quant/kernels.hpp"

namespace trilemma::engine {
namespace {

// Decode streams each row once, one row after another: the weights this far ahead are
// requested now (rows lie back to back, so the stream runs on into the next row; a prefetch
// past the matrix's end is harmless), as the k-quant dots do (simd/avx512/dot_k_avx512vnni.cpp).
constexpr std::size_t k_prefetch_bytes = 2048;

template <bool half>
__attribute__((always_inline)) inline __m512 load_w(const std::byte* row, std::int64_t i) {
  if constexpr (half)
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(reinterpret_cast<const std::uint16_t*>(row) + i)));
  else
    return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + i);
}

template <bool half>
__attribute__((always_inline)) inline __m512 load_w_masked(const std::byte* row, std::int64_t i, __mmask16 m) {
  if constexpr (half)
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, reinterpret_cast<const std::uint16_t*>(row) + i));
  else
    return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(row) + i);
}

// One 16-element chunk at i of R rows x T tokens into the chain `acc`; `mask` is all ones but
// for a short last chunk.
template <bool half, int R, int T>
__attribute__((always_inline)) inline void step(__m512 (&acc)[R][T], const std::byte* w, std::size_t w_row_bytes, const float* x,
                                                std::size_t x_stride, std::int64_t i, __mmask16 mask) {
  __m512 wv[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
    wv[r] = mask == 0xFFFF ? load_w<half>(w + std::size_t(r) * w_row_bytes, i) : load_w_masked<half>(w + std::size_t(r) * w_row_bytes, i, mask);
#pragma GCC unroll 3
  for (int t = 0; t < T; ++t) {
    const float* xt = x + std::size_t(t) * x_stride + i;
    const __m512 xv = mask == 0xFFFF ? _mm512_loadu_ps(xt) : _mm512_maskz_loadu_ps(mask, xt);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r][t] = _mm512_fmadd_ps(wv[r], xv, acc[r][t]);
  }
}

// R rows x T tokens over n elements: out[t * out_stride + r] = dot(row r, token t).
template <bool half, int R, int T>
void block(const std::byte* w, std::size_t w_row_bytes, const float* x, std::size_t x_stride, std::int64_t n, float* out,
           std::size_t out_stride) {
  __m512 even[R][T], odd[R][T];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
    for (int t = 0; t < T; ++t) even[r][t] = odd[r][t] = _mm512_setzero_ps();
  std::int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    if constexpr (R == 1)  // decode: the one weight stream, requested ahead (see k_prefetch_bytes)
      for (std::size_t b = 0; b < (half ? 64u : 128u); b += 64)
        _mm_prefetch(reinterpret_cast<const char*>(w) + std::size_t(i) * (half ? 2 : 4) + b + k_prefetch_bytes, _MM_HINT_T0);
    step<half, R, T>(even, w, w_row_bytes, x, x_stride, i, 0xFFFF);
    step<half, R, T>(odd, w, w_row_bytes, x, x_stride, i + 16, 0xFFFF);
  }
  bool odd_turn = false;
  if (i + 16 <= n) step<half, R, T>(even, w, w_row_bytes, x, x_stride, i, 0xFFFF), i += 16, odd_turn = true;
  if (i < n) {
    const auto mask = static_cast<__mmask16>((1u << (n - i)) - 1);
    if (odd_turn) step<half, R, T>(odd, w, w_row_bytes, x, x_stride, i, mask);
    else step<half, R, T>(even, w, w_row_bytes, x, x_stride, i, mask);
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
    for (int t = 0; t < T; ++t)
      out[std::size_t(t) * out_stride + std::size_t(r)] = _mm512_reduce_add_ps(_mm512_add_ps(even[r][t], odd[r][t]));
}

template <bool half, int R>
void tokens(const std::byte* w, std::size_t w_row_bytes, const float* x, std::size_t x_stride, int nt, std::int64_t n,
            float* out, std::size_t out_stride) {
  int t = 0;
  for (; t + 3 <= nt; t += 3)
    block<half, R, 3>(w, w_row_bytes, x + std::size_t(t) * x_stride, x_stride, n, out + std::size_t(t) * out_stride, out_stride);
  if (nt - t == 2) block<half, R, 2>(w, w_row_bytes, x + std::size_t(t) * x_stride, x_stride, n, out + std::size_t(t) * out_stride, out_stride);
  if (nt - t == 1) block<half, R, 1>(w, w_row_bytes, x + std::size_t(t) * x_stride, x_stride, n, out + std::size_t(t) * out_stride, out_stride);
}

template <bool half>
void rows_impl(const void* weights, std::size_t w_row_bytes, int rows, const float* x, std::size_t x_stride, int nt,
               std::int64_t n, float* out, std::size_t out_stride) {
  const auto* w = static_cast<const std::byte*>(weights);
  int r = 0;
  if (nt > 2)
    for (; r + 4 <= rows; r += 4) tokens<half, 4>(w + std::size_t(r) * w_row_bytes, w_row_bytes, x, x_stride, nt, n, out + r, out_stride);
  for (; r < rows; ++r) tokens<half, 1>(w + std::size_t(r) * w_row_bytes, w_row_bytes, x, x_stride, nt, n, out + r, out_stride);
}

}  // namespace

void rows_f32_f32_avx512(const void* w, std::size_t w_row_bytes, int rows, const float* x, std::size_t x_stride, int nt,
                         std::int64_t n, float* out, std::size_t out_stride) {
  rows_impl<false>(w, w_row_bytes, rows, x, x_stride, nt, n, out, out_stride);
}
void rows_f16_f32_avx512(const void* w, std::size_t w_row_bytes, int rows, const float* x, std::size_t x_stride, int nt,
                         std::int64_t n, float* out, std::size_t out_stride) {
  rows_impl<true>(w, w_row_bytes, rows, x, x_stride, nt, n, out, out_stride);
}

}  // namespace trilemma::engine
