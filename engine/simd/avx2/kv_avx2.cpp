// AVX2 + FMA + F16C columns of the KV format table (kv/kv_format_table.cpp): the query . key
// dot and the softmax-weighted V accumulation (out += a * row) on a slice [first, first + n)
// of a stored row. Compiled with -mavx2 -mfma -mf16c -ffp-contract=off; selected by
// select_kv_dot / select_kv_axpy only on CPUs that have them. Block layouts: quant/blocks.hpp.
//
// Whole 32-element blocks of the slice take the vector path; a block the slice cuts (heads
// narrower than a block, stories260K's 8 dims) runs the _ref twin's scalar code for that block.
//   dot:  per block, 4 vectors of products (q x codes) summed into one, times the block's d,
//         into one accumulator; one horizontal sum at the end. Differs from _ref (which sums
//         left to right) only in float summation order: tested against it with a tolerance.
//   axpy: out[i] = out[i] + (a * d) * code, one multiply and one add per element in the _ref
//         order (no FMA, -ffp-contract=off): bit-identical to _ref, tested with ==.
// Run kernels (a page's positions in one call):
//   f32/f16 scores: eight positions at once, one accumulator each (eight independent FMA
//         chains instead of one), reduced together by a transpose; a run's last < 8 positions
//         take the same arithmetic one at a time, so a score does not depend on where its
//         position falls in a run. Heads not a multiple of 8 wide use the row dot.
//   f32/f16 mix: 32 output columns held in registers across all the run's positions (one load
//         and store of out per run, not per position), same multiply-then-add per element as
//         axpy, in position order: bit-identical to mix_ref.
//   q8_0/q4_0 on slices of whole blocks (heads of 32, 64, 128...): scores eight positions at
//         once as f32/f16 do (each position's blocks in dot_blocks' arithmetic, reduced by the
//         same tree); mix keeps a block's 32 output columns in registers across the run, the
//         axpy's arithmetic per element: bit-identical to mix_ref. Slices that cut a block take
//         the row kernels above in a loop.
// The constant loops over accumulator arrays carry `#pragma GCC unroll` (-O2 leaves them rolled
// and the arrays in memory; see simd/avx512/kv_avx512.cpp).
#include <immintrin.h>

#include <algorithm>
#include <cstddef>

#include "engine/kv/kv_format.hpp"
#include "engine/quant/blocks.hpp"

#include "engine/simd/avx2/avx2_common.hpp"

namespace trilemma::engine {
namespace {

using avx2::fp16;
using avx2::hsum;
using avx2::sum1;
using avx2::sum8;

// 8 signed bytes -> 8 floats.
__m256 cvt8(__m128i bytes) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes)); }

// The 32 codes of a block as 4 x 8 floats, in element order.
struct Codes {
  __m256 c[4];
};

Codes codes_q8_0(const BlockQ8_0& b) {
  const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
  const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs + 16));
  return {{cvt8(lo), cvt8(_mm_srli_si128(lo, 8)), cvt8(hi), cvt8(_mm_srli_si128(hi, 8))}};
}

Codes codes_q4_0(const BlockQ4_0& b) {
  const __m128i qs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
  const __m128i mask = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  const __m128i lo = _mm_sub_epi8(_mm_and_si128(qs, mask), eight);                     // elements 0..15
  const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(qs, 4), mask), eight);  // elements 16..31
  return {{cvt8(lo), cvt8(_mm_srli_si128(lo, 8)), cvt8(hi), cvt8(_mm_srli_si128(hi, 8))}};
}

// Slice walk shared by both block formats: whole blocks through `codes`, cut blocks through the
// reference on that part only (the _ref functions take any slice).
template <class Block, class CodesFn>
float dot_blocks(const void* row, int first, int n, const float* q, CodesFn codes, KvDotFn ref) {
  const auto* blocks = static_cast<const Block*>(row);
  __m256 acc = _mm256_setzero_ps();
  float tail = 0.0f;
  for (int i = 0; i < n;) {
    const int e = first + i, b = e / 32, j0 = e % 32;
    const int len = std::min(n - i, 32 - j0);
    if (len == 32) {
      const Codes c = codes(blocks[b]);
      __m256 part = _mm256_mul_ps(_mm256_loadu_ps(q + i), c.c[0]);
      part = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), c.c[1], part);
      part = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 16), c.c[2], part);
      part = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 24), c.c[3], part);
      acc = _mm256_fmadd_ps(part, _mm256_set1_ps(fp16(blocks[b].d)), acc);
    } else {
      tail += ref(row, e, len, q + i);
    }
    i += len;
  }
  return hsum(acc) + tail;
}

template <class Block, class CodesFn>
void axpy_blocks(const void* row, int first, int n, float a, float* out, CodesFn codes, KvAxpyFn ref) {
  const auto* blocks = static_cast<const Block*>(row);
  for (int i = 0; i < n;) {
    const int e = first + i, b = e / 32, j0 = e % 32;
    const int len = std::min(n - i, 32 - j0);
    if (len == 32) {
      const Codes c = codes(blocks[b]);
      const __m256 ad = _mm256_set1_ps(a * fp16(blocks[b].d));  // rounded once, as _ref
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        float* o = out + i + 8 * k;
        _mm256_storeu_ps(o, _mm256_add_ps(_mm256_loadu_ps(o), _mm256_mul_ps(ad, c.c[k])));
      }
    } else {
      ref(row, e, len, a, out + i);
    }
    i += len;
  }
}


struct LoadF32 {
  using Elem = float;
  static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static float one(float x) { return x; }
};
struct LoadF16 {
  using Elem = std::uint16_t;
  static __m256 load(const std::uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
  static float one(std::uint16_t x) { return fp16(x); }
};

template <class L>
const typename L::Elem* row_at(const std::byte* rows, std::size_t row_bytes, int r, int first) {
  return reinterpret_cast<const typename L::Elem*>(rows + std::size_t(r) * row_bytes) + first;
}

// REQUIRES: n % 8 == 0.
template <class L>
void scores_tiled(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, float scale,
                  float* scores) {
  const __m256 vscale = _mm256_set1_ps(scale);
  int r = 0;
  for (; r + 8 <= count; r += 8) {
    __m256 acc[8];
    const typename L::Elem* k[8];
#pragma GCC unroll 8
    for (int p = 0; p < 8; ++p) acc[p] = _mm256_setzero_ps(), k[p] = row_at<L>(rows, row_bytes, r + p, first);
    for (int j = 0; j < n; j += 8) {
      const __m256 qv = _mm256_loadu_ps(q + j);
#pragma GCC unroll 8
      for (int p = 0; p < 8; ++p) acc[p] = _mm256_fmadd_ps(qv, L::load(k[p] + j), acc[p]);
    }
    _mm256_storeu_ps(scores + r, _mm256_div_ps(sum8(acc), vscale));
  }
  for (; r < count; ++r) {
    const typename L::Elem* k = row_at<L>(rows, row_bytes, r, first);
    __m256 acc = _mm256_setzero_ps();
    for (int j = 0; j < n; j += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + j), L::load(k + j), acc);
    scores[r] = sum1(acc) / scale;
  }
}

template <class L>
void mix_tiled(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, float* out) {
  int j = 0;
  for (; j + 32 <= n; j += 32) {
    __m256 acc[4];
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) acc[c] = _mm256_loadu_ps(out + j + 8 * c);
    for (int r = 0; r < count; ++r) {
      const typename L::Elem* v = row_at<L>(rows, row_bytes, r, first) + j;
      const __m256 a = _mm256_set1_ps(w[r]);
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) acc[c] = _mm256_add_ps(acc[c], _mm256_mul_ps(a, L::load(v + 8 * c)));
    }
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) _mm256_storeu_ps(out + j + 8 * c, acc[c]);
  }
  for (; j + 8 <= n; j += 8) {
    __m256 acc = _mm256_loadu_ps(out + j);
    for (int r = 0; r < count; ++r)
      acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(w[r]), L::load(row_at<L>(rows, row_bytes, r, first) + j)));
    _mm256_storeu_ps(out + j, acc);
  }
  for (; j < n; ++j) {
    float acc = out[j];
    for (int r = 0; r < count; ++r) acc += w[r] * L::one(row_at<L>(rows, row_bytes, r, first)[j]);
    out[j] = acc;
  }
}

// Block formats on slices of whole blocks (first and n multiples of 32).
template <class Block>
const Block* block_row(const std::byte* rows, std::size_t row_bytes, int r, int first) {
  return reinterpret_cast<const Block*>(rows + std::size_t(r) * row_bytes) + first / 32;
}

// The query's elements of block b as four vectors.
struct Query32 {
  __m256 v[4];
};
Query32 query_block(const float* q, int b) {
  return {{_mm256_loadu_ps(q + 32 * b), _mm256_loadu_ps(q + 32 * b + 8), _mm256_loadu_ps(q + 32 * b + 16), _mm256_loadu_ps(q + 32 * b + 24)}};
}

// One position's block b: the four products summed as dot_blocks does, times the block's d.
template <class Block, class CodesFn>
__m256 block_step(const Block& blk, const __m256 (&qv)[4], __m256 acc, CodesFn codes) {
  const Codes c = codes(blk);
  __m256 part = _mm256_mul_ps(qv[0], c.c[0]);
  part = _mm256_fmadd_ps(qv[1], c.c[1], part);
  part = _mm256_fmadd_ps(qv[2], c.c[2], part);
  part = _mm256_fmadd_ps(qv[3], c.c[3], part);
  return _mm256_fmadd_ps(part, _mm256_set1_ps(fp16(blk.d)), acc);
}

// Eight positions at once, one accumulator each, reduced together (sum8); a run's last < 8
// positions take the same steps and sum1, the same tree: a score does not depend on its run.
template <class Block, class CodesFn>
void scores_blocks(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, float scale,
                   float* scores, CodesFn codes) {
  const int blocks = n / 32;
  const __m256 vscale = _mm256_set1_ps(scale);
  int r = 0;
  for (; r + 8 <= count; r += 8) {
    __m256 acc[8];
    const Block* k[8];
#pragma GCC unroll 8
    for (int p = 0; p < 8; ++p) acc[p] = _mm256_setzero_ps(), k[p] = block_row<Block>(rows, row_bytes, r + p, first);
    for (int b = 0; b < blocks; ++b) {
      const Query32 qv = query_block(q, b);
#pragma GCC unroll 8
      for (int p = 0; p < 8; ++p) acc[p] = block_step(k[p][b], qv.v, acc[p], codes);
    }
    _mm256_storeu_ps(scores + r, _mm256_div_ps(sum8(acc), vscale));
  }
  for (; r < count; ++r) {
    const Block* k = block_row<Block>(rows, row_bytes, r, first);
    __m256 acc = _mm256_setzero_ps();
    for (int b = 0; b < blocks; ++b) acc = block_step(k[b], query_block(q, b).v, acc, codes);
    scores[r] = sum1(acc) / scale;
  }
}

// A block's 32 output columns held in registers across the run; per element the axpy's
// (a * d) * code added in position order: bit-identical to mix_ref.
template <class Block, class CodesFn>
void mix_blocks(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, float* out,
                CodesFn codes) {
  for (int b = 0; b < n / 32; ++b) {
    float* o = out + 32 * b;
    __m256 acc[4];
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) acc[c] = _mm256_loadu_ps(o + 8 * c);
    for (int r = 0; r < count; ++r) {
      const Block& blk = block_row<Block>(rows, row_bytes, r, first)[b];
      const Codes c = codes(blk);
      const __m256 ad = _mm256_set1_ps(w[r] * fp16(blk.d));
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) acc[k] = _mm256_add_ps(acc[k], _mm256_mul_ps(ad, c.c[k]));
    }
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) _mm256_storeu_ps(o + 8 * c, acc[c]);
  }
}

}  // namespace

void kv_scores_f32_avx2(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, float scale,
                        float* scores) {
  if (n % 8 != 0) return kv_scores_by_row<kv_dot_f32_avx2>(rows, row_bytes, count, first, n, q, scale, scores);
  scores_tiled<LoadF32>(rows, row_bytes, count, first, n, q, scale, scores);
}
void kv_scores_f16_avx2(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, float scale,
                        float* scores) {
  if (n % 8 != 0) return kv_scores_by_row<kv_dot_f16_avx2>(rows, row_bytes, count, first, n, q, scale, scores);
  scores_tiled<LoadF16>(rows, row_bytes, count, first, n, q, scale, scores);
}
void kv_mix_f32_avx2(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, float* out) {
  mix_tiled<LoadF32>(rows, row_bytes, count, first, n, w, out);
}
void kv_mix_f16_avx2(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, float* out) {
  mix_tiled<LoadF16>(rows, row_bytes, count, first, n, w, out);
}

float kv_dot_q8_0_avx2(const void* row, int first, int n, const float* q) {
  return dot_blocks<BlockQ8_0>(row, first, n, q, codes_q8_0, kv_dot_q8_0_ref);
}
void kv_axpy_q8_0_avx2(const void* row, int first, int n, float a, float* out) {
  axpy_blocks<BlockQ8_0>(row, first, n, a, out, codes_q8_0, kv_axpy_q8_0_ref);
}
float kv_dot_q4_0_avx2(const void* row, int first, int n, const float* q) {
  return dot_blocks<BlockQ4_0>(row, first, n, q, codes_q4_0, kv_dot_q4_0_ref);
}
void kv_axpy_q4_0_avx2(const void* row, int first, int n, float a, float* out) {
  axpy_blocks<BlockQ4_0>(row, first, n, a, out, codes_q4_0, kv_axpy_q4_0_ref);
}

void kv_axpy_f16_avx2(const void* row, int first, int n, float a, float* out) {
  const auto* v = static_cast<const std::uint16_t*>(row) + first;
  const __m256 va = _mm256_set1_ps(a);
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i)));
    _mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_loadu_ps(out + i), _mm256_mul_ps(va, x)));
  }
  for (; i < n; ++i) out[i] += a * fp16(v[i]);
}

void kv_axpy_f32_avx2(const void* row, int first, int n, float a, float* out) {
  const float* v = static_cast<const float*>(row) + first;
  const __m256 va = _mm256_set1_ps(a);
  int i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_loadu_ps(out + i), _mm256_mul_ps(va, _mm256_loadu_ps(v + i))));
  for (; i < n; ++i) out[i] += a * v[i];
}

void kv_scores_q8_0_avx2(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, float scale,
                         float* scores) {
  if (first % 32 != 0 || n % 32 != 0) return kv_scores_by_row<kv_dot_q8_0_avx2>(rows, row_bytes, count, first, n, q, scale, scores);
  scores_blocks<BlockQ8_0>(rows, row_bytes, count, first, n, q, scale, scores, codes_q8_0);
}
void kv_mix_q8_0_avx2(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, float* out) {
  if (first % 32 != 0 || n % 32 != 0) return kv_mix_by_row<kv_axpy_q8_0_avx2>(rows, row_bytes, count, first, n, w, out);
  mix_blocks<BlockQ8_0>(rows, row_bytes, count, first, n, w, out, codes_q8_0);
}
void kv_scores_q4_0_avx2(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, float scale,
                         float* scores) {
  if (first % 32 != 0 || n % 32 != 0) return kv_scores_by_row<kv_dot_q4_0_avx2>(rows, row_bytes, count, first, n, q, scale, scores);
  scores_blocks<BlockQ4_0>(rows, row_bytes, count, first, n, q, scale, scores, codes_q4_0);
}
void kv_mix_q4_0_avx2(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, float* out) {
  if (first % 32 != 0 || n % 32 != 0) return kv_mix_by_row<kv_axpy_q4_0_avx2>(rows, row_bytes, count, first, n, w, out);
  mix_blocks<BlockQ4_0>(rows, row_bytes, count, first, n, w, out, codes_q4_0);
}

}  // namespace trilemma::engine
