#include "types/weight_format.hpp"
#include "types/table_order.hpp"

#include <array>

namespace trilemma {
namespace {

using T = TensorType;
using L = MoreBitsLayers;
constexpr std::string_view k_llama_quant = "llama.cpp src/llama-quant.cpp llama_tensor_get_type (simplified)";
constexpr std::string_view k_plain = "one type for every matrix";
constexpr std::string_view k_ours_formats = "docs/formats.md (trilemma INT3/INT2 block formats)";
constexpr std::string_view k_npu =
    "NPU integer format: per-channel matrices, int8 embedding and classifier (assumed: vendors do not "
    "publish per-tensor recipes; docs/estimates.md)";

// name, llama.cpp, llama_ftype, bulk, attn_v, attn_v_layers, ffn_down, ffn_down_layers, attn_output,
// ffn_down_rest, attn_v_rest, output, embedding, engine_type, source
constexpr std::array k_formats = {
    WeightFormatInfo{WeightFormat::f32, "f32", "F32", 0, T::f32, T::f32, L::none, T::f32, L::none, T::f32, T::f32,
                     T::f32, T::f32, T::f32, T::f32, k_plain},
    WeightFormatInfo{WeightFormat::bf16, "bf16", "BF16", 32, T::bf16, T::bf16, L::none, T::bf16, L::none, T::bf16,
                     T::bf16, T::bf16, T::bf16, T::bf16, T::bf16, k_plain},
    WeightFormatInfo{WeightFormat::f16, "f16", "F16", 1, T::f16, T::f16, L::none, T::f16, L::none, T::f16, T::f16,
                     T::f16, T::f16, T::f16, T::f16, k_plain},
    WeightFormatInfo{WeightFormat::q8_0, "q8_0", "Q8_0", 7, T::q8_0, T::q8_0, L::none, T::q8_0, L::none, T::q8_0,
                     T::q8_0, T::q8_0, T::q8_0, T::q8_0, T::q8_0, k_llama_quant},
    WeightFormatInfo{WeightFormat::q6_k, "q6_k", "Q6_K", 18, T::q6_k, T::q6_k, L::none, T::q6_k, L::none, T::q6_k,
                     T::q6_k, T::q6_k, T::q6_k, T::q6_k, std::nullopt, k_llama_quant},
    WeightFormatInfo{WeightFormat::q5_k_m, "q5_k_m", "Q5_K_M", 17, T::q5_k, T::q6_k, L::llama_use_more_bits, T::q6_k,
                     L::llama_use_more_bits, T::q5_k, T::q5_k, T::q5_k, T::q6_k, T::q5_k, std::nullopt,
                     k_llama_quant, std::nullopt, true},
    WeightFormatInfo{WeightFormat::q4_k_m, "q4_k_m", "Q4_K_M", 15, T::q4_k, T::q6_k, L::llama_use_more_bits, T::q6_k,
                     L::llama_use_more_bits, T::q4_k, T::q4_k, T::q4_k, T::q6_k, T::q4_k, std::nullopt,
                     k_llama_quant, std::nullopt, true},
    WeightFormatInfo{WeightFormat::q4_0, "q4_0", "Q4_0", 2, T::q4_0, T::q4_0, L::none, T::q4_0, L::none, T::q4_0,
                     T::q4_0, T::q4_0, T::q6_k, T::q4_0, T::q4_0, k_llama_quant},
    WeightFormatInfo{WeightFormat::q3_k_m, "q3_k_m", "Q3_K_M", 12, T::q3_k, T::q5_k, L::first_two, T::q5_k,
                     L::first_sixteenth, T::q4_k, T::q4_k, T::q4_k, T::q6_k, T::q3_k, std::nullopt, k_llama_quant,
                     std::nullopt, true},
    WeightFormatInfo{WeightFormat::q2_k, "q2_k", "Q2_K", 10, T::q2_k, T::q4_k, L::all, T::q3_k, L::all, T::q3_k,
                     T::q3_k, T::q4_k, T::q6_k, T::q2_k, std::nullopt, k_llama_quant, T::q3_k},
    WeightFormatInfo{WeightFormat::iq2_xs, "iq2_xs", "IQ2_XS", 20, T::iq2_xs, T::q4_k, L::all, T::iq3_xxs, L::all,
                     T::iq3_xxs, T::iq3_xxs, T::q4_k, T::q5_k, T::iq2_xs, std::nullopt, k_llama_quant},
    WeightFormatInfo{WeightFormat::int3, "int3", "", std::nullopt, T::tq3_t, T::tq3_t, L::none, T::tq3_t, L::none, T::tq3_t,
                     T::tq3_t, T::tq3_t, T::q8_0, T::tq3_t, T::tq3_t, k_ours_formats, std::nullopt, false, true},
    WeightFormatInfo{WeightFormat::int2, "int2", "", std::nullopt, T::tq2_t, T::tq2_t, L::none, T::tq2_t, L::none, T::tq2_t,
                     T::tq2_t, T::tq2_t, T::q8_0, T::tq2_t, T::tq2_t, k_ours_formats, std::nullopt, false, true},
    WeightFormatInfo{WeightFormat::w4a16, "w4a16", "", std::nullopt, T::i4, T::i4, L::none, T::i4, L::none, T::i4, T::i4, T::i4,
                     T::i8, T::i8, std::nullopt, k_npu},
    WeightFormatInfo{WeightFormat::w8a16, "w8a16", "", std::nullopt, T::i8, T::i8, L::none, T::i8, L::none, T::i8, T::i8, T::i8,
                     T::i8, T::i8, std::nullopt, k_npu},
    WeightFormatInfo{WeightFormat::w8a8, "w8a8", "", std::nullopt, T::i8, T::i8, L::none, T::i8, L::none, T::i8, T::i8, T::i8,
                     T::i8, T::i8, std::nullopt, k_npu},
};
static_assert(k_formats.size() == static_cast<std::size_t>(WeightFormat::count), "one row per weight format");

static_assert(rows_in_enum_order(k_formats, &WeightFormatInfo::format), "weight format table must list formats in enum order");

}  // namespace

std::span<const WeightFormatInfo> weight_formats() { return k_formats; }
const WeightFormatInfo& info(WeightFormat f) { return k_formats[static_cast<std::size_t>(f)]; }

std::optional<WeightFormat> weight_format_from_name(std::string_view name) {
  for (const auto& row : k_formats)
    if (row.name == name) return row.format;
  return std::nullopt;
}

std::string weight_format_names() {
  std::string out;
  for (const auto& row : k_formats) out += (out.empty() ? "" : ", ") + std::string(row.name);
  return out;
}

std::string engine_weight_format_names() {
  std::string out;
  for (const auto& row : k_formats)
    if (row.engine_type) out += (out.empty() ? "" : ", ") + std::string(row.name);
  return out;
}

bool full_precision(WeightFormat format) {
  const TensorType bulk = info(format).bulk;
  return bulk == TensorType::f32 || bulk == TensorType::f16 || bulk == TensorType::bf16;
}

bool selects_layer(MoreBitsLayers rule, std::uint32_t i, std::uint32_t n) {
  switch (rule) {
    case MoreBitsLayers::none: return false;
    case MoreBitsLayers::llama_use_more_bits:
      return i < n / 8 || i >= 7 * n / 8 || (i >= n / 8 && (i - n / 8) % 3 == 2);
    case MoreBitsLayers::first_sixteenth: return i < n / 16;
    case MoreBitsLayers::first_two: return i < 2;
    case MoreBitsLayers::all: return true;
  }
  return false;
}

}  // namespace trilemma
