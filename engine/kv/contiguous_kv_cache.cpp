// fp32 contiguous KV cache. attend() follows llama2.c's run.c operation for operation
// (softmax with max subtraction, V accumulated position by position; with the default scalar
// score dot, scores summed left to right) so the fp32 engine reproduces its outputs.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/kv/kv_cache.hpp"
#include "engine/quant/kernels.hpp"

namespace trilemma::engine {

ContiguousKvCache::ContiguousKvCache(int layers, int capacity, int heads, int kv_heads, int head_dim, F32Dot score_dot)
    : m_capacity(capacity),
      m_heads(heads),
      m_kv_heads(kv_heads),
      m_head_dim(head_dim),
      m_kv_dim(kv_heads * head_dim),
      m_dot(score_dot != nullptr ? score_dot : dot_f32_f32_ref),
      m_k(std::size_t(layers) * std::size_t(capacity) * std::size_t(kv_heads * head_dim)),
      m_v(m_k.size()) {}

void ContiguousKvCache::store(int layer, int pos, const float* k, const float* v) {
  const std::size_t at = (std::size_t(layer) * std::size_t(m_capacity) + std::size_t(pos)) * std::size_t(m_kv_dim);
  std::memcpy(&m_k[at], k, std::size_t(m_kv_dim) * sizeof(float));
  std::memcpy(&m_v[at], v, std::size_t(m_kv_dim) * sizeof(float));
}

void ContiguousKvCache::attend(int layer, int head, int n_pos, const float* q, float* out, float* scores) const {
  const int kv_head = head / (m_heads / m_kv_heads);
  const std::size_t base = std::size_t(layer) * std::size_t(m_capacity) * std::size_t(m_kv_dim) +
                           std::size_t(kv_head) * std::size_t(m_head_dim);
  const float scale = std::sqrt(float(m_head_dim));
  for (int t = 0; t < n_pos; ++t) {
    scores[t] = m_dot(q, &m_k[base + std::size_t(t) * std::size_t(m_kv_dim)], m_head_dim) / scale;
  }
  const float max = *std::max_element(scores, scores + n_pos);
  float sum = 0.0f;
  for (int t = 0; t < n_pos; ++t) {
    scores[t] = std::exp(scores[t] - max);
    sum += scores[t];
  }
  for (int t = 0; t < n_pos; ++t) scores[t] /= sum;
  std::fill(out, out + m_head_dim, 0.0f);
  for (int t = 0; t < n_pos; ++t) {
    const float* v = &m_v[base + std::size_t(t) * std::size_t(m_kv_dim)];
    for (int i = 0; i < m_head_dim; ++i) out[i] += scores[t] * v[i];
  }
}

}  // namespace trilemma::engine
