// The one table of weight formats the engine can compute with, and run-time kernel dispatch.
// Adding a format is one row in kernel_table.cpp; nothing else switches on the format.
#pragma once
#include <optional>
#include <span>
#include <string_view>

#include "engine/quant/kernels.hpp"
#include "engine/quant/x16_layout.hpp"
#include "engine/quant/x4_layout.hpp"
#include "types/tensor_type.hpp"

namespace trilemma::engine {

struct FormatKernels {
  TensorType weight, activation;  // activations are quantized to `activation` before the dot
  QuantizeRowFn quantize;         // scalar reference = the definition of the format
  DequantizeRowFn dequantize;
  DotFn dot_ref, dot_avx2, dot_neon;  // SIMD columns are nullptr when absent
  float dot_tolerance;    // |simd - ref| <= tol * sum(|w_i * a_i|) over the dequantized values
  float roundtrip_rms;    // rms(x - dequant(quant(x))) / rms(x) on N(0, 1) data is below this
  // Optional fast path: rows repacked by pack_x4 (same size) and multiplied by the AVX-512 VNNI
  // tile over a Q8 panel. Matrices whose rows are not a multiple of 128 stay in ggml layout.
  PackRowFn pack_x4 = nullptr;
  TileFn tile_x4_avx512 = nullptr;
  // ARMv8.2 dot-product column (SDOT: 16 int8 products per instruction into 4 int32 lanes);
  // cores without it (Cortex-A53/A72) use dot_neon's widening multiplies.
  DotFn dot_dotprod = nullptr;
  // AVX-512 rows x tokens kernel for formats with f32 activations (kernels.hpp RowsFn): decode
  // and batched prefill share it, so their floats agree bit for bit.
  RowsFn rows_avx512 = nullptr;
  // Faster path where it exists: strips of 16 rows packed by pack_x16 (same size), multiplied
  // by the AVX-512 VNNI strip kernel over the same panel. Preferred over x4 for matrices whose
  // rows are a multiple of 16 (and cols of 128); the x4 tile takes the rest.
  PackStripFn pack_x16 = nullptr;
  StripFn strip_x16_avx512 = nullptr;
  // AVX2 one-row-several-tokens twin of dot_avx2 (kernels.hpp DotMultiFn), for prefill in ggml
  // layout: the row's unpacking is shared by up to k_dot_multi_tokens tokens.
  DotMultiFn dot_multi_avx2 = nullptr;
  // AVX-512 VNNI twins of dot_avx2 and dot_multi_avx2 (64 codes per instruction, the scale
  // multiply fused with the add). Same bits as the AVX2 columns: tested bit for bit.
  DotFn dot_avx512 = nullptr;
  DotMultiFn dot_multi_avx512 = nullptr;
  // AVX-512 twin of `quantize` (byte for byte, tested), for formats that are some format's
  // activations: each prompt token is quantized once per matrix input.
  QuantizeRowFn quantize_avx512 = nullptr;
  // AMX-INT8 twin of strip_x16_avx512 on the same x16 matrices (same bits, tested), picked by
  // select_strip where the CPU and the OS allow the tiles.
  StripFn strip_x16_amx = nullptr;
  // AMX-BF16 rows x tokens kernel over the bf16 panel (quant/bf16_panel.hpp), for formats with
  // f32 activations; picked by select_rows_amx for decode and prefill alike (their floats agree
  // bit for bit; against the _ref dot within k_bf16_split_tolerance, tested).
  PanelRowsFn rows_amx = nullptr;
  // Arm i8mm rows x tokens kernel (SMMLA: 2 rows x 2 tokens x 8 codes per instruction) over
  // ggml-layout rows and quantized activations, each result the dotprod dot's bits (tested);
  // picked by select_rows_i8mm for calls of two or more tokens.
  RowsQ8Fn rows_i8mm = nullptr;
};

// avx512vnni implies avx2: formats without a tile use their avx2 dot. dotprod implies neon:
// formats without a dotprod column use their neon dot.
enum class Isa { scalar, avx2, avx512vnni, neon, dotprod };
std::string_view isa_name(Isa isa);  // "scalar" | "avx2" | "avx512vnni" | "neon" | "dotprod"

std::span<const FormatKernels> format_kernels();
// nullptr when the engine has no kernels for `type`.
const FormatKernels* find_kernels(TensorType type);

// Best ISA of this CPU, or scalar when force_scalar or TRILEMMA_FORCE_SCALAR=1 is set.
// TRILEMMA_ISA=scalar|avx2|avx512vnni|neon|dotprod caps the choice (never raises it above the CPU's).
Isa detect_isa(bool force_scalar = false);
// The kernel for `isa`, falling back to the `_ref` column where that column is empty.
DotFn select_dot(const FormatKernels& k, Isa isa);
// The x4 tile for `isa`, or nullptr (then matrices stay in ggml layout and use select_dot).
TileFn select_tile(const FormatKernels& k, Isa isa);
// The x16 strip kernel for `isa`, or nullptr: the AMX column when amx_tiles() and the row has one.
StripFn select_strip(const FormatKernels& k, Isa isa);
// Whether the strips run on AMX tiles: cpu_features().amx_int8, unless TRILEMMA_AMX=0 (for A/B
// measurements against the VNNI strips, whose results are the same bits); read once per process.
bool amx_tiles();
// Whether the float rows run on AMX-BF16 tiles: cpu_features().amx_bf16, unless TRILEMMA_AMX=0.
bool amx_bf16_tiles();
// The AMX rows column when amx_bf16_tiles() and the row has one, else nullptr (then select_rows).
PanelRowsFn select_rows_amx(const FormatKernels& k, Isa isa);
// The packer of the bf16 panel for `isa`: the AVX-512 twin under avx512vnni, else the reference.
using PackBf16TokenFn = void (*)(const float* x, int t, Bf16Panel& panel);
PackBf16TokenFn select_pack_bf16_panel_token(Isa isa);
// Whether the i8mm rows run: cpu_features().i8mm, unless TRILEMMA_I8MM=0 (A/B measurements
// against the dotprod dots, whose results are the same bits); read once per process.
bool i8mm_rows();
// The i8mm rows column under dotprod when i8mm_rows() and the row has one, else nullptr.
RowsQ8Fn select_rows_i8mm(const FormatKernels& k, Isa isa);
// The rows x tokens kernel for `isa`, or nullptr (then the matmul calls the dot per row and token).
RowsFn select_rows(const FormatKernels& k, Isa isa);
// The quantizer for `isa`: the AVX-512 column where it exists, else the reference.
QuantizeRowFn select_quantize(const FormatKernels& k, Isa isa);
// The packer of the tiles' and strips' Q8 panel (quant/q8_panel.hpp) for `isa`: the AVX-512
// twin where the panel kernels run, else the reference.
using PackPanelTokenFn = void (*)(const std::byte* row, int t, Q8Panel& panel);
PackPanelTokenFn select_pack_q8_panel_token(Isa isa);
// The multi-token twin of select_dot's column for `isa`, or nullptr.
DotMultiFn select_dot_multi(const FormatKernels& k, Isa isa);
// Which column the matmul uses for this format under `isa`, for reports.
Isa dot_isa(const FormatKernels& k, Isa isa);

}  // namespace trilemma::engine
