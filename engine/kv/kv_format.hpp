// The one table of KV-cache storage formats: how a row of K or V (kv_dim floats of one token,
// all KV heads side by side) is stored, and the two operations attention needs on a stored
// row: the dot product of a query head with a slice of it, and out += a * slice. Blocks run
// along kv_dim, so a head narrower than a block (stories260K: head_dim 8, blocks of 32) reads
// the part of the block it owns with the block's scale. Layouts and bytes per element:
// docs/formats.md ("KV cache"). Adding a format is one row in kv_format_table.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/quant/kernel_table.hpp"
#include "types/tensor_type.hpp"

namespace trilemma::engine {

// n elements of the row starting at element `first`; REQUIRES: the slice lies in the row.
using KvStoreRowFn = void (*)(const float* x, void* row, int kv_dim);               // quantize a row
using KvDotFn = float (*)(const void* row, int first, int n, const float* q);       // q . row[first, first + n)
using KvAxpyFn = void (*)(const void* row, int first, int n, float a, float* out);  // out[i] += a * row[first + i]
// The same over a run of `count` stored rows, row_bytes apart (one page's positions), so that
// attention makes one call per run, not two per position:
//   scores: scores[r] = dot(row r) / scale
//   mix:    out += w[r] * row r, for r = 0, 1, ... in order
// A format's run kernels give, row by row, exactly what its dot (then / scale) and axpy give.
using KvScoresKernel = void(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q,
                            float scale, float* scores);
using KvMixKernel = void(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w,
                         float* out);
using KvScoresFn = KvScoresKernel*;
using KvMixFn = KvMixKernel*;
// mix for `heads` query heads of one kv head over the same run: head h's weights at
// w + h * w_stride, its output at out + h * out_stride; exactly `heads` calls of the format's mix
// (bit for bit), with each row loaded once for all of them.
using KvMixHeadsKernel = void(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w,
                              std::size_t w_stride, int heads, float* out, std::size_t out_stride);
using KvMixHeadsFn = KvMixHeadsKernel*;
// scores for `heads` query heads of one kv head over the same run: head h's query at
// q + h * q_stride, its scores at scores + h * scores_stride; exactly `heads` calls of the
// format's scores (bit for bit), with each row loaded once for two heads.
using KvScoresHeadsKernel = void(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q,
                                 std::size_t q_stride, int heads, float scale, float* scores, std::size_t scores_stride);
using KvScoresHeadsFn = KvScoresHeadsKernel*;

// The run kernels of a format from its row kernels, for formats with no tiled kernel. Inlined
// where instantiated beside the row kernels.
template <KvDotFn Dot>
void kv_scores_by_row(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* q, float scale,
                      float* scores) {
  for (int r = 0; r < count; ++r) scores[r] = Dot(rows + std::size_t(r) * row_bytes, first, n, q) / scale;
}
template <KvAxpyFn Axpy>
void kv_mix_by_row(const std::byte* rows, std::size_t row_bytes, int count, int first, int n, const float* w, float* out) {
  for (int r = 0; r < count; ++r) Axpy(rows + std::size_t(r) * row_bytes, first, n, w[r], out);
}

struct KvFormatKernels {
  TensorType type;
  KvStoreRowFn store_row;  // scalar reference = the definition (the weight formats' quantizers)
  KvDotFn dot_ref;
  KvAxpyFn axpy_ref;
  KvDotFn dot_avx2;    // SIMD columns (simd/avx2/kv_avx2.cpp, x86-64 only); nullptr when
  KvAxpyFn axpy_avx2;  // absent: select_kv_* fall back to the _ref column. axpy_avx2 == axpy_ref
                       // bit for bit; dot_avx2 differs only in float summation order.
  // Run kernels, the attention's entry points: _ref from the _ref row kernels; _avx2 tiled over
  // positions (eight dots at once, the output kept in registers across the run; q8_0/q4_0 on
  // slices of whole blocks, the avx2 row kernels in a loop otherwise). mix_avx2 == mix_ref bit for bit; scores_avx2 differs
  // only in float summation order. nullptr: as for the row columns.
  KvScoresFn scores_ref;
  KvMixFn mix_ref;
  KvScoresFn scores_avx2;
  KvMixFn mix_avx2;
  // AVX-512 run kernels (simd/avx512/kv_avx512.cpp), chosen when the ISA is avx512vnni: every
  // format with sixteen lanes, under the same contracts as the _avx2 pair (mix bit for bit; scores
  // within rounding and independent of the run). nullptr: the _avx2 pair serves.
  KvScoresFn scores_avx512;
  KvMixFn mix_avx512;
  // AVX-512 mix of several heads at once (KvMixHeadsKernel): a single head's mix waits on its
  // add chains (one add per position and column, in order), so the heads' chains interleave and
  // share each row's load and conversion. nullptr: attention calls mix head by head.
  KvMixHeadsFn mix_heads_avx512 = nullptr;
  // The same for scores (KvScoresHeadsKernel): two heads share each row's load and conversion.
  KvScoresHeadsFn scores_heads_avx512 = nullptr;
};

std::span<const KvFormatKernels> kv_format_kernels();
// nullptr when `type` is not a KV storage format of this engine.
const KvFormatKernels* find_kv_format(TensorType type);
KvDotFn select_kv_dot(const KvFormatKernels& k, Isa isa);
KvAxpyFn select_kv_axpy(const KvFormatKernels& k, Isa isa);
KvScoresFn select_kv_scores(const KvFormatKernels& k, Isa isa);
KvMixFn select_kv_mix(const KvFormatKernels& k, Isa isa);
// The several-heads mix for `isa`, or nullptr (then select_kv_mix's column, head by head).
KvMixHeadsFn select_kv_mix_heads(const KvFormatKernels& k, Isa isa);
KvScoresHeadsFn select_kv_scores_heads(const KvFormatKernels& k, Isa isa);
// Bytes of one stored row of kv_dim elements. REQUIRES: kv_dim a multiple of the block.
std::uint64_t kv_row_bytes(TensorType type, int kv_dim);

// The rows (kv_format_*.cpp).
float kv_dot_f32_ref(const void* row, int first, int n, const float* q);
void kv_axpy_f32_ref(const void* row, int first, int n, float a, float* out);
float kv_dot_f32_avx2(const void* row, int first, int n, const float* q);
float kv_dot_f16_ref(const void* row, int first, int n, const float* q);
void kv_axpy_f16_ref(const void* row, int first, int n, float a, float* out);
float kv_dot_f16_avx2(const void* row, int first, int n, const float* q);
float kv_dot_q8_0_ref(const void* row, int first, int n, const float* q);
void kv_axpy_q8_0_ref(const void* row, int first, int n, float a, float* out);
float kv_dot_q4_0_ref(const void* row, int first, int n, const float* q);
void kv_axpy_q4_0_ref(const void* row, int first, int n, float a, float* out);
// simd/avx2/kv_avx2.cpp (x86-64 builds only)
void kv_axpy_f32_avx2(const void* row, int first, int n, float a, float* out);
void kv_axpy_f16_avx2(const void* row, int first, int n, float a, float* out);
float kv_dot_q8_0_avx2(const void* row, int first, int n, const float* q);
void kv_axpy_q8_0_avx2(const void* row, int first, int n, float a, float* out);
float kv_dot_q4_0_avx2(const void* row, int first, int n, const float* q);
void kv_axpy_q4_0_avx2(const void* row, int first, int n, float a, float* out);
KvScoresKernel kv_scores_f32_avx2, kv_scores_f16_avx2, kv_scores_q8_0_avx2, kv_scores_q4_0_avx2;
KvMixKernel kv_mix_f32_avx2, kv_mix_f16_avx2, kv_mix_q8_0_avx2, kv_mix_q4_0_avx2;
// simd/avx512/kv_avx512.cpp (x86-64 builds only)
KvScoresKernel kv_scores_f32_avx512, kv_scores_f16_avx512, kv_scores_q8_0_avx512, kv_scores_q4_0_avx512;
KvMixKernel kv_mix_f32_avx512, kv_mix_f16_avx512, kv_mix_q8_0_avx512, kv_mix_q4_0_avx512;
KvMixHeadsKernel kv_mix_heads_f32_avx512, kv_mix_heads_f16_avx512;
KvScoresHeadsKernel kv_scores_heads_f32_avx512, kv_scores_heads_f16_avx512;

}  // namespace trilemma::engine
