// Memory of a deployment, in bytes. Formulas and sources: docs/estimates.md#memory.
//   KV = 2 (K and V) x layers x kv_heads x head_dim x positions x bytes per element,
//   per layer, where sliding-window layers hold at most `window` positions.
#pragma once
#include "types/deployment.hpp"
#include "types/estimate.hpp"
#include "types/model_shape.hpp"

namespace trilemma::memory {


// KV bytes held for `positions` tokens of context under `config`'s format and strategy
// (before offload): contiguous allocates the whole context up front, paged rounds up to a
// page, sliding keeps window + sinks.
double kv_bytes(const ModelShape& shape, const DeploymentConfig& config, std::uint32_t positions);

// KV bytes one decode step reads at `position` (what attention touches).
double kv_read_bytes(const ModelShape& shape, const DeploymentConfig& config, std::uint32_t position);

// Activations, logits and attention scores for a micro-batch of `ubatch` tokens at `context`,
// after llama.cpp's compute buffer (flash attention keeps the scores out of memory).
double scratch_bytes(const ModelShape& shape, std::uint32_t ubatch, std::uint32_t context, bool flash_attention);

}  // namespace trilemma::memory
