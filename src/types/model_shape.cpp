#include "types/model_shape.hpp"

namespace trilemma {

// Formulas: models/README.md ("How parameters are counted").
ParameterCounts count_parameters(const ModelShape& s) {
  ParameterCounts c;
  const double h = s.hidden, layers = s.layers;
  c.embedding = double(s.vocab) * h;
  const double per_layer_attention = h * s.q_dim() + 2.0 * h * s.kv_dim() + double(s.q_dim()) * h +
                                     (s.attention_bias ? double(s.q_dim()) + 2.0 * s.kv_dim() : 0.0);
  c.attention = layers * per_layer_attention;
  const double matrices = s.ffn_gated ? 3.0 : 2.0;
  const double dense_ffn = matrices * h * s.ffn;
  const double expert = matrices * h * s.moe.expert_ffn;
  const double moe_all = (double(s.moe.experts) + s.moe.shared_experts) * expert;
  c.ffn = layers * (dense_ffn + moe_all);
  c.router = s.is_moe() ? layers * h * s.moe.experts : 0.0;
  c.norms = layers * 2.0 * h + h;
  c.output = s.tied_embeddings ? 0.0 : double(s.vocab) * h;
  // Per token: every non-expert weight, the routed and shared experts, and the classifier
  // (which is the embedding matrix again when tied). The embedding lookup reads one row.
  const double active_experts = (double(s.moe.experts_per_token) + s.moe.shared_experts) * expert;
  c.active_per_token = c.attention + layers * (dense_ffn + active_experts) + c.router + c.norms +
                       double(s.vocab) * h + h;
  return c;
}

std::string validate_shape(const ModelShape& s) {
  // Bounds far above any published model (Llama-3.1-405B: 126 layers, hidden 16384; Gemma-3:
  // vocab 262144; Llama-4-Scout: 10M context) and low enough that every derived size (q_dim,
  // a tensor's elements, a KV page) fits the engine's 32-bit counts and 64-bit byte sizes: a
  // crafted header cannot make them wrap.
  struct Bound {
    const char* field;
    std::uint64_t value, max;
  };
  for (const Bound& b : {Bound{"layers", s.layers, 1024}, Bound{"hidden", s.hidden, 1u << 17}, Bound{"heads", s.heads, 1024},
                         Bound{"kv_heads", s.kv_heads, 1024}, Bound{"head_dim", s.head_dim, 2048}, Bound{"ffn", s.ffn, 1u << 20},
                         Bound{"vocab", s.vocab, 1u << 22}, Bound{"context", s.context, 1u << 24},
                         Bound{"moe.experts", s.moe.experts, 1024}, Bound{"moe.shared_experts", s.moe.shared_experts, 64},
                         Bound{"moe.expert_ffn", s.moe.expert_ffn, 1u << 20}, Bound{"sliding_window", s.sliding_window, 1u << 24}})
    if (b.value > b.max) return std::string(b.field) + ": " + std::to_string(b.value) + " is beyond any model (at most " + std::to_string(b.max) + ")";
  if (std::uint64_t(s.heads) * s.head_dim > (1u << 18)) return "heads x head_dim: beyond any model (at most 262144)";
  if (s.layers == 0) return "layers: must be > 0";
  if (s.hidden == 0) return "hidden: must be > 0";
  if (s.heads == 0) return "heads: must be > 0";
  if (s.kv_heads == 0) return "kv_heads: must be > 0";
  if (s.heads % s.kv_heads != 0) return "kv_heads: must divide heads";
  if (s.head_dim == 0) return "head_dim: must be > 0";
  if (s.head_dim % 2 != 0) return "head_dim: must be even (RoPE rotates pairs)";
  if (s.vocab == 0) return "vocab: must be > 0";
  if (s.context == 0) return "context: must be > 0";
  if (s.ffn == 0 && !s.is_moe()) return "ffn: must be > 0 for a dense model";
  if (s.is_moe() && (s.moe.experts_per_token == 0 || s.moe.experts_per_token > s.moe.experts))
    return "moe.experts_per_token: must be in 1..experts";
  if (s.is_moe() && s.moe.expert_ffn == 0) return "moe.expert_ffn: must be > 0";
  if (s.sliding_window_layers > s.layers) return "sliding_window_layers: must be <= layers";
  if (s.sliding_window_layers > 0 && s.sliding_window == 0)
    return "sliding_window: must be > 0 when sliding_window_layers is set";
  return {};
}

}  // namespace trilemma
