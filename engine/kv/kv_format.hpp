// The one table of KV-cache storage formats: how a row of K or V (kv_dim floats of one token,
// all KV heads side by side) is stored, and the two operations attention needs on a stored
// row: the dot product of a query head with a slice of it, and out += a * slice. Blocks run
// along kv_dim, so a head narrower than a block (stories260K: head_dim 8, blocks of 32) reads
// the part of the block it owns with the block's scale. Layouts and bytes per element:
// docs/formats.md ("KV cache"). Adding a format is one row in kv_format_table.cpp.
#pragma once
#include <cstdint>
#include <span>

#include "engine/quant/kernel_table.hpp"
#include "types/tensor_type.hpp"

namespace trilemma::engine {

// n elements of the row starting at element `first`; REQUIRES: the slice lies in the row.
using KvStoreRowFn = void (*)(const float* x, void* row, int kv_dim);               // quantize a row
using KvDotFn = float (*)(const void* row, int first, int n, const float* q);       // q . row[first, first + n)
using KvAxpyFn = void (*)(const void* row, int first, int n, float a, float* out);  // out[i] += a * row[first + i]

struct KvFormatKernels {
  TensorType type;
  KvStoreRowFn store_row;  // scalar reference = the definition (the weight formats' quantizers)
  KvDotFn dot_ref;
  KvAxpyFn axpy_ref;
  KvDotFn dot_avx2;    // SIMD columns (simd/avx2/kv_avx2.cpp, x86-64 only); nullptr when
  KvAxpyFn axpy_avx2;  // absent: select_kv_* fall back to the _ref column. axpy_avx2 == axpy_ref
                       // bit for bit; dot_avx2 differs only in float summation order.
};

std::span<const KvFormatKernels> kv_format_kernels();
// nullptr when `type` is not a KV storage format of this engine.
const KvFormatKernels* find_kv_format(TensorType type);
KvDotFn select_kv_dot(const KvFormatKernels& k, Isa isa);
KvAxpyFn select_kv_axpy(const KvFormatKernels& k, Isa isa);
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

}  // namespace trilemma::engine
