// The only file that lists which kernels exist. Rows are in TensorType order (checked below);
// formats without kernels (the iq1/iq2/iq3 families, iq4_xs, ...) have no row and the engine refuses to load them.
#include "engine/quant/kernel_table.hpp"

#include "engine/quant/bf16_panel.hpp"
#include "engine/quant/cpu_features.hpp"
#include "engine/quant/q8_panel.hpp"

#include <array>
#include <cstdlib>
#include <cstring>

namespace trilemma::engine {
namespace {

#if defined(__x86_64__)
#define TRILEMMA_X86(fn) fn
#else
#define TRILEMMA_X86(fn) nullptr
#endif
#if defined(__aarch64__)
#define TRILEMMA_NEON(fn) fn
#else
#define TRILEMMA_NEON(fn) nullptr
#endif

using T = TensorType;
// Append new formats in TensorType order.
constexpr std::array k_table = {
    FormatKernels{T::f32, T::f32, quantize_row_f32, dequantize_row_f32, dot_f32_f32_ref,
                  TRILEMMA_X86(dot_f32_f32_avx2), TRILEMMA_NEON(dot_f32_f32_neon), 1e-5f, 0.0f, nullptr, nullptr,
                  nullptr, TRILEMMA_X86(rows_f32_f32_avx512)},
    FormatKernels{T::f16, T::f32, quantize_row_f16, dequantize_row_f16, dot_f16_f32_ref,
                  TRILEMMA_X86(dot_f16_f32_avx2), TRILEMMA_NEON(dot_f16_f32_neon), 1e-5f, 3e-4f, nullptr, nullptr,
                  nullptr, TRILEMMA_X86(rows_f16_f32_avx512), nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                  TRILEMMA_X86(rows_f16_bf16_amx)},
    FormatKernels{T::bf16, T::f32, quantize_row_bf16, dequantize_row_bf16, dot_bf16_f32_ref,
                  TRILEMMA_X86(dot_bf16_f32_avx2), TRILEMMA_NEON(dot_bf16_f32_neon), 1e-5f, 2e-3f},
    FormatKernels{T::q8_0, T::q8_0, quantize_row_q8_0, dequantize_row_q8_0, dot_q8_0_q8_0_ref,
                  TRILEMMA_X86(dot_q8_0_q8_0_avx2), TRILEMMA_NEON(dot_q8_0_q8_0_neon), 1e-5f, 0.006f,
                  pack_row_q8_0_x4, TRILEMMA_X86(tile_q8_0_x4_avx512vnni), TRILEMMA_NEON(dot_q8_0_q8_0_dotprod), nullptr,
                  pack_strip_q8_0_x16, TRILEMMA_X86(strip_q8_0_x16_avx512vnni), nullptr, nullptr, nullptr,
                  TRILEMMA_X86(quantize_row_q8_0_avx512), TRILEMMA_X86(strip_q8_0_x16_amx), nullptr,
                  TRILEMMA_NEON(rows_q8_0_q8_0_i8mm)},
    FormatKernels{T::q4_0, T::q8_0, quantize_row_q4_0, dequantize_row_q4_0, dot_q4_0_q8_0_ref,
                  TRILEMMA_X86(dot_q4_0_q8_0_avx2), TRILEMMA_NEON(dot_q4_0_q8_0_neon), 1e-5f, 0.09f,
                  pack_row_q4_0_x4, TRILEMMA_X86(tile_q4_0_x4_avx512vnni), TRILEMMA_NEON(dot_q4_0_q8_0_dotprod), nullptr,
                  pack_strip_q4_0_x16, TRILEMMA_X86(strip_q4_0_x16_avx512vnni), nullptr, nullptr, nullptr, nullptr,
                  TRILEMMA_X86(strip_q4_0_x16_amx), nullptr, TRILEMMA_NEON(rows_q4_0_q8_0_i8mm)},
    FormatKernels{T::q4_1, T::q8_0, quantize_row_q4_1, dequantize_row_q4_1, dot_q4_1_q8_0_ref,
                  TRILEMMA_X86(dot_q4_1_q8_0_avx2), TRILEMMA_NEON(dot_q4_1_q8_0_neon),
                  1e-5f, 0.08f, nullptr, nullptr, TRILEMMA_NEON(dot_q4_1_q8_0_dotprod)},
    FormatKernels{T::q5_0, T::q8_0, quantize_row_q5_0, dequantize_row_q5_0, dot_q5_0_q8_0_ref,
                  TRILEMMA_X86(dot_q5_0_q8_0_avx2), TRILEMMA_NEON(dot_q5_0_q8_0_neon),
                  1e-5f, 0.044f, nullptr, nullptr, TRILEMMA_NEON(dot_q5_0_q8_0_dotprod)},
    FormatKernels{T::q5_1, T::q8_0, quantize_row_q5_1, dequantize_row_q5_1, dot_q5_1_q8_0_ref,
                  TRILEMMA_X86(dot_q5_1_q8_0_avx2), TRILEMMA_NEON(dot_q5_1_q8_0_neon),
                  1e-5f, 0.039f, nullptr, nullptr, TRILEMMA_NEON(dot_q5_1_q8_0_dotprod)},
    FormatKernels{T::q2_k, T::q8_k, quantize_row_q2_k, dequantize_row_q2_k, dot_q2_k_q8_k_ref, TRILEMMA_X86(dot_q2_k_q8_k_avx2), TRILEMMA_NEON(dot_q2_k_q8_k_neon),
                  1e-5f, 0.34f, nullptr, nullptr, TRILEMMA_NEON(dot_q2_k_q8_k_dotprod), nullptr, nullptr, nullptr,
                  TRILEMMA_X86(dot_multi_q2_k_q8_k_avx2)},
    FormatKernels{T::q3_k, T::q8_k, quantize_row_q3_k, dequantize_row_q3_k, dot_q3_k_q8_k_ref, TRILEMMA_X86(dot_q3_k_q8_k_avx2), TRILEMMA_NEON(dot_q3_k_q8_k_neon),
                  1e-5f, 0.17f, nullptr, nullptr, TRILEMMA_NEON(dot_q3_k_q8_k_dotprod), nullptr, nullptr, nullptr,
                  TRILEMMA_X86(dot_multi_q3_k_q8_k_avx2)},
    FormatKernels{T::q4_k, T::q8_k, quantize_row_q4_k, dequantize_row_q4_k, dot_q4_k_q8_k_ref, TRILEMMA_X86(dot_q4_k_q8_k_avx2), TRILEMMA_NEON(dot_q4_k_q8_k_neon),
                  1e-5f, 0.085f, nullptr, nullptr, TRILEMMA_NEON(dot_q4_k_q8_k_dotprod), nullptr, pack_strip_q4_k_x16,
                  TRILEMMA_X86(strip_q4_k_x16_avx512vnni), TRILEMMA_X86(dot_multi_q4_k_q8_k_avx2), TRILEMMA_X86(dot_q4_k_q8_k_avx512vnni),
                  TRILEMMA_X86(dot_multi_q4_k_q8_k_avx512vnni), nullptr, TRILEMMA_X86(strip_q4_k_x16_amx), nullptr,
                  TRILEMMA_NEON(rows_q4_k_q8_k_i8mm)},
    FormatKernels{T::q5_k, T::q8_k, quantize_row_q5_k, dequantize_row_q5_k, dot_q5_k_q8_k_ref, TRILEMMA_X86(dot_q5_k_q8_k_avx2), TRILEMMA_NEON(dot_q5_k_q8_k_neon),
                  1e-5f, 0.042f, nullptr, nullptr, TRILEMMA_NEON(dot_q5_k_q8_k_dotprod), nullptr, nullptr, nullptr,
                  TRILEMMA_X86(dot_multi_q5_k_q8_k_avx2), TRILEMMA_X86(dot_q5_k_q8_k_avx512vnni),
                  TRILEMMA_X86(dot_multi_q5_k_q8_k_avx512vnni)},
    FormatKernels{T::q6_k, T::q8_k, quantize_row_q6_k, dequantize_row_q6_k, dot_q6_k_q8_k_ref, TRILEMMA_X86(dot_q6_k_q8_k_avx2), TRILEMMA_NEON(dot_q6_k_q8_k_neon),
                  1e-5f, 0.021f, nullptr, nullptr, TRILEMMA_NEON(dot_q6_k_q8_k_dotprod), nullptr, pack_strip_q6_k_x16,
                  TRILEMMA_X86(strip_q6_k_x16_avx512vnni), TRILEMMA_X86(dot_multi_q6_k_q8_k_avx2), TRILEMMA_X86(dot_q6_k_q8_k_avx512vnni),
                  TRILEMMA_X86(dot_multi_q6_k_q8_k_avx512vnni), nullptr, nullptr, nullptr, TRILEMMA_NEON(rows_q6_k_q8_k_i8mm)},
    FormatKernels{.weight = T::q8_k, .activation = T::q8_k, .quantize = quantize_row_q8_k, .dequantize = dequantize_row_q8_k,
                  .dot_ref = dot_q8_k_q8_k_ref, .dot_avx2 = nullptr, .dot_neon = nullptr, .dot_tolerance = 1e-5f,
                  .roundtrip_rms = 0.0075f, .quantize_avx512 = TRILEMMA_X86(quantize_row_q8_k_avx512)},
    FormatKernels{T::iq4_nl, T::q8_0, quantize_row_iq4_nl, dequantize_row_iq4_nl, dot_iq4_nl_q8_0_ref,
                  TRILEMMA_X86(dot_iq4_nl_q8_0_avx2), TRILEMMA_NEON(dot_iq4_nl_q8_0_neon),
                  1e-5f, 0.083f, nullptr, nullptr, TRILEMMA_NEON(dot_iq4_nl_q8_0_dotprod)},
    FormatKernels{T::tq3_t, T::q8_0, quantize_row_tq3_t, dequantize_row_tq3_t, dot_tq3_t_q8_0_ref,
                  TRILEMMA_X86(dot_tq3_t_q8_0_avx2), TRILEMMA_NEON(dot_tq3_t_q8_0_neon), 1e-5f, 0.2f, nullptr, nullptr, TRILEMMA_NEON(dot_tq3_t_q8_0_dotprod)},
    FormatKernels{T::tq2_t, T::q8_0, quantize_row_tq2_t, dequantize_row_tq2_t, dot_tq2_t_q8_0_ref,
                  TRILEMMA_X86(dot_tq2_t_q8_0_avx2), TRILEMMA_NEON(dot_tq2_t_q8_0_neon), 1e-5f, 0.46f, nullptr, nullptr, TRILEMMA_NEON(dot_tq2_t_q8_0_dotprod)},
};

constexpr bool rows_in_enum_order() {
  for (std::size_t i = 1; i < k_table.size(); ++i)
    if (static_cast<int>(k_table[i - 1].weight) >= static_cast<int>(k_table[i].weight)) return false;
  return true;
}
static_assert(rows_in_enum_order(), "kernel table rows must follow TensorType order");

}  // namespace

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx2: return "avx2";
    case Isa::avx512vnni: return "avx512vnni";
    case Isa::neon: return "neon";
    case Isa::dotprod: return "dotprod";
    case Isa::scalar: break;
  }
  return "scalar";
}

std::span<const FormatKernels> format_kernels() { return k_table; }

const FormatKernels* find_kernels(TensorType type) {
  for (const auto& row : k_table)
    if (row.weight == type) return &row;
  return nullptr;
}

Isa detect_isa(bool force_scalar) {
  const char* env = std::getenv("TRILEMMA_FORCE_SCALAR");
  if (force_scalar || (env != nullptr && std::strcmp(env, "0") != 0 && *env != '\0')) return Isa::scalar;
  Isa best = Isa::scalar;
#if defined(__x86_64__)
  const auto& cpu = cpu_features();
  if (cpu.avx2 && cpu.fma && cpu.f16c) {
    best = Isa::avx2;
    if (cpu.avx512f && cpu.avx512bw && cpu.avx512vl && cpu.avx512vnni) best = Isa::avx512vnni;
  }
#elif defined(__aarch64__)
  best = cpu_features().dotprod ? Isa::dotprod : Isa::neon;
#endif
  const char* cap = std::getenv("TRILEMMA_ISA");
  if (cap == nullptr) return best;
  const std::string_view want(cap);
  if (want == "scalar") return Isa::scalar;
  if (want == "avx2" && best == Isa::avx512vnni) return Isa::avx2;
  if (want == "neon" && best == Isa::dotprod) return Isa::neon;
  return best;
}

Isa dot_isa(const FormatKernels& k, Isa isa) {
  if (isa == Isa::avx512vnni && (k.tile_x4_avx512 != nullptr || k.rows_avx512 != nullptr || k.dot_avx512 != nullptr))
    return Isa::avx512vnni;
  if ((isa == Isa::avx2 || isa == Isa::avx512vnni) && k.dot_avx2 != nullptr) return Isa::avx2;
  if (isa == Isa::dotprod && k.dot_dotprod != nullptr) return Isa::dotprod;
  if ((isa == Isa::neon || isa == Isa::dotprod) && k.dot_neon != nullptr) return Isa::neon;
  return Isa::scalar;
}

TileFn select_tile(const FormatKernels& k, Isa isa) { return isa == Isa::avx512vnni ? k.tile_x4_avx512 : nullptr; }

bool amx_tiles() {
  // Read once, like cpu_features(): select_strip runs on every matmul call.
  static const bool on = [] {
    const char* env = std::getenv("TRILEMMA_AMX");
    return cpu_features().amx_int8 && !(env != nullptr && std::strcmp(env, "0") == 0);
  }();
  return on;
}

bool amx_bf16_tiles() {
  static const bool on = [] {
    const char* env = std::getenv("TRILEMMA_AMX");
    return cpu_features().amx_bf16 && !(env != nullptr && std::strcmp(env, "0") == 0);
  }();
  return on;
}

PanelRowsFn select_rows_amx(const FormatKernels& k, Isa isa) {
  return isa == Isa::avx512vnni && k.rows_amx != nullptr && amx_bf16_tiles() ? k.rows_amx : nullptr;
}

PackBf16TokenFn select_pack_bf16_panel_token(Isa isa) {
  return isa == Isa::avx512vnni ? TRILEMMA_X86(pack_bf16_panel_token_avx512) : pack_bf16_panel_token;
}

StripFn select_strip(const FormatKernels& k, Isa isa) {
  if (isa != Isa::avx512vnni) return nullptr;
  return k.strip_x16_amx != nullptr && amx_tiles() ? k.strip_x16_amx : k.strip_x16_avx512;
}

bool i8mm_rows() {
  static const bool on = [] {
    const char* env = std::getenv("TRILEMMA_I8MM");
    return cpu_features().i8mm && !(env != nullptr && std::strcmp(env, "0") == 0);
  }();
  return on;
}

RowsQ8Fn select_rows_i8mm(const FormatKernels& k, Isa isa) { return isa == Isa::dotprod && i8mm_rows() ? k.rows_i8mm : nullptr; }

DotMultiFn select_dot_multi(const FormatKernels& k, Isa isa) {
  if (isa == Isa::avx512vnni && k.dot_multi_avx512 != nullptr) return k.dot_multi_avx512;
  return (isa == Isa::avx2 || isa == Isa::avx512vnni) && k.dot_avx2 != nullptr ? k.dot_multi_avx2 : nullptr;
}

QuantizeRowFn select_quantize(const FormatKernels& k, Isa isa) {
  return isa == Isa::avx512vnni && k.quantize_avx512 != nullptr ? k.quantize_avx512 : k.quantize;
}

PackPanelTokenFn select_pack_q8_panel_token(Isa isa) {
  // avx512vnni is detected on x86-64 only, where the twin exists.
  return isa == Isa::avx512vnni ? TRILEMMA_X86(pack_q8_panel_token_avx512) : pack_q8_panel_token;
}

RowsFn select_rows(const FormatKernels& k, Isa isa) { return isa == Isa::avx512vnni ? k.rows_avx512 : nullptr; }

DotFn select_dot(const FormatKernels& k, Isa isa) {
  if (isa == Isa::avx512vnni && k.dot_avx512 != nullptr) return k.dot_avx512;
  if (isa == Isa::avx512vnni) isa = Isa::avx2;  // the dot columns below the tiles
  switch (dot_isa(k, isa)) {
    case Isa::avx2: return k.dot_avx2;
    case Isa::neon: return k.dot_neon;
    case Isa::dotprod: return k.dot_dotprod;
    default: break;
  }
  return k.dot_ref;
}

}  // namespace trilemma::engine
