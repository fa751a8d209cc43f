// Every kernel that exists, named weight_activation_isa. The scalar `_ref` functions are the
// definition of each format; SIMD twins must match them within the table's dot_tolerance.
// n is the element count of the row; REQUIRES: n is a multiple of the format's block size.
#pragma once
#include <cstddef>
#include <cstdint>

namespace trilemma::engine {

using QuantizeRowFn = void (*)(const float* x, void* y, std::int64_t n);
using DequantizeRowFn = void (*)(const void* x, float* y, std::int64_t n);
using DotFn = float (*)(const void* w, const void* a, std::int64_t n);
// One weight row against 4 activation rows `stride` bytes apart: out[j] = dot(w, a + j * stride).
// The prefill kernel: each weight block is loaded once for four tokens.
using Dot4Fn = void (*)(const void* w, const void* a, std::size_t stride, std::int64_t n, float* out);

// quantize_row_* / dequantize_row_*: quant_ref_*.cpp
void quantize_row_f32(const float* x, void* y, std::int64_t n);
void quantize_row_f16(const float* x, void* y, std::int64_t n);
void quantize_row_bf16(const float* x, void* y, std::int64_t n);
void quantize_row_q8_0(const float* x, void* y, std::int64_t n);
void quantize_row_q4_0(const float* x, void* y, std::int64_t n);
void quantize_row_q4_k(const float* x, void* y, std::int64_t n);
void quantize_row_q5_k(const float* x, void* y, std::int64_t n);
void quantize_row_q6_k(const float* x, void* y, std::int64_t n);
void quantize_row_tq3_t(const float* x, void* y, std::int64_t n);
void quantize_row_tq2_t(const float* x, void* y, std::int64_t n);

void dequantize_row_f32(const void* x, float* y, std::int64_t n);
void dequantize_row_f16(const void* x, float* y, std::int64_t n);
void dequantize_row_bf16(const void* x, float* y, std::int64_t n);
void dequantize_row_q8_0(const void* x, float* y, std::int64_t n);
void dequantize_row_q4_0(const void* x, float* y, std::int64_t n);
void dequantize_row_q4_k(const void* x, float* y, std::int64_t n);
void dequantize_row_q5_k(const void* x, float* y, std::int64_t n);
void dequantize_row_q6_k(const void* x, float* y, std::int64_t n);
void dequantize_row_tq3_t(const void* x, float* y, std::int64_t n);
void dequantize_row_tq2_t(const void* x, float* y, std::int64_t n);

float dot_f32_f32_ref(const void* w, const void* a, std::int64_t n);
float dot_f16_f32_ref(const void* w, const void* a, std::int64_t n);
float dot_bf16_f32_ref(const void* w, const void* a, std::int64_t n);
float dot_q8_0_q8_0_ref(const void* w, const void* a, std::int64_t n);
float dot_q4_0_q8_0_ref(const void* w, const void* a, std::int64_t n);
float dot_q4_k_q8_0_ref(const void* w, const void* a, std::int64_t n);
float dot_q5_k_q8_0_ref(const void* w, const void* a, std::int64_t n);
float dot_q6_k_q8_0_ref(const void* w, const void* a, std::int64_t n);
float dot_tq3_t_q8_0_ref(const void* w, const void* a, std::int64_t n);
float dot_tq2_t_q8_0_ref(const void* w, const void* a, std::int64_t n);

// engine/simd/avx2/dot_avx2.cpp (AVX2 + FMA + F16C; x86-64 builds only)
float dot_f32_f32_avx2(const void* w, const void* a, std::int64_t n);
float dot_f16_f32_avx2(const void* w, const void* a, std::int64_t n);
float dot_bf16_f32_avx2(const void* w, const void* a, std::int64_t n);
float dot_q8_0_q8_0_avx2(const void* w, const void* a, std::int64_t n);
float dot_q4_0_q8_0_avx2(const void* w, const void* a, std::int64_t n);
float dot_tq3_t_q8_0_avx2(const void* w, const void* a, std::int64_t n);
float dot_tq2_t_q8_0_avx2(const void* w, const void* a, std::int64_t n);
void dot4_q8_0_q8_0_avx2(const void* w, const void* a, std::size_t stride, std::int64_t n, float* out);
void dot4_q4_0_q8_0_avx2(const void* w, const void* a, std::size_t stride, std::int64_t n, float* out);

// engine/simd/neon/dot_neon.cpp (ARMv8.0 NEON; aarch64 builds only)
float dot_f32_f32_neon(const void* w, const void* a, std::int64_t n);
float dot_q8_0_q8_0_neon(const void* w, const void* a, std::int64_t n);
float dot_q4_0_q8_0_neon(const void* w, const void* a, std::int64_t n);

}  // namespace trilemma::engine
