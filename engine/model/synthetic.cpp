// Synthetic weights: uniform values with the variance of a scaled init (std 1 / sqrt(cols)),
// from a counter-based generator (splitmix64 of seed, tensor index, row), so any row can be
// made on any thread in any order and the bytes depend only on (shape, format, seed). They
// exercise memory traffic and kernels like real weights; their outputs are meaningless.
#include <cmath>

#include "engine/model/loaders.hpp"
#include "engine/model/prepare.hpp"

namespace trilemma::engine {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Row r of tensor `index`: uniform in [-amplitude, amplitude].
void fill_row(std::uint64_t seed, std::uint64_t index, std::int64_t r, float amplitude, float* out, std::int64_t cols) {
  std::uint64_t state = seed ^ (index * 0xD1B54A32D192ED03ull) ^ (std::uint64_t(r) * 0x8CB92BA72F3D8DD7ull);
  for (std::int64_t i = 0; i < cols; i += 2) {
    const std::uint64_t bits = splitmix64(state);
    const float u0 = float(std::uint32_t(bits) >> 8) * 0x1.0p-24f, u1 = float(std::uint32_t(bits >> 32) >> 8) * 0x1.0p-24f;
    out[i] = amplitude * (2.0f * u0 - 1.0f);
    if (i + 1 < cols) out[i + 1] = amplitude * (2.0f * u1 - 1.0f);
  }
}

}  // namespace

bool synthetic_supported(const ModelShape& shape) { return !shape.is_moe() && shape.ffn_gated && !shape.attention_bias; }

Result<Model> make_synthetic(const ModelShape& shape, const std::string& name, const WeightChoice& weights,
                             std::uint64_t seed, ThreadPool& pool) {
  if (const std::string problem = validate_shape(shape); !problem.empty())
    return make_error(ErrorKind::usage, name, "shape", problem);
  if (!synthetic_supported(shape))
    return make_error(ErrorKind::usage, name, "shape", "synthetic models are dense, gated, bias-free llama shapes");
  Model m;
  m.name = name;
  m.title = name;
  m.synthetic = true;
  m.shape = shape;
  std::uint64_t index = 0;
  const auto matrix = [&](const std::string& tensor, std::int64_t rows, std::int64_t cols, float amplitude) {
    const std::uint64_t id = index++;
    return build_matrix(m, tensor, rows, cols, weights.of(tensor).value_or(TensorType::f32), pool,
                        [&, id](std::int64_t r, float* out) { fill_row(seed, id, r, amplitude, out, cols); });
  };
  // Uniform amplitude sqrt(3 / cols) gives std 1 / sqrt(cols): activations keep their scale.
  const auto amp = [](std::int64_t cols) { return std::sqrt(3.0f / float(cols)); };
  const std::int64_t h = shape.hidden, q = shape.q_dim(), kv = shape.kv_dim(), f = shape.ffn;
  auto* ones = reinterpret_cast<float*>(m.storage->allocate(std::size_t(h) * 4));
  for (std::int64_t i = 0; i < h; ++i) ones[i] = 1.0f;
  TRILEMMA_TRY(emb, matrix("token_embd.weight", shape.vocab, h, 1.0f));
  m.token_embedding = emb;
  for (std::uint32_t l = 0; l < shape.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights lw;
    lw.attn_norm = lw.ffn_norm = ones;
    TRILEMMA_TRY(wq, matrix(p + "attn_q.weight", q, h, amp(h)));
    TRILEMMA_TRY(wk, matrix(p + "attn_k.weight", kv, h, amp(h)));
    TRILEMMA_TRY(wv, matrix(p + "attn_v.weight", kv, h, amp(h)));
    TRILEMMA_TRY(wo, matrix(p + "attn_output.weight", h, q, amp(q)));
    TRILEMMA_TRY(w1, matrix(p + "ffn_gate.weight", f, h, amp(h)));
    TRILEMMA_TRY(w2, matrix(p + "ffn_down.weight", h, f, amp(f)));
    TRILEMMA_TRY(w3, matrix(p + "ffn_up.weight", f, h, amp(h)));
    lw.wq = wq, lw.wk = wk, lw.wv = wv, lw.wo = wo, lw.w1 = w1, lw.w2 = w2, lw.w3 = w3;
    m.layers.push_back(lw);
  }
  m.final_norm = ones;
  if (shape.tied_embeddings) {
    m.classifier = m.token_embedding;
  } else {
    TRILEMMA_TRY(cls, matrix("output.weight", shape.vocab, h, amp(h)));
    m.classifier = cls;
  }
  return m;
}

}  // namespace trilemma::engine
