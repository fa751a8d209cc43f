// Numerics follow llama2.c run.c where it defines them (RMSNorm eps placement, RoPE
// frequencies computed in float with powf, SiLU as x / (1 + exp(-x))), so the fp32 scalar path
// reproduces its greedy decoding; see docs/engine.md for the measured margins.
#include "engine/model/transformer.hpp"

#include <cmath>
#include <string>

#include "engine/quant/activation.hpp"
#include "engine/quant/kernel_table.hpp"

namespace trilemma::engine {
namespace {

void rmsnorm(float* out, const float* x, const float* weight, int size, float eps) {
  float ss = 0.0f;
  for (int j = 0; j < size; ++j) ss += x[j] * x[j];
  ss /= float(size);
  ss += eps;
  ss = 1.0f / std::sqrt(ss);
  for (int j = 0; j < size; ++j) out[j] = weight[j] * (ss * x[j]);
}

// Rotates the pairs of one head: adjacent (2i, 2i+1) or NeoX (i, i + head_dim / 2).
void rope_head(float* v, int head_dim, int pos, const float* freq, RopeLayout layout) {
  const int half = head_dim / 2;
  for (int i = 0; i < half; ++i) {
    const float val = float(pos) * freq[i];
    const float fcr = std::cos(val), fci = std::sin(val);
    const int a = layout == RopeLayout::adjacent ? 2 * i : i;
    const int b = layout == RopeLayout::adjacent ? 2 * i + 1 : i + half;
    const float v0 = v[a], v1 = v[b];
    v[a] = v0 * fcr - v1 * fci;
    v[b] = v0 * fci + v1 * fcr;
  }
}

// Tokens per task of the element-wise loops: below this a forward call runs them on one thread.
constexpr std::int64_t k_token_grain = 4;

}  // namespace

Transformer::Transformer(const Model& model, ThreadPool& pool, Isa isa, std::unique_ptr<KvCache> cache, int max_batch)
    : m_model(model), m_pool(pool), m_cache(std::move(cache)), m_matmul(pool, isa), m_swiglu(select_swiglu(isa)), m_max_batch(std::max(1, max_batch)) {
  const ModelShape& s = model.shape;
  const auto b = std::size_t(m_max_batch);
  m_x.resize(b * s.hidden);
  m_xb.resize(b * s.hidden);
  m_q.resize(b * s.q_dim());
  m_att.resize(b * s.q_dim());
  m_k.resize(b * s.kv_dim());
  m_v.resize(b * s.kv_dim());
  m_hb.resize(b * s.ffn);
  m_hb2.resize(b * s.ffn);
  for (int t = 0; t < m_pool.size(); ++t) m_attend_scratch.push_back(m_cache->make_scratch());
  const auto runnable = [&](const Matrix& w) {
    const FormatKernels& k = *find_kernels(w.type);
    return w.layout == WeightLayout::ggml || (w.layout == WeightLayout::x4 && select_tile(k, isa) != nullptr) ||
           (w.layout == WeightLayout::x16 && select_strip(k, isa) != nullptr);
  };
  m_layout_ok = runnable(model.classifier);
  for (const auto& l : model.layers)
    for (const Matrix* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3}) m_layout_ok = m_layout_ok && runnable(*w);
  // run.c: freq = 1 / powf(theta, head_dim_index / head_size) for even indexes, in float.
  for (std::uint32_t i = 0; i < s.head_dim / 2; ++i)
    m_rope_freq.push_back(1.0f / std::pow(float(s.rope_theta), float(2 * i) / float(s.head_dim)));
}

std::uint64_t Transformer::scratch_bytes() const {
  std::uint64_t floats = 0;
  for (const auto* v : {&m_x, &m_xb, &m_q, &m_k, &m_v, &m_att, &m_hb, &m_hb2, &m_logits}) floats += v->capacity();
  // Per-thread attention scores (capacity floats each) and the matmul's activation buffers.
  for (const AttendScratch& a : m_attend_scratch) floats += a.scores.capacity() + a.runs.capacity() * sizeof(KvRun) / sizeof(float);
  return floats * 4 + m_matmul.scratch_bytes() + m_cache->stats().staging_bytes;
}

Result<std::span<const float>> Transformer::forward(std::span<const int> tokens, int pos0, bool all_logits) {
  const ModelShape& s = m_model.shape;
  if (tokens.empty()) return make_error(ErrorKind::usage, m_model.name, "forward", "no tokens");
  if (!m_layout_ok)
    return make_error(ErrorKind::internal, m_model.name, "forward",
                      "weights are in the x4 layout but kernels " + std::string(isa_name(isa())) + " have no x4 tile");
  if (pos0 < 0 || std::int64_t(pos0) + std::int64_t(tokens.size()) > m_cache->capacity())
    return make_error(ErrorKind::usage, m_model.name, "forward",
                      "positions " + std::to_string(pos0) + ".." + std::to_string(pos0 + int(tokens.size()) - 1) +
                          " exceed the KV cache capacity " + std::to_string(m_cache->capacity()));
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || std::uint32_t(tokens[i]) >= s.vocab)
      return make_error(ErrorKind::usage, m_model.name, "forward",
                        "token " + std::to_string(tokens[i]) + " at " + std::to_string(i) + " is outside the vocabulary of " +
                            std::to_string(s.vocab));
  m_logits.resize((all_logits ? tokens.size() : 1) * s.vocab);
  for (std::size_t begin = 0; begin < tokens.size(); begin += std::size_t(m_max_batch)) {
    const std::size_t n = std::min(tokens.size() - begin, std::size_t(m_max_batch));
    const bool last = begin + n == tokens.size();
    float* out = all_logits ? m_logits.data() + begin * s.vocab : (last ? m_logits.data() : nullptr);
    run_chunk(tokens.subspan(begin, n), pos0 + int(begin), out, all_logits);
  }
  if (Status s = m_cache->status(); !s.ok()) return s.error();
  // A NaN or infinite logit means the weights or norms hold one (a corrupt or hostile file):
  // nothing downstream can rank, sample or score it, so it is the caller's error here.
  for (std::size_t i = 0; i < m_logits.size(); ++i)
    if (!std::isfinite(m_logits[i]))
      return make_error(ErrorKind::input, m_model.name, "logits",
                        "non-finite logit (" + std::to_string(m_logits[i]) + ") for token " + std::to_string(i % s.vocab) +
                            " at position " + std::to_string(pos0 + int(all_logits ? i / s.vocab : tokens.size() - 1)) +
                            ": the model's weights or normalization constants hold a NaN or infinity");
  return std::span<const float>(m_logits);
}

// Tasks are (token, kv head, slice of its query heads): a slice reads each K/V row once for all
// its heads. The group is split into the fewest slices that still give every thread about four
// tasks (decode has one token, and models with one or two kv heads have few groups).
int Transformer::heads_per_task(int n) const {
  const ModelShape& s = m_model.shape;
  const int group = int(s.heads / s.kv_heads);
  const std::int64_t wanted = 4 * std::int64_t(m_pool.size());
  int per_task = group;
  while (per_task > 1 && std::int64_t(n) * s.kv_heads * (group / per_task) < wanted) {
    int next = per_task - 1;
    while (group % next != 0) --next;  // slices of equal size
    per_task = next;
  }
  return per_task;
}

void Transformer::attention(int layer, int n, int pos0) {
  const ModelShape& s = m_model.shape;
  const int hd = int(s.head_dim), per_task = heads_per_task(n);
  const int slices = int(s.heads) / per_task;
  m_cache->prepare_attend(layer, pos0 + n);
  m_pool.parallel_for_indexed(std::int64_t(n) * slices, 1, [&](int thread, std::int64_t begin, std::int64_t end) {
    AttendScratch& scratch = m_attend_scratch[std::size_t(thread)];
    for (std::int64_t task = begin; task < end; ++task) {
      const int t = int(task / slices), h = int(task % slices) * per_task;
      const std::size_t at = std::size_t(t) * s.q_dim() + std::size_t(h) * std::size_t(hd);
      m_cache->attend(layer, h, per_task, pos0 + t + 1, &m_q[at], &m_att[at], scratch);
    }
  });
}

void Transformer::run_chunk(std::span<const int> tokens, int pos0, float* logits_out, bool all_logits) {
  const ModelShape& s = m_model.shape;
  const int n = int(tokens.size());
  const std::size_t dim = s.hidden, q_dim = s.q_dim(), kv_dim = s.kv_dim(), ffn = s.ffn;
  const FormatKernels& emb = *find_kernels(m_model.token_embedding.type);
  for (int t = 0; t < n; ++t) {
    emb.dequantize(m_model.token_embedding.row(tokens[std::size_t(t)]), &m_x[std::size_t(t) * dim], dim);
    m_model.release_embedding_row(tokens[std::size_t(t)]);
  }

  // Element-wise work token by token on the pool; a decode step (one token) stays on this thread.
  const auto each_token = [&](const auto& fn) {
    m_pool.parallel_for(n, k_token_grain, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t t = begin; t < end; ++t) fn(std::size_t(t));
    });
  };
  const auto add_residual = [&](std::size_t t) {
    for (std::size_t i = t * std::size_t(dim); i < (t + 1) * std::size_t(dim); ++i) m_x[i] += m_xb[i];
  };
  // A prompt's prefill (no per-token logits wanted) may take the faster kernels whose floats
  // differ from decode's; a call whose logits are compared with decode's may not.
  const Bits bits = all_logits ? Bits::decode : Bits::any;
  for (int l = 0; l < int(s.layers); ++l) {
    const LayerWeights& w = m_model.layers[std::size_t(l)];
    each_token([&](std::size_t t) { rmsnorm(&m_xb[t * dim], &m_x[t * dim], w.attn_norm, dim, m_model.norm_eps); });
    const MatmulJob qkv[] = {{&w.wq, m_q.data()}, {&w.wk, m_k.data()}, {&w.wv, m_v.data()}};
    m_matmul.run(m_xb.data(), n, dim, qkv, bits);
    each_token([&](std::size_t t) {
      float* q = &m_q[t * q_dim];
      float* k = &m_k[t * kv_dim];
      const int pos = pos0 + int(t);
      for (int h = 0; h < int(s.heads); ++h) rope_head(q + h * int(s.head_dim), int(s.head_dim), pos, m_rope_freq.data(), s.rope_layout);
      for (int h = 0; h < int(s.kv_heads); ++h) rope_head(k + h * int(s.head_dim), int(s.head_dim), pos, m_rope_freq.data(), s.rope_layout);
    });
    // Stores stay on this thread: paged strategies allocate pages as positions arrive.
    for (int t = 0; t < n; ++t) m_cache->store(l, pos0 + t, &m_k[std::size_t(t) * kv_dim], &m_v[std::size_t(t) * kv_dim]);
    attention(l, n, pos0);
    const MatmulJob wo[] = {{&w.wo, m_xb.data()}};
    m_matmul.run(m_att.data(), n, q_dim, wo, bits);
    each_token([&](std::size_t t) {
      add_residual(t);
      rmsnorm(&m_xb[t * dim], &m_x[t * dim], w.ffn_norm, dim, m_model.norm_eps);
    });
    const MatmulJob gate_up[] = {{&w.w1, m_hb.data()}, {&w.w3, m_hb2.data()}};
    m_matmul.run(m_xb.data(), n, dim, gate_up, bits);
    each_token([&](std::size_t t) { m_swiglu(&m_hb[t * ffn], &m_hb2[t * ffn], std::size_t(ffn)); });
    const MatmulJob down[] = {{&w.w2, m_xb.data()}};
    m_matmul.run(m_hb.data(), n, ffn, down, bits);
    each_token(add_residual);
  }

  if (logits_out == nullptr) return;
  // Only the tokens whose logits are wanted go through the final norm and classifier.
  const int first = all_logits ? 0 : n - 1;
  const int count = n - first;
  for (int t = first; t < n; ++t) rmsnorm(&m_xb[std::size_t(t - first) * dim], &m_x[std::size_t(t) * dim], m_model.final_norm, dim, m_model.norm_eps);
  const MatmulJob cls[] = {{&m_model.classifier, logits_out}};
  m_matmul.run(m_xb.data(), count, dim, cls);
}

}  // namespace trilemma::engine
