#include "memory/memory_model.hpp"

#include <algorithm>

namespace trilemma::memory {
namespace {

double bytes_per_position_per_layer(const ModelShape& s, TensorType kv) {
  return 2.0 * s.kv_dim() * bits_per_element(kv) / 8.0;
}

// Positions each layer holds when `positions` tokens are in context.
double held_positions(const ModelShape& s, const DeploymentConfig& c, std::uint32_t positions) {
  double per_layer_total = 0;
  std::uint32_t held = positions;
  if (c.kv_strategy == KvStrategy::paged)
    held = (positions + k_kv_page_tokens - 1) / k_kv_page_tokens * k_kv_page_tokens;
  if (c.kv_strategy == KvStrategy::sliding) held = std::min(positions, c.window + c.sinks);
  const std::uint32_t native_window_layers = s.sliding_window ? s.sliding_window_layers : 0;
  const std::uint32_t local = std::min(held, s.sliding_window ? s.sliding_window : held);
  per_layer_total = double(native_window_layers) * local + double(s.layers - native_window_layers) * held;
  return per_layer_total;
}

}  // namespace

double kv_bytes(const ModelShape& s, const DeploymentConfig& c, std::uint32_t positions) {
  return held_positions(s, c, positions) * bytes_per_position_per_layer(s, c.kv_type);
}

double kv_read_bytes(const ModelShape& s, const DeploymentConfig& c, std::uint32_t position) {
  DeploymentConfig read = c;
  if (read.kv_strategy == KvStrategy::paged) read.kv_strategy = KvStrategy::contiguous;  // reads only used pages
  return held_positions(s, read, position) * bytes_per_position_per_layer(s, c.kv_type);
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
