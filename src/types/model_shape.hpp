// The shape of a llama-family decoder: everything the planner's formulas and the engine's
// synthetic weights need, and nothing about where the weights come from.
#pragma once
#include <cstdint>
#include <string>

namespace trilemma {

enum class RopeLayout : std::uint8_t {
  adjacent,  // rotate pairs (2i, 2i+1): llama2.c, GGUF `llama`
  neox,      // rotate pairs (i, i + head_dim/2): GPT-NeoX, Qwen2, Gemma, Phi-3
};

struct MoeShape {
  std::uint32_t experts = 0;            // 0 = dense model
  std::uint32_t experts_per_token = 0;
  std::uint32_t shared_experts = 0;
  std::uint32_t expert_ffn = 0;         // intermediate size of one expert
};

struct ModelShape {
  std::uint32_t layers = 0;
  std::uint32_t hidden = 0;      // d_model
  std::uint32_t heads = 0;
  std::uint32_t kv_heads = 0;
  std::uint32_t head_dim = 0;    // explicit: not always hidden / heads (Gemma-2: 256)
  std::uint32_t ffn = 0;         // dense FFN intermediate size (0 when every layer is MoE)
  std::uint32_t vocab = 0;
  bool tied_embeddings = false;  // classifier shares the embedding matrix
  std::uint32_t context = 0;     // trained context length, tokens
  double rope_theta = 10000.0;
  RopeLayout rope_layout = RopeLayout::adjacent;
  bool attention_bias = false;   // q/k/v biases (Qwen2)
  bool ffn_gated = true;         // SwiGLU / GeGLU: three FFN matrices
  std::uint32_t sliding_window = 0;         // window of the local layers; 0 = none
  std::uint32_t sliding_window_layers = 0;  // how many layers use it
  MoeShape moe;

  bool is_moe() const { return moe.experts > 0; }
  std::uint32_t q_dim() const { return heads * head_dim; }
  std::uint32_t kv_dim() const { return kv_heads * head_dim; }
};

// Parameter counts by group. Norm weights are counted in `norms`.
struct ParameterCounts {
  double embedding = 0;   // vocab x hidden
  double attention = 0;   // all layers: q, k, v, o (+ biases)
  double ffn = 0;         // all layers: dense FFN and every expert
  double router = 0;      // MoE gate
  double norms = 0;
  double output = 0;      // classifier; 0 when tied
  double total() const { return embedding + attention + ffn + router + norms + output; }
  // Weights one decoded token reads: attention, the routed (not all) experts, norms and the
  // classifier (vocab x hidden even when tied). The embedding lookup reads one row only.
  double active_per_token = 0;
};

ParameterCounts count_parameters(const ModelShape& shape);

// Empty when the shape is usable; otherwise the first problem, naming the field.
std::string validate_shape(const ModelShape& shape);

}  // namespace trilemma
