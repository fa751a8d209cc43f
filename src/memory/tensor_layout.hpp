// The tensors of a llama-family model, derived from its shape, with the type a weight format's
// recipe assigns to each. Used for weight bytes (planner) and per-tensor export choices.
#pragma once
#include <string>
#include <vector>

#include "types/model_shape.hpp"
#include "types/weight_format.hpp"

namespace trilemma::memory {

enum class TensorRole : std::uint8_t {
  embedding, output, attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down, router, norm, bias,
};

struct PlannedTensor {
  std::string name;        // GGUF name: "blk.3.attn_v.weight"
  TensorRole role;
  std::uint32_t layer = 0;
  std::uint64_t row = 0;   // elements per row (the dot-product length)
  std::uint64_t rows = 0;
  std::uint64_t count = 1; // MoE: experts stacked in one tensor
  TensorType type = TensorType::f32;
  bool fell_back = false;  // the recipe's type did not fit the row length
  std::uint64_t elems() const { return row * rows * count; }
  std::uint64_t bytes() const { return tensor_bytes(type, elems()); }
};

// Every tensor with its recipe type. Rows whose length is not a multiple of the type's block
// fall back to q8_0 (32-element blocks) or f16, as llama.cpp's quantizer does.
std::vector<PlannedTensor> plan_tensors(const ModelShape& shape, WeightFormat format);

struct WeightBytes {
  double total = 0;             // all tensors
  double per_token = 0;         // what one decoded token reads: active experts, one embedding row
  double bits_per_weight = 0;   // total bits / parameters
};
WeightBytes weight_bytes(const ModelShape& shape, WeightFormat format);

// The transformer blocks' matrices (attention and FFN: where row-size fallbacks land, without
// the embedding's share, which is large on small models) summarized as the bits b with
// exp(slope * b) = the weight-averaged exp(slope * bits of each matrix). With slope < 0 (loss
// falls with bits) the low-bit matrices dominate, as they dominate the loss: a recipe with a
// third of its weights in f16 and the rest in q4_0 loses about what q4_0 loses, not what
// "8.6 bits" would. slope 0 gives the plain average.
double loss_weighted_block_bits(const ModelShape& shape, WeightFormat format, double slope);

}  // namespace trilemma::memory
