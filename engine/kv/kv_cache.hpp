// The KV cache interface between the forward pass and attention storage. The forward pass
// only stores K/V rows at positions and asks for attention over a prefix of positions; how
// K/V are kept (fp32, fp16, int8, paged, windowed, offloaded) is the implementation's business.
// Positions may be rewritten: storing at pos p replaces what was there, so speculative
// decoding rolls back by running the forward pass again from an earlier position.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

namespace trilemma::engine {

class KvCache {
 public:
  virtual ~KvCache() = default;
  virtual int capacity() const = 0;  // positions
  // k, v: [kv_heads * head_dim] of the token at `pos`. REQUIRES: 0 <= pos < capacity().
  virtual void store(int layer, int pos, const float* k, const float* v) = 0;
  // Causal attention of one query head over positions [0, n_pos):
  //   out[head_dim] = sum_t softmax_t(q . k_t / sqrt(head_dim)) v_t,
  // reading kv head `head / (heads / kv_heads)` (GQA). scores: scratch of capacity() floats.
  // REQUIRES: positions [0, n_pos) of `layer` stored; safe to call concurrently for
  // different (head, out, scores).
  virtual void attend(int layer, int head, int n_pos, const float* q, float* out, float* scores) const = 0;
  // Bytes held, for memory reports.
  virtual std::uint64_t bytes() const = 0;
};

// fp32 K and V, [layer][position][kv_dim], allocated up front for `capacity` positions.
// `score_dot` computes q . k (an f32 dot of the kernel table; default the scalar reference,
// which sums left to right as llama2.c does).
class ContiguousKvCache final : public KvCache {
 public:
  using F32Dot = float (*)(const void* a, const void* b, std::int64_t n);
  ContiguousKvCache(int layers, int capacity, int heads, int kv_heads, int head_dim, F32Dot score_dot = nullptr);
  int capacity() const override { return m_capacity; }
  void store(int layer, int pos, const float* k, const float* v) override;
  void attend(int layer, int head, int n_pos, const float* q, float* out, float* scores) const override;
  std::uint64_t bytes() const override { return 2 * std::uint64_t(m_k.size()) * sizeof(float); }

 private:
  int m_capacity, m_heads, m_kv_heads, m_head_dim, m_kv_dim;
  F32Dot m_dot;
  std::vector<float> m_k, m_v;
};

}  // namespace trilemma::engine
