// The llama forward pass (llama2.c run.c's `forward`, batched): embedding, per layer
// RMSNorm -> q/k/v -> RoPE -> KV cache -> attention -> wo -> residual -> RMSNorm -> SwiGLU FFN
// -> residual, then the final RMSNorm and the classifier. A call runs any number of new tokens
// at consecutive positions starting anywhere, so one path serves decode (1 token), prefill
// (the prompt at once) and speculative verification (a draft re-run from an earlier position).
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "engine/kv/kv_cache.hpp"
#include "engine/quant/activation.hpp"
#include "engine/model/matmul.hpp"
#include "engine/model/model.hpp"
#include "types/result.hpp"

namespace trilemma::engine {

class Transformer {
 public:
  // REQUIRES: model outlives this; every matrix type has kernels (the loaders ensure it).
  // max_batch bounds the scratch; longer inputs run in chunks of max_batch tokens.
  Transformer(const Model& model, ThreadPool& pool, Isa isa, std::unique_ptr<KvCache> cache, int max_batch = 64);

  // Runs tokens[i] at position pos0 + i, storing their K/V (positions >= pos0 are replaced).
  // Returns the logits of the last token ([vocab]) or, with all_logits, of every token
  // ([tokens.size()][vocab]). The span is valid until the next call. With all_logits every
  // token's logits are a one-token call's bit for bit (what speculative verification compares);
  // without it a chunk of 16 or more tokens may run kernels whose floats differ slightly
  // (Matmul's Bits::any: the AMX-BF16 f16 rows), so a prompt's K/V and last logits can differ
  // from decoding the prompt token by token in the last bits.
  Result<std::span<const float>> forward(std::span<const int> tokens, int pos0, bool all_logits = false);

  const Model& model() const { return m_model; }
  const KvCache& cache() const { return *m_cache; }
  KvCache& cache() { return *m_cache; }
  // Activation scratch, attention scores, matmul buffers and offload staging, in bytes.
  std::uint64_t scratch_bytes() const;
  Isa isa() const { return m_matmul.isa(); }

 private:
  void run_chunk(std::span<const int> tokens, int pos0, float* logits_out, bool all_logits);
  void attention(int layer, int n, int pos0);
  int heads_per_task(int n) const;  // query heads one attention task covers (a divisor of the group)

  const Model& m_model;
  ThreadPool& m_pool;
  std::unique_ptr<KvCache> m_cache;
  Matmul m_matmul;
  SwigluFn m_swiglu;
  int m_max_batch;
  bool m_layout_ok = true;  // every x4 matrix has a tile under this ISA
  // Scratch, [max_batch][width] each.
  std::vector<float> m_x, m_xb, m_q, m_k, m_v, m_att, m_hb, m_hb2, m_logits;
  std::vector<float> m_rope_freq;  // [head_dim / 2]
  std::vector<AttendScratch> m_attend_scratch;  // one per pool thread
};

}  // namespace trilemma::engine
