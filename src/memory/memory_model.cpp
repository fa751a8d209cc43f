#include "memory/memory_model.hpp"

#include <algorithm>

namespace trilemma::memory {
namespace {

double bytes_per_position_per_layer(const ModelShape& s, TensorType kv) {
  return 2.0 * s.kv_dim() * bits_per_element(kv) / 8.0;
}

// Positions summed over the layers when the strategy keeps `held` per layer: layers with the
// model's own sliding window keep at most that window.
double per_layer_positions(const ModelShape& s, double held) {
  const std::uint32_t native_window_layers = s.sliding_window ? s.sliding_window_layers : 0;
  const double local = s.sliding_window ? std::min<double>(held, s.sliding_window) : held;
  return double(native_window_layers) * local + double(s.layers - native_window_layers) * held;
}

}  // namespace

double kv_bytes(const ModelShape& s, const DeploymentConfig& c, std::uint32_t positions) {
  return per_layer_positions(s, info(c.kv_strategy).held(c, positions)) * bytes_per_position_per_layer(s, c.kv_type);
}

double kv_read_bytes(const ModelShape& s, const DeploymentConfig& c, std::uint32_t position) {
  return per_layer_positions(s, info(c.kv_strategy).attended(c, position)) * bytes_per_position_per_layer(s, c.kv_type);
}

double scratch_bytes(const ModelShape& s, std::uint32_t ubatch, std::uint32_t context, bool flash_attention) {
  const double ffn_width = std::max<double>(s.ffn, double(s.moe.expert_ffn) * s.moe.experts_per_token);
  // F32 logits, residual stream, q/k/v and FFN intermediates for the micro-batch.
  double bytes = 4.0 * ubatch * (double(s.vocab) + 3.0 * s.hidden + s.q_dim() + 2.0 * s.kv_dim() + 2.0 * ffn_width);
  // Without flash attention the score matrix heads x ubatch x context is materialised (F32):
  // llama.cpp reports 164 MiB at 2K and 2144 MiB at 32K for a 32-head 7B model.
  if (!flash_attention) bytes += 4.0 * s.heads * double(ubatch) * context;
  return bytes;
}

}  // namespace trilemma::memory
