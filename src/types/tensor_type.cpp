#include "types/tensor_type.hpp"
#include "types/table_order.hpp"

#include <array>

namespace trilemma {
namespace {

constexpr std::string_view k_ggml = "ggml-common.h / ggml.c type_traits (ggml-org/llama.cpp)";
constexpr std::string_view k_ours = "docs/formats.md (trilemma)";

constexpr std::array k_table = {
    TensorTypeInfo{TensorType::f32, "f32", 0, 1, 4, k_ggml},
    TensorTypeInfo{TensorType::f16, "f16", 1, 1, 2, k_ggml},
    TensorTypeInfo{TensorType::bf16, "bf16", 30, 1, 2, k_ggml},
    TensorTypeInfo{TensorType::q8_0, "q8_0", 8, 32, 34, k_ggml},   // f16 scale + 32 x int8
    TensorTypeInfo{TensorType::q4_0, "q4_0", 2, 32, 18, k_ggml},   // f16 scale + 16 bytes of nibbles
    TensorTypeInfo{TensorType::q4_1, "q4_1", 3, 32, 20, k_ggml},
    TensorTypeInfo{TensorType::q5_0, "q5_0", 6, 32, 22, k_ggml},
    TensorTypeInfo{TensorType::q5_1, "q5_1", 7, 32, 24, k_ggml},
    TensorTypeInfo{TensorType::q2_k, "q2_k", 10, 256, 84, k_ggml},
    TensorTypeInfo{TensorType::q3_k, "q3_k", 11, 256, 110, k_ggml},
    TensorTypeInfo{TensorType::q4_k, "q4_k", 12, 256, 144, k_ggml},
    TensorTypeInfo{TensorType::q5_k, "q5_k", 13, 256, 176, k_ggml},
    TensorTypeInfo{TensorType::q6_k, "q6_k", 14, 256, 210, k_ggml},
    TensorTypeInfo{TensorType::q8_k, "q8_k", 15, 256, 292, k_ggml},
    TensorTypeInfo{TensorType::iq2_xxs, "iq2_xxs", 16, 256, 66, k_ggml},
    TensorTypeInfo{TensorType::iq2_xs, "iq2_xs", 17, 256, 74, k_ggml},
    TensorTypeInfo{TensorType::iq2_s, "iq2_s", 22, 256, 82, k_ggml},
    TensorTypeInfo{TensorType::iq3_xxs, "iq3_xxs", 18, 256, 98, k_ggml},
    TensorTypeInfo{TensorType::iq3_s, "iq3_s", 21, 256, 110, k_ggml},
    TensorTypeInfo{TensorType::iq1_s, "iq1_s", 19, 256, 50, k_ggml},
    TensorTypeInfo{TensorType::iq1_m, "iq1_m", 29, 256, 56, k_ggml},
    TensorTypeInfo{TensorType::iq4_nl, "iq4_nl", 20, 32, 18, k_ggml},
    TensorTypeInfo{TensorType::iq4_xs, "iq4_xs", 23, 256, 136, k_ggml},
    TensorTypeInfo{TensorType::i8, "i8", 24, 1, 1, k_ggml},
    TensorTypeInfo{TensorType::i16, "i16", 25, 1, 2, k_ggml},
    TensorTypeInfo{TensorType::i32, "i32", 26, 1, 4, k_ggml},
    TensorTypeInfo{TensorType::f64, "f64", 28, 1, 8, k_ggml},
    // f16 scale + f16 min + 64 x 3-bit codes packed in 24 bytes: 3.5 bits per weight
    TensorTypeInfo{TensorType::tq3_t, "tq3_t", k_no_gguf_id, 64, 28, k_ours},
    // f16 scale + f16 min + 64 x 2-bit codes packed in 16 bytes: 2.5 bits per weight
    TensorTypeInfo{TensorType::tq2_t, "tq2_t", k_no_gguf_id, 64, 20, k_ours},
    // NPU int4 weights (QNN/Genie w4a16, Core ML int4): one f32/f16 scale per row of thousands
    // of weights is under 0.02 bits per weight and left out.
    TensorTypeInfo{TensorType::i4, "i4", k_no_gguf_id, 2, 1, "two's-complement int4, two per byte"},
};

static_assert(rows_in_enum_order(k_table, &TensorTypeInfo::type), "tensor type table must list types in enum order");
static_assert(k_table.size() == k_tensor_type_count, "one row per TensorType");

}  // namespace

std::span<const TensorTypeInfo> tensor_types() { return k_table; }

const TensorTypeInfo& info(TensorType type) { return k_table[static_cast<std::size_t>(type)]; }

std::optional<TensorType> tensor_type_from_name(std::string_view name) {
  for (const auto& row : k_table)
    if (row.name == name) return row.type;
  return std::nullopt;
}

std::optional<TensorType> tensor_type_from_gguf_id(std::uint32_t gguf_id) {
  if (gguf_id == k_no_gguf_id) return std::nullopt;
  for (const auto& row : k_table)
    if (row.gguf_id == gguf_id) return row.type;
  return std::nullopt;
}

double bits_per_element(TensorType type) {
  const auto& row = info(type);
  return 8.0 * row.block_bytes / row.block_elems;
}

std::uint64_t tensor_bytes(TensorType type, std::uint64_t elems) {
  const auto& row = info(type);
  return elems / row.block_elems * row.block_bytes;
}

}  // namespace trilemma
