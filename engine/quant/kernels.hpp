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
struct Q8Panel;  // quant/q8_panel.hpp
struct Bf16Panel;  // quant/bf16_panel.hpp
// `rows` consecutive weight rows in the x4 layout (x4_layout.hpp: row r's 64-byte aligned codes
// at codes + r * code_stride, its fp16 scales at scales + r * scale_stride) against tokens
// t0 .. t0 + nt - 1 (nt <= 8) of a Q8 panel: out[r + j * out_stride] = dot(row r, token t0 + j).
// Decode (nt = 1) and prefill (each weight group loaded once per 8 tokens) share it.
using TileFn = void (*)(const std::uint8_t* codes, std::size_t code_stride, const std::uint16_t* scales,
                        std::size_t scale_stride, int rows, const Q8Panel& panel, int t0, int nt, float* out,
                        std::size_t out_stride);

// `strips` consecutive strips of 16 weight rows in the x16 layout (x16_layout.hpp: strip s's
// codes at codes + s * x16_strip_code_bytes(row bytes, blocks), its scales at scales + s * 16 * blocks)
// against tokens t0 .. t0 + nt - 1 of a Q8 panel (Q8_0 formats read its packed arrays; Q4_K and
// Q6_K, whose activations are Q8_K, read only its `rows`) (any nt: the kernel takes them in slabs of 8
// and keeps a few strips in L2 across the slabs): out[r + j * out_stride] = dot(row r, token
// t0 + j) for the strips' 16 * strips rows.
using StripFn = void (*)(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int strips,
                         const Q8Panel& panel, int t0, int nt, float* out, std::size_t out_stride);

// `rows` consecutive weight rows in ggml layout (row r at w + r * w_row_bytes) against nt tokens
// of f32 activations (token t at x + t * x_stride): out[r + t * out_stride] = dot(row r, token t).
// For formats whose activations stay f32 (f32, f16), so a row is converted once per few tokens.
using RowsFn = void (*)(const void* w, std::size_t w_row_bytes, int rows, const float* x, std::size_t x_stride, int nt,
                        std::int64_t n, float* out, std::size_t out_stride);

// `rows` consecutive weight rows in ggml layout (row r at w + r * w_row_bytes) against tokens
// t0 .. t0 + nt - 1 of a bf16 panel (REQUIRES t0 % 16 == 0; the panel's n is the row length):
// out[r + j * out_stride] = dot(row r, token t0 + j). Decode and prefill share it.
using PanelRowsFn = void (*)(const void* w, std::size_t w_row_bytes, int rows, const Bf16Panel& panel, int t0, int nt, float* out,
                             std::size_t out_stride);

// `rows` weight rows in ggml layout (row r at w + r * w_row_bytes) against nt tokens of quantized
// activations (token t at a + t * a_stride bytes): out[r + t * out_stride] = dot(row r, token t),
// for any rows and nt. Each result equals the format's dot for the same ISA bit for bit, so
// batched prefill and decode agree.
using RowsQ8Fn = void (*)(const void* w, std::size_t w_row_bytes, int rows, const void* a, std::size_t a_stride, int nt,
                          std::int64_t n, float* out, std::size_t out_stride);

// One weight row against nt <= k_dot_multi_tokens activation rows (token t at a + t * a_stride
// bytes): out[t] = dot(w, token t). The row is unpacked once for all of them; each token's
// result equals the single-token dot's bit for bit (the dot is this kernel with nt = 1).
inline constexpr int k_dot_multi_tokens = 4;
using DotMultiFn = void (*)(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out);

// quantize_row_* / dequantize_row_*: quant_ref_*.cpp
void quantize_row_f32(const float* x, void* y, std::int64_t n);
void quantize_row_f16(const float* x, void* y, std::int64_t n);
void quantize_row_bf16(const float* x, void* y, std::int64_t n);
void quantize_row_q8_0(const float* x, void* y, std::int64_t n);
void quantize_row_q4_0(const float* x, void* y, std::int64_t n);
void quantize_row_q4_1(const float* x, void* y, std::int64_t n);
void quantize_row_q5_0(const float* x, void* y, std::int64_t n);
void quantize_row_q5_1(const float* x, void* y, std::int64_t n);
void quantize_row_iq4_nl(const float* x, void* y, std::int64_t n);
void quantize_row_q2_k(const float* x, void* y, std::int64_t n);
void quantize_row_q3_k(const float* x, void* y, std::int64_t n);
void quantize_row_q4_k(const float* x, void* y, std::int64_t n);
void quantize_row_q8_k(const float* x, void* y, std::int64_t n);
void quantize_row_q5_k(const float* x, void* y, std::int64_t n);
void quantize_row_q6_k(const float* x, void* y, std::int64_t n);
void quantize_row_tq3_t(const float* x, void* y, std::int64_t n);
void quantize_row_tq2_t(const float* x, void* y, std::int64_t n);

void dequantize_row_f32(const void* x, float* y, std::int64_t n);
void dequantize_row_f16(const void* x, float* y, std::int64_t n);
void dequantize_row_bf16(const void* x, float* y, std::int64_t n);
void dequantize_row_q8_0(const void* x, float* y, std::int64_t n);
void dequantize_row_q4_0(const void* x, float* y, std::int64_t n);
void dequantize_row_q4_1(const void* x, float* y, std::int64_t n);
void dequantize_row_q5_0(const void* x, float* y, std::int64_t n);
void dequantize_row_q5_1(const void* x, float* y, std::int64_t n);
void dequantize_row_iq4_nl(const void* x, float* y, std::int64_t n);
void dequantize_row_q2_k(const void* x, float* y, std::int64_t n);
void dequantize_row_q3_k(const void* x, float* y, std::int64_t n);
void dequantize_row_q4_k(const void* x, float* y, std::int64_t n);
void dequantize_row_q8_k(const void* x, float* y, std::int64_t n);
void dequantize_row_q5_k(const void* x, float* y, std::int64_t n);
void dequantize_row_q6_k(const void* x, float* y, std::int64_t n);
void dequantize_row_tq3_t(const void* x, float* y, std::int64_t n);
void dequantize_row_tq2_t(const void* x, float* y, std::int64_t n);

float dot_f32_f32_ref(const void* w, const void* a, std::int64_t n);
float dot_f16_f32_ref(const void* w, const void* a, std::int64_t n);
float dot_bf16_f32_ref(const void* w, const void* a, std::int64_t n);
float dot_q8_0_q8_0_ref(const void* w, const void* a, std::int64_t n);
float dot_q4_0_q8_0_ref(const void* w, const void* a, std::int64_t n);
float dot_q4_1_q8_0_ref(const void* w, const void* a, std::int64_t n);
float dot_q5_0_q8_0_ref(const void* w, const void* a, std::int64_t n);
float dot_q5_1_q8_0_ref(const void* w, const void* a, std::int64_t n);
float dot_iq4_nl_q8_0_ref(const void* w, const void* a, std::int64_t n);
float dot_q2_k_q8_k_ref(const void* w, const void* a, std::int64_t n);
float dot_q3_k_q8_k_ref(const void* w, const void* a, std::int64_t n);
float dot_q4_k_q8_k_ref(const void* w, const void* a, std::int64_t n);
float dot_q8_k_q8_k_ref(const void* w, const void* a, std::int64_t n);
float dot_q5_k_q8_k_ref(const void* w, const void* a, std::int64_t n);
float dot_q6_k_q8_k_ref(const void* w, const void* a, std::int64_t n);
float dot_tq3_t_q8_0_ref(const void* w, const void* a, std::int64_t n);
float dot_tq2_t_q8_0_ref(const void* w, const void* a, std::int64_t n);

// engine/simd/avx2/dot_avx2.cpp (AVX2 + FMA + F16C; x86-64 builds only)
float dot_f32_f32_avx2(const void* w, const void* a, std::int64_t n);
float dot_f16_f32_avx2(const void* w, const void* a, std::int64_t n);
float dot_bf16_f32_avx2(const void* w, const void* a, std::int64_t n);
float dot_q8_0_q8_0_avx2(const void* w, const void* a, std::int64_t n);
float dot_q4_0_q8_0_avx2(const void* w, const void* a, std::int64_t n);
float dot_q4_1_q8_0_avx2(const void* w, const void* a, std::int64_t n);
float dot_q5_0_q8_0_avx2(const void* w, const void* a, std::int64_t n);
float dot_q5_1_q8_0_avx2(const void* w, const void* a, std::int64_t n);
float dot_iq4_nl_q8_0_avx2(const void* w, const void* a, std::int64_t n);
float dot_tq3_t_q8_0_avx2(const void* w, const void* a, std::int64_t n);
float dot_tq2_t_q8_0_avx2(const void* w, const void* a, std::int64_t n);
float dot_q2_k_q8_k_avx2(const void* w, const void* a, std::int64_t n);
float dot_q3_k_q8_k_avx2(const void* w, const void* a, std::int64_t n);
float dot_q4_k_q8_k_avx2(const void* w, const void* a, std::int64_t n);
float dot_q5_k_q8_k_avx2(const void* w, const void* a, std::int64_t n);
float dot_q6_k_q8_k_avx2(const void* w, const void* a, std::int64_t n);
void dot_multi_q2_k_q8_k_avx2(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out);
void dot_multi_q3_k_q8_k_avx2(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out);
void dot_multi_q4_k_q8_k_avx2(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out);
void dot_multi_q5_k_q8_k_avx2(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out);
void dot_multi_q6_k_q8_k_avx2(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out);

// engine/simd/avx512/tile_avx512vnni.cpp (AVX-512 F/BW/VL + VNNI; x86-64 builds only)
void tile_q8_0_x4_avx512vnni(const std::uint8_t* codes, std::size_t code_stride, const std::uint16_t* scales,
                             std::size_t scale_stride, int rows, const Q8Panel& panel, int t0, int nt, float* out,
                             std::size_t out_stride);
void tile_q4_0_x4_avx512vnni(const std::uint8_t* codes, std::size_t code_stride, const std::uint16_t* scales,
                             std::size_t scale_stride, int rows, const Q8Panel& panel, int t0, int nt, float* out,
                             std::size_t out_stride);
// engine/simd/avx512/strip_avx512vnni.cpp (AVX-512 F/BW/VL + VNNI; x86-64 builds only)
void strip_q4_0_x16_avx512vnni(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int strips,
                               const Q8Panel& panel, int t0, int nt, float* out, std::size_t out_stride);
void strip_q8_0_x16_avx512vnni(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int strips,
                               const Q8Panel& panel, int t0, int nt, float* out, std::size_t out_stride);
// engine/simd/avx512/strip_k_avx512vnni.cpp (the same; Q4_K and Q6_K against the Q8_K rows of panel.rows)
void strip_q4_k_x16_avx512vnni(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int strips,
                               const Q8Panel& panel, int t0, int nt, float* out, std::size_t out_stride);
void strip_q6_k_x16_avx512vnni(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int strips,
                               const Q8Panel& panel, int t0, int nt, float* out, std::size_t out_stride);

// engine/simd/amx/strip_amx.cpp (AMX-INT8 + AVX-512; x86-64 builds only, called only when
// cpu_features().amx_int8): the strip kernels on the tile unit, bit for bit the VNNI strips'
// results (below 8 tokens for q8_0 and 16 for q4_0 they are the VNNI strips).
void strip_q4_0_x16_amx(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int strips,
                        const Q8Panel& panel, int t0, int nt, float* out, std::size_t out_stride);
void strip_q8_0_x16_amx(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int strips,
                        const Q8Panel& panel, int t0, int nt, float* out, std::size_t out_stride);
// engine/simd/amx/strip_k_amx.cpp (the same for Q4_K; below 16 tokens the VNNI strips)
void strip_q4_k_x16_amx(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int strips,
                        const Q8Panel& panel, int t0, int nt, float* out, std::size_t out_stride);

// engine/simd/amx/rows_f16_amx.cpp (AMX-BF16 + AVX-512; x86-64 builds only, called only when
// cpu_features().amx_bf16): f16 rows on the tile unit, within k_bf16_split_tolerance of dot_f16_f32_ref.
void rows_f16_bf16_amx(const void* w, std::size_t w_row_bytes, int rows, const Bf16Panel& panel, int t0, int nt, float* out,
                       std::size_t out_stride);

// engine/simd/avx512/dot_k_avx512vnni.cpp (AVX-512 F/BW/VL + VNNI; x86-64 builds only)
float dot_q4_k_q8_k_avx512vnni(const void* w, const void* a, std::int64_t n);
float dot_q5_k_q8_k_avx512vnni(const void* w, const void* a, std::int64_t n);
float dot_q6_k_q8_k_avx512vnni(const void* w, const void* a, std::int64_t n);
void dot_multi_q4_k_q8_k_avx512vnni(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out);
void dot_multi_q5_k_q8_k_avx512vnni(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out);
void dot_multi_q6_k_q8_k_avx512vnni(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out);
// engine/simd/avx512/quantize_avx512.cpp (AVX-512 F/BW/VL; x86-64 builds only)
void quantize_row_q8_k_avx512(const float* x, void* y, std::int64_t n);
void quantize_row_q8_0_avx512(const float* x, void* y, std::int64_t n);
// engine/simd/avx512/rows_avx512.cpp (AVX-512 F/BW/VL; x86-64 builds only)
void rows_f32_f32_avx512(const void* w, std::size_t w_row_bytes, int rows, const float* x, std::size_t x_stride, int nt,
                         std::int64_t n, float* out, std::size_t out_stride);
void rows_f16_f32_avx512(const void* w, std::size_t w_row_bytes, int rows, const float* x, std::size_t x_stride, int nt,
                         std::int64_t n, float* out, std::size_t out_stride);

// engine/simd/neon/dot_neon.cpp (ARMv8.0 NEON; aarch64 builds only)
float dot_f32_f32_neon(const void* w, const void* a, std::int64_t n);
float dot_q8_0_q8_0_neon(const void* w, const void* a, std::int64_t n);
float dot_q4_0_q8_0_neon(const void* w, const void* a, std::int64_t n);
float dot_f16_f32_neon(const void* w, const void* a, std::int64_t n);
float dot_bf16_f32_neon(const void* w, const void* a, std::int64_t n);
float dot_q4_1_q8_0_neon(const void* w, const void* a, std::int64_t n);
float dot_q5_0_q8_0_neon(const void* w, const void* a, std::int64_t n);
float dot_q5_1_q8_0_neon(const void* w, const void* a, std::int64_t n);
float dot_iq4_nl_q8_0_neon(const void* w, const void* a, std::int64_t n);
float dot_tq3_t_q8_0_neon(const void* w, const void* a, std::int64_t n);
float dot_tq2_t_q8_0_neon(const void* w, const void* a, std::int64_t n);
// engine/simd/neon/dot_k_neon.cpp (ARMv8.0 NEON; aarch64 builds only)
float dot_q2_k_q8_k_neon(const void* w, const void* a, std::int64_t n);
float dot_q3_k_q8_k_neon(const void* w, const void* a, std::int64_t n);
float dot_q4_k_q8_k_neon(const void* w, const void* a, std::int64_t n);
float dot_q5_k_q8_k_neon(const void* w, const void* a, std::int64_t n);
float dot_q6_k_q8_k_neon(const void* w, const void* a, std::int64_t n);
// engine/simd/neon_dotprod/dot_neon_dotprod.cpp (ARMv8.2 dotprod; aarch64 builds only, picked at
// run time when the kernel reports asimddp)
float dot_q8_0_q8_0_dotprod(const void* w, const void* a, std::int64_t n);
float dot_q4_0_q8_0_dotprod(const void* w, const void* a, std::int64_t n);
float dot_q4_1_q8_0_dotprod(const void* w, const void* a, std::int64_t n);
float dot_q5_0_q8_0_dotprod(const void* w, const void* a, std::int64_t n);
float dot_q5_1_q8_0_dotprod(const void* w, const void* a, std::int64_t n);
float dot_iq4_nl_q8_0_dotprod(const void* w, const void* a, std::int64_t n);
float dot_tq3_t_q8_0_dotprod(const void* w, const void* a, std::int64_t n);
float dot_tq2_t_q8_0_dotprod(const void* w, const void* a, std::int64_t n);
// engine/simd/neon_i8mm/rows_i8mm.cpp (i8mm SMMLA; aarch64 builds only, picked at run time when
// the kernel reports i8mm): kernels.hpp RowsQ8Fn, each result the dotprod dot's bits
void rows_q8_0_q8_0_i8mm(const void* w, std::size_t w_row_bytes, int rows, const void* a, std::size_t a_stride, int nt,
                         std::int64_t n, float* out, std::size_t out_stride);
void rows_q4_0_q8_0_i8mm(const void* w, std::size_t w_row_bytes, int rows, const void* a, std::size_t a_stride, int nt,
                         std::int64_t n, float* out, std::size_t out_stride);
void rows_q4_k_q8_k_i8mm(const void* w, std::size_t w_row_bytes, int rows, const void* a, std::size_t a_stride, int nt,
                         std::int64_t n, float* out, std::size_t out_stride);
void rows_q6_k_q8_k_i8mm(const void* w, std::size_t w_row_bytes, int rows, const void* a, std::size_t a_stride, int nt,
                         std::int64_t n, float* out, std::size_t out_stride);
// engine/simd/neon_dotprod/dot_k_dotprod.cpp (ARMv8.2 dotprod; aarch64 builds only, as above)
float dot_q2_k_q8_k_dotprod(const void* w, const void* a, std::int64_t n);
float dot_q3_k_q8_k_dotprod(const void* w, const void* a, std::int64_t n);
float dot_q4_k_q8_k_dotprod(const void* w, const void* a, std::int64_t n);
float dot_q5_k_q8_k_dotprod(const void* w, const void* a, std::int64_t n);
float dot_q6_k_q8_k_dotprod(const void* w, const void* a, std::int64_t n);

}  // namespace trilemma::engine
