// AVX-512 columns of the KV format table (kv/kv_format_table.cpp): the run kernels with sixteen
// lanes (q8_0/q4_0 on slices of whole blocks, each block two vectors of codes; slices that cut a
// block go to the AVX2 column), chosen on CPUs whose ISA is avx512vnni (AVX-512 F/BW/VL are
// part of it). Compiled with -mavx512f -mavx512vl -mf16c -mfma -ffp-contract=off.
//   scores: eight positions at once, one 16-lane accumulator each; each accumulator is folded
//           to 8 lanes (lane i + lane i + 8) and the eight are summed together in the AVX2
//           column's tree. A run's last < 8 positions take the same fold and tree one at a time,
//           so a score does not depend on where its position falls in a run. Heads that are not
//           a multiple of 16 wide use the AVX2 column.
//   mix:    64 output columns in four registers across the run (then 16, then the AVX2 code),
//           the same multiply-then-add per element in position order as mix_ref: bit-identical.
// The small constant loops over accumulators carry `#pragma GCC unroll`: the build is -O2, which
// leaves them rolled, and an array of vectors indexed by a loop variable then lives in memory (a
// load and a store per row). Unrolled, the arithmetic is the same; a depth-1920 decode's
// attention took half the time (docs/performance.md, session 20).
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "engine/kv/kv_format.hpp"
#include "engine/quant/blocks.hpp"
#include "engine/simd/avx2/avx2_common.hpp"

namespace trilemma::engine {
namespace {

using avx2::sum1;
using avx2::sum8;

struct LoadF32 {
  using Elem = float;
  static __m512 load(const float* p) { return _mm512_loadu_ps(p); }
};
struct LoadF16 {
  using Elem = std::uint16_t;
  static __m512 load(const std::uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
};

template <class L>
const typename L::Elem* row_at(const std::byte* rows, std::size_t row_bytes, int r, int first) {
  return reinterpret_cast<const typename L::Elem*>(rows + std::size_t(r) * row_bytes) + first;
}

__m256 fold(__m512 v) {
  const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));  // AVX512F only, no DQ
  return _mm256_add_ps(_mm512_castps512_ps256(v), hi);
}


// REQUIRES: n % 16 == 0.
// Rows this far ahead of the kernels are prefetched: a head's slice of each cached row is a
// line or two, rows are a whole position (all kv heads) apart, and at depth the hardware
// prefetchers leave the loads waiting on memory.
constexpr int k_rows_ahead = 64;

// The head's n elements of row r + k_rows_ahead (when it exists) towards L1.
template <class L>
__attribute__((always_inline)) inline void prefetch_row(const std::byte* rows, std::size_t row_bytes, int r, int count, int first, int n) {
  if (r + k_rows_ahead >= count) return;
  const auto* p = reinterpret_cast<const char*>(row_at<L>(rows, row_bytes, r + k_rows_ahead, first));
  for (std::size_t b = 0; b < n * sizeof(typename L::Elem); b += 64) _mm_prefetch(p + b, _MM_HINT_T0);
}

template <class L>
void scores_tiled(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, float scale,
                  float* scores) {
  const __m256 vscale = _mm256_set1_ps(scale);
  int r = 0;
  for (; r + 8 <= count; r += 8) {
#pragma GCC unroll 8
    for (int p = 0; p < 8; ++p) prefetch_row<L>(rows, row_bytes, r + p, count, first, n);
    __m512 acc[8];
    const typename L::Elem* k[8];
#pragma GCC unroll 8
    for (int p = 0; p < 8; ++p) acc[p] = _mm512_setzero_ps(), k[p] = row_at<L>(rows, row_bytes, r + p, first);
    for (int j = 0; j < n; j += 16) {
      const __m512 qv = _mm512_loadu_ps(q + j);
#pragma GCC unroll 8
      for (int p = 0; p < 8; ++p) acc[p] = _mm512_fmadd_ps(qv, L::load(k[p] + j), acc[p]);
    }
    __m256 half[8];
#pragma GCC unroll 8
    for (int p = 0; p < 8; ++p) half[p] = fold(acc[p]);
    _mm256_storeu_ps(scores + r, _mm256_div_ps(sum8(half), vscale));
  }
  for (; r < count; ++r) {
    const typename L::Elem* k = row_at<L>(rows, row_bytes, r, first);
    __m512 acc = _mm512_setzero_ps();
    for (int j = 0; j < n; j += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(q + j), L::load(k + j), acc);
    scores[r] = sum1(fold(acc)) / scale;
  }
}

// scores_tiled for two heads at once: each row's 16-element piece loads (and converts) once for
// both; every score takes scores_tiled's FMAs in its order, its fold and its tree, so each
// head's bits are its own scores'.
template <class L>
void scores_two_heads(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q0, const float* q1,
                      float scale, float* s0, float* s1) {
  const __m256 vscale = _mm256_set1_ps(scale);
  int r = 0;
  for (; r + 8 <= count; r += 8) {
#pragma GCC unroll 8
    for (int p = 0; p < 8; ++p) prefetch_row<L>(rows, row_bytes, r + p, count, first, n);
    __m512 a0[8], a1[8];
    const typename L::Elem* k[8];
#pragma GCC unroll 8
    for (int p = 0; p < 8; ++p) a0[p] = a1[p] = _mm512_setzero_ps(), k[p] = row_at<L>(rows, row_bytes, r + p, first);
    for (int j = 0; j < n; j += 16) {
      const __m512 qv0 = _mm512_loadu_ps(q0 + j), qv1 = _mm512_loadu_ps(q1 + j);
#pragma GCC unroll 8
      for (int p = 0; p < 8; ++p) {
        const __m512 x = L::load(k[p] + j);
        a0[p] = _mm512_fmadd_ps(qv0, x, a0[p]);
        a1[p] = _mm512_fmadd_ps(qv1, x, a1[p]);
      }
    }
    __m256 h0[8], h1[8];
#pragma GCC unroll 8
    for (int p = 0; p < 8; ++p) h0[p] = fold(a0[p]), h1[p] = fold(a1[p]);
    _mm256_storeu_ps(s0 + r, _mm256_div_ps(sum8(h0), vscale));
    _mm256_storeu_ps(s1 + r, _mm256_div_ps(sum8(h1), vscale));
  }
  if (r < count) {  // the run's last < 8 positions: scores_tiled's one-at-a-time path, per head
    scores_tiled<L>(rows + std::size_t(r) * row_bytes, row_bytes, count - r, first, n, q0, scale, s0 + r);
    scores_tiled<L>(rows + std::size_t(r) * row_bytes, row_bytes, count - r, first, n, q1, scale, s1 + r);
  }
}

// Heads in pairs (the odd one alone through scores_tiled); heads that are not a multiple of 16
// wide through the AVX2 column, head by head, as the one-head kernel does.
template <class L, KvScoresKernel avx2>
void scores_heads(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, std::size_t q_stride,
                  int heads, float scale, float* scores, std::size_t scores_stride) {
  if (n % 16 != 0) {
    for (int h = 0; h < heads; ++h)
      avx2(rows, row_bytes, count, first, n, q + std::size_t(h) * q_stride, scale, scores + std::size_t(h) * scores_stride);
    return;
  }
  int h = 0;
  for (; h + 2 <= heads; h += 2)
    scores_two_heads<L>(rows, row_bytes, count, first, n, q + std::size_t(h) * q_stride, q + std::size_t(h + 1) * q_stride, scale,
                        scores + std::size_t(h) * scores_stride, scores + std::size_t(h + 1) * scores_stride);
  if (h < heads) scores_tiled<L>(rows, row_bytes, count, first, n, q + std::size_t(h) * q_stride, scale, scores + std::size_t(h) * scores_stride);
}

template <class L>
int mix_tiled(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, float* out) {
  int j = 0;
  for (; j + 64 <= n; j += 64) {
    __m512 acc[4];
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) acc[c] = _mm512_loadu_ps(out + j + 16 * c);
    for (int r = 0; r < count; ++r) {
      if (j == 0) prefetch_row<L>(rows, row_bytes, r, count, first, n);
      const typename L::Elem* v = row_at<L>(rows, row_bytes, r, first) + j;
      const __m512 a = _mm512_set1_ps(w[r]);
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) acc[c] = _mm512_add_ps(acc[c], _mm512_mul_ps(a, L::load(v + 16 * c)));
    }
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) _mm512_storeu_ps(out + j + 16 * c, acc[c]);
  }
  for (; j + 16 <= n; j += 16) {
    __m512 acc = _mm512_loadu_ps(out + j);
    for (int r = 0; r < count; ++r)
      acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_set1_ps(w[r]), L::load(row_at<L>(rows, row_bytes, r, first) + j)));
    _mm512_storeu_ps(out + j, acc);
  }
  return j;  // columns done; the caller's AVX2 column takes the rest
}

// mix_tiled for `heads` (1..4) heads at once, on 64-column blocks: each row's 64 columns load
// (and convert) once; every head's four accumulators take the same multiply-then-add in position
// order as mix_tiled's, so each head's bits are its own mix's.
template <class L, int heads>
void mix_heads_tiled(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, std::size_t w_stride,
                     float* out, std::size_t out_stride) {
  for (int j = 0; j + 64 <= n; j += 64) {
    __m512 acc[heads][4];
#pragma GCC unroll 4
    for (int h = 0; h < heads; ++h)
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) acc[h][c] = _mm512_loadu_ps(out + std::size_t(h) * out_stride + std::size_t(j + 16 * c));
    for (int r = 0; r < count; ++r) {
      if (j == 0) prefetch_row<L>(rows, row_bytes, r, count, first, n);
      const typename L::Elem* v = row_at<L>(rows, row_bytes, r, first) + j;
      __m512 x[4];
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) x[c] = L::load(v + 16 * c);
#pragma GCC unroll 4
      for (int h = 0; h < heads; ++h) {
        const __m512 a = _mm512_set1_ps(w[std::size_t(h) * w_stride + std::size_t(r)]);
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) acc[h][c] = _mm512_add_ps(acc[h][c], _mm512_mul_ps(a, x[c]));
      }
    }
#pragma GCC unroll 4
    for (int h = 0; h < heads; ++h)
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) _mm512_storeu_ps(out + std::size_t(h) * out_stride + std::size_t(j + 16 * c), acc[h][c]);
  }
}

// Heads in groups of four; columns past the last 64-column block through the one-head kernel.
template <class L, KvMixKernel one_head>
void mix_heads(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, std::size_t w_stride,
               int heads, float* out, std::size_t out_stride) {
  for (int h0 = 0; h0 < heads; h0 += 4) {
    const float* wh = w + std::size_t(h0) * w_stride;
    float* oh = out + std::size_t(h0) * out_stride;
    switch (std::min(4, heads - h0)) {
      case 1: mix_heads_tiled<L, 1>(rows, row_bytes, count, first, n, wh, w_stride, oh, out_stride); break;
      case 2: mix_heads_tiled<L, 2>(rows, row_bytes, count, first, n, wh, w_stride, oh, out_stride); break;
      case 3: mix_heads_tiled<L, 3>(rows, row_bytes, count, first, n, wh, w_stride, oh, out_stride); break;
      default: mix_heads_tiled<L, 4>(rows, row_bytes, count, first, n, wh, w_stride, oh, out_stride); break;
    }
  }
  const int done = n / 64 * 64;
  if (done < n)
    for (int h = 0; h < heads; ++h)
      one_head(rows, row_bytes, count, first + done, n - done, w + std::size_t(h) * w_stride, out + std::size_t(h) * out_stride + done);
}

// q8_0/q4_0 on slices of whole blocks: a block's 32 codes as two 16-lane float vectors.
struct Codes {
  __m512 lo, hi;  // elements 0..15, 16..31
};
Codes codes_of(const BlockQ8_0& b) {
  return {_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs)))),
          _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs + 16))))};
}
Codes codes_of(const BlockQ4_0& b) {
  const __m128i qs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
  const __m128i mask = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  const __m128i lo = _mm_sub_epi8(_mm_and_si128(qs, mask), eight);                     // elements 0..15
  const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(qs, 4), mask), eight);  // elements 16..31
  return {_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(lo)), _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(hi))};
}
float scale_of(std::uint16_t d) { return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(d))); }

template <class Block>
const Block* block_row(const std::byte* rows, std::size_t row_bytes, int r, int first) {
  return reinterpret_cast<const Block*>(rows + std::size_t(r) * row_bytes) + first / 32;
}

// One position's block: the two products summed, times the block's d, into the accumulator.
template <class Block>
__m512 block_step(const Block& blk, __m512 q_lo, __m512 q_hi, __m512 acc) {
  const Codes c = codes_of(blk);
  const __m512 part = _mm512_fmadd_ps(q_hi, c.hi, _mm512_mul_ps(q_lo, c.lo));
  return _mm512_fmadd_ps(part, _mm512_set1_ps(scale_of(blk.d)), acc);
}

// As scores_tiled: eight positions at once, the same fold and tree for a run's last positions.
template <class Block>
void scores_blocks(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, float scale,
                   float* scores) {
  const int blocks = n / 32;
  const __m256 vscale = _mm256_set1_ps(scale);
  int r = 0;
  for (; r + 8 <= count; r += 8) {
    __m512 acc[8];
    const Block* k[8];
#pragma GCC unroll 8
    for (int p = 0; p < 8; ++p) acc[p] = _mm512_setzero_ps(), k[p] = block_row<Block>(rows, row_bytes, r + p, first);
    for (int b = 0; b < blocks; ++b) {
      const __m512 q_lo = _mm512_loadu_ps(q + 32 * b), q_hi = _mm512_loadu_ps(q + 32 * b + 16);
#pragma GCC unroll 8
      for (int p = 0; p < 8; ++p) acc[p] = block_step(k[p][b], q_lo, q_hi, acc[p]);
    }
    __m256 half[8];
#pragma GCC unroll 8
    for (int p = 0; p < 8; ++p) half[p] = fold(acc[p]);
    _mm256_storeu_ps(scores + r, _mm256_div_ps(sum8(half), vscale));
  }
  for (; r < count; ++r) {
    const Block* k = block_row<Block>(rows, row_bytes, r, first);
    __m512 acc = _mm512_setzero_ps();
    for (int b = 0; b < blocks; ++b) acc = block_step(k[b], _mm512_loadu_ps(q + 32 * b), _mm512_loadu_ps(q + 32 * b + 16), acc);
    scores[r] = sum1(fold(acc)) / scale;
  }
}

// A block's 32 output columns in two registers across the run; per element the axpy's
// (a * d) * code added in position order: bit-identical to mix_ref.
template <class Block>
void mix_blocks(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, float* out) {
  for (int b = 0; b < n / 32; ++b) {
    float* o = out + 32 * b;
    __m512 lo = _mm512_loadu_ps(o), hi = _mm512_loadu_ps(o + 16);
    for (int r = 0; r < count; ++r) {
      const Block& blk = block_row<Block>(rows, row_bytes, r, first)[b];
      const Codes c = codes_of(blk);
      const __m512 ad = _mm512_set1_ps(w[r] * scale_of(blk.d));
      lo = _mm512_add_ps(lo, _mm512_mul_ps(ad, c.lo));
      hi = _mm512_add_ps(hi, _mm512_mul_ps(ad, c.hi));
    }
    _mm512_storeu_ps(o, lo);
    _mm512_storeu_ps(o + 16, hi);
  }
}

// Slices that cut a block go to the AVX2 column (`cut`).
template <class Block, KvScoresKernel cut>
void scores_whole_blocks(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, float scale,
                         float* scores) {
  if (first % 32 != 0 || n % 32 != 0) return cut(rows, row_bytes, count, first, n, q, scale, scores);
  scores_blocks<Block>(rows, row_bytes, count, first, n, q, scale, scores);
}
template <class Block, KvMixKernel cut>
void mix_whole_blocks(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, float* out) {
  if (first % 32 != 0 || n % 32 != 0) return cut(rows, row_bytes, count, first, n, w, out);
  mix_blocks<Block>(rows, row_bytes, count, first, n, w, out);
}

}  // namespace

void kv_scores_f32_avx512(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, float scale,
                          float* scores) {
  if (n % 16 != 0) return kv_scores_f32_avx2(rows, row_bytes, count, first, n, q, scale, scores);
  scores_tiled<LoadF32>(rows, row_bytes, count, first, n, q, scale, scores);
}
void kv_scores_f16_avx512(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, float scale,
                          float* scores) {
  if (n % 16 != 0) return kv_scores_f16_avx2(rows, row_bytes, count, first, n, q, scale, scores);
  scores_tiled<LoadF16>(rows, row_bytes, count, first, n, q, scale, scores);
}
void kv_mix_f32_avx512(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, float* out) {
  const int done = mix_tiled<LoadF32>(rows, row_bytes, count, first, n, w, out);
  if (done < n) kv_mix_f32_avx2(rows, row_bytes, count, first + done, n - done, w, out + done);
}
void kv_mix_f16_avx512(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, float* out) {
  const int done = mix_tiled<LoadF16>(rows, row_bytes, count, first, n, w, out);
  if (done < n) kv_mix_f16_avx2(rows, row_bytes, count, first + done, n - done, w, out + done);
}
void kv_scores_heads_f32_avx512(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q,
                                std::size_t q_stride, int heads, float scale, float* scores, std::size_t scores_stride) {
  scores_heads<LoadF32, kv_scores_f32_avx2>(rows, row_bytes, count, first, n, q, q_stride, heads, scale, scores, scores_stride);
}
void kv_scores_heads_f16_avx512(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q,
                                std::size_t q_stride, int heads, float scale, float* scores, std::size_t scores_stride) {
  scores_heads<LoadF16, kv_scores_f16_avx2>(rows, row_bytes, count, first, n, q, q_stride, heads, scale, scores, scores_stride);
}
void kv_mix_heads_f32_avx512(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w,
                             std::size_t w_stride, int heads, float* out, std::size_t out_stride) {
  mix_heads<LoadF32, kv_mix_f32_avx512>(rows, row_bytes, count, first, n, w, w_stride, heads, out, out_stride);
}
void kv_mix_heads_f16_avx512(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w,
                             std::size_t w_stride, int heads, float* out, std::size_t out_stride) {
  mix_heads<LoadF16, kv_mix_f16_avx512>(rows, row_bytes, count, first, n, w, w_stride, heads, out, out_stride);
}

void kv_scores_q8_0_avx512(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, float scale,
                           float* scores) {
  scores_whole_blocks<BlockQ8_0, kv_scores_q8_0_avx2>(rows, row_bytes, count, first, n, q, scale, scores);
}
void kv_mix_q8_0_avx512(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, float* out) {
  mix_whole_blocks<BlockQ8_0, kv_mix_q8_0_avx2>(rows, row_bytes, count, first, n, w, out);
}
void kv_scores_q4_0_avx512(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, float scale,
                           float* scores) {
  scores_whole_blocks<BlockQ4_0, kv_scores_q4_0_avx2>(rows, row_bytes, count, first, n, q, scale, scores);
}
void kv_mix_q4_0_avx512(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, float* out) {
  mix_whole_blocks<BlockQ4_0, kv_mix_q4_0_avx2>(rows, row_bytes, count, first, n, w, out);
}

}  // namespace trilemma::engine
