// The one table of weight formats the engine can compute with, and run-time kernel dispatch.
// Adding a format is one row in kernel_table.cpp; nothing else switches on the format.
#pragma once
#include <optional>
#include <span>
#include <string_view>

#include "engine/quant/kernels.hpp"
#include "types/tensor_type.hpp"

namespace trilemma::engine {

struct FormatKernels {
  TensorType weight, activation;  // activations are quantized to `activation` before the dot
  QuantizeRowFn quantize;         // scalar reference = the definition of the format
  DequantizeRowFn dequantize;
  DotFn dot_ref, dot_avx2, dot_neon;  // SIMD columns are nullptr when absent
  float dot_tolerance;    // |simd - ref| <= tol * sum(|w_i * a_i|) over the dequantized values
  float roundtrip_rms;    // rms(x - dequant(quant(x))) / rms(x) on N(0, 1) data is below this
  Dot4Fn dot4_avx2 = nullptr;  // prefill tile: 1 weight row x 4 activation rows; nullptr = use dot
};

enum class Isa { scalar, avx2, neon };
std::string_view isa_name(Isa isa);  // "scalar" | "avx2" | "neon"

std::span<const FormatKernels> format_kernels();
// nullptr when the engine has no kernels for `type`.
const FormatKernels* find_kernels(TensorType type);

// Best ISA of this CPU, or scalar when force_scalar or TRILEMMA_FORCE_SCALAR=1 is set.
Isa detect_isa(bool force_scalar = false);
// The kernel for `isa`, falling back to the `_ref` column where that column is empty.
DotFn select_dot(const FormatKernels& k, Isa isa);
// The 4-token prefill tile for `isa`, or nullptr (then call the dot four times).
Dot4Fn select_dot4(const FormatKernels& k, Isa isa);
// Which column select_dot() used, for reports.
Isa dot_isa(const FormatKernels& k, Isa isa);

}  // namespace trilemma::engine
