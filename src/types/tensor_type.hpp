// Tensor storage types: the block layouts shared by the planner (bytes of a tensor read from a
// GGUF header) and the engine (which kernels exist). GGUF ids and block sizes follow ggml's
// `ggml_type` and its type_traits table (ggml/src/ggml.c, ggml-common.h); trilemma's own
// sub-4-bit formats (tq3_t, tq2_t, see docs/formats.md) have no GGUF id.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace trilemma {

// Append new types at the end: the order is the table order, checked at compile time.
enum class TensorType : std::uint8_t {
  f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1,
  q2_k, q3_k, q4_k, q5_k, q6_k, q8_k,
  iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m, iq4_nl, iq4_xs,
  i8, i16, i32, f64,
  tq3_t, tq2_t,  // trilemma's INT3 and INT2 block formats
  i4,            // plain int4, two per byte (NPU weight formats; per-row scales not counted)
};
// One row per type in the table (tensor_type.cpp); the last enumerator + 1.
inline constexpr std::size_t k_tensor_type_count = static_cast<std::size_t>(TensorType::i4) + 1;

inline constexpr std::uint32_t k_no_gguf_id = 0xffffffffu;

struct TensorTypeInfo {
  TensorType type;
  std::string_view name;       // the one spelling in flags, YAML and reports
  std::uint32_t gguf_id;       // ggml_type value, or k_no_gguf_id
  std::uint32_t block_elems;   // elements per block (1 for plain types)
  std::uint32_t block_bytes;   // bytes per block, scales included
  std::string_view source;     // where the layout is specified
};

std::span<const TensorTypeInfo> tensor_types();
const TensorTypeInfo& info(TensorType type);
std::optional<TensorType> tensor_type_from_name(std::string_view name);
std::optional<TensorType> tensor_type_from_gguf_id(std::uint32_t gguf_id);

// Bits per element including block scales.
double bits_per_element(TensorType type);
// Bytes that `elems` elements occupy; REQUIRES: elems is a multiple of block_elems.
std::uint64_t tensor_bytes(TensorType type, std::uint64_t elems);

}  // namespace trilemma
