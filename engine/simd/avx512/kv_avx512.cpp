// AVX-512 columns of the KV format table (kv/kv_format_table.cpp) for f32 and f16 rows: the
// run kernels with sixteen lanes, chosen on CPUs whose ISA is avx512vnni (AVX-512 F/BW/VL are
// part of it). Compiled with -mavx512f -mavx512vl -mf16c -mfma -ffp-contract=off.
//   scores: eight positions at once, one 16-lane accumulator each; each accumulator is folded
//           to 8 lanes (lane i + lane i + 8) and the eight are summed together in the AVX2
//           column's tree. A run's last < 8 positions take the same fold and tree one at a time,
//           so a score does not depend on where its position falls in a run. Heads that are not
//           a multiple of 16 wide use the AVX2 column.
//   mix:    64 output columns in four registers across the run (then 16, then the AVX2 code),
//           the same multiply-then-add per element in position order as mix_ref: bit-identical.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "engine/kv/kv_format.hpp"
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
template <class L>
void scores_tiled(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, float scale,
                  float* scores) {
  const __m256 vscale = _mm256_set1_ps(scale);
  int r = 0;
  for (; r + 8 <= count; r += 8) {
    __m512 acc[8];
    const typename L::Elem* k[8];
    for (int p = 0; p < 8; ++p) acc[p] = _mm512_setzero_ps(), k[p] = row_at<L>(rows, row_bytes, r + p, first);
    for (int j = 0; j < n; j += 16) {
      const __m512 qv = _mm512_loadu_ps(q + j);
      for (int p = 0; p < 8; ++p) acc[p] = _mm512_fmadd_ps(qv, L::load(k[p] + j), acc[p]);
    }
    __m256 half[8];
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

template <class L>
int mix_tiled(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, float* out) {
  int j = 0;
  for (; j + 64 <= n; j += 64) {
    __m512 acc[4];
    for (int c = 0; c < 4; ++c) acc[c] = _mm512_loadu_ps(out + j + 16 * c);
    for (int r = 0; r < count; ++r) {
      const typename L::Elem* v = row_at<L>(rows, row_bytes, r, first) + j;
      const __m512 a = _mm512_set1_ps(w[r]);
      for (int c = 0; c < 4; ++c) acc[c] = _mm512_add_ps(acc[c], _mm512_mul_ps(a, L::load(v + 16 * c)));
    }
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

}  // namespace trilemma::engine
