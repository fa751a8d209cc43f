// Weight formats as a deployment chooses them: a recipe that assigns a tensor type to every
// tensor of a model, after llama.cpp's quantizer (src/llama-quant.cpp, llama_tensor_get_type):
// most matrices take the bulk type; attn_v and ffn_down of some layers keep more bits; the
// classifier keeps more still. The engine runs the formats whose `engine_type` is set.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <span>
#include <string_view>

#include "types/tensor_type.hpp"

namespace trilemma {

// Append at the end: names are persisted in plan documents and emitted configs.
enum class WeightFormat : std::uint8_t {
  f32, bf16, f16, q8_0, q6_k, q5_k_m, q4_k_m, q4_0, q3_k_m, q2_k, iq2_xs, int3, int2,
  w4a16, w8a16, w8a8,  // NPU integer formats: weight bits x activation bits
  count
};

// Which layers of a role get the `more_bits` type.
enum class MoreBitsLayers : std::uint8_t {
  none,
  llama_use_more_bits,  // i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2   (llama.cpp use_more_bits)
  first_sixteenth,      // i < n/16
  first_two,            // i < 2
  all,
};

struct WeightFormatInfo {
  WeightFormat format;
  std::string_view name;         // "q4_k_m": flags, YAML, plan documents
  std::string_view llama_cpp;    // llama-quantize ftype name, "Q4_K_M"; empty when not a llama.cpp type
  // GGUF general.file_type: llama.h's llama_ftype value (LLAMA_FTYPE_MOSTLY_Q8_0 = 7), which is
  // not the ggml_type of the bulk tensors (GGML_TYPE_Q8_0 = 8, the ftype of Q5_0).
  std::optional<std::uint32_t> llama_ftype;
  TensorType bulk;               // q, k, gate, up (and the rest unless a rule below says otherwise)
  TensorType attn_v;             // attn_v in the layers `attn_v_layers` selects
  MoreBitsLayers attn_v_layers;
  TensorType ffn_down;           // ffn_down in the layers `ffn_down_layers` selects
  MoreBitsLayers ffn_down_layers;
  TensorType attn_output;        // attn_output, all layers
  TensorType ffn_down_rest;      // ffn_down in the other layers
  TensorType attn_v_rest;        // attn_v in the other layers
  TensorType output;             // classifier
  TensorType embedding;          // token_embd
  std::optional<TensorType> engine_type;  // what trilemma's engine runs for this format
  std::string_view source;
  // attn_v on models with fewer than 4 query heads per KV head, where the recipe says so
  // (llama.cpp's Q2_K: q4_k with n_gqa >= 4, else q3_k); nullopt: `attn_v` regardless.
  std::optional<TensorType> attn_v_low_gqa{};
  // The engine runs this recipe tensor by tensor (`run`/`export`/`verify --weights q4_k_m`): every
  // type it assigns, fallbacks included, has engine kernels, and its name is not also a tensor
  // type (q6_k and q2_k name one, and run it throughout).
  bool engine_recipe = false;
  // A trilemma-engine format no deployment runtime loads (int3, int2): the planner searches it
  // only when pinned.
  bool pinned_only = false;
};

std::span<const WeightFormatInfo> weight_formats();
const WeightFormatInfo& info(WeightFormat format);
// Whether the format stores its bulk weights unquantized (f32, f16, bf16): no quantization loss.
bool full_precision(WeightFormat format);
std::optional<WeightFormat> weight_format_from_name(std::string_view name);
// "f32, bf16, f16, ...": every format, or those the reference engine runs (an engine_type), in
// table order; for help texts and error messages.
std::string weight_format_names();
std::string engine_weight_format_names();

// Layer selection rule, as llama.cpp applies it.
bool selects_layer(MoreBitsLayers rule, std::uint32_t layer, std::uint32_t layers);

}  // namespace trilemma
