// llama2.c legacy checkpoint (run.c, read_checkpoint / memory_map_weights):
//   int32 dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len
//   token_embedding [vocab][dim], rms_att [L][dim], wq [L][dim][dim], wk [L][kv_dim][dim],
//   wv [L][kv_dim][dim], wo [L][dim][dim], rms_ffn [L][dim], w1 [L][hidden][dim],
//   w2 [L][dim][hidden], w3 [L][hidden][dim], rms_final [dim],
//   freq_cis_real, freq_cis_imag [seq_len][head_size / 2] (unused), wcls [vocab][dim] if vocab < 0
#include <array>
#include <cstring>
#include <filesystem>

#include "engine/gguf/mapped_file.hpp"
#include "engine/model/loaders.hpp"
#include "engine/model/prepare.hpp"
#include "types/llama2c_header.hpp"

namespace trilemma::engine {
namespace {

// Checked a * b for the size arithmetic of a header we do not trust.
bool mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) { return !__builtin_mul_overflow(a, b, &out); }

}  // namespace

Result<Model> load_llama2c(const std::filesystem::path& path, const WeightChoice& weights, ThreadPool& pool) {
  const std::string file = path.string();
  auto mapped = gguf::MappedFile::open(path);
  if (!mapped) return mapped.error();
  const auto bytes = (*mapped)->bytes();
  TRILEMMA_TRY(header, parse_llama2c_header(bytes, file));
  const bool tied = header.tied;
  const std::uint64_t dim = header.dim, hidden = header.hidden_dim, layers = header.layers, heads = header.heads,
                      kv_heads = header.kv_heads, vocab = header.vocab, seq_len = header.seq_len;
  const std::uint64_t head_size = dim / heads, kv_dim = kv_heads * head_size;

  // Offsets in floats, in file order; every product checked.
  struct Part { const char* name; std::uint64_t rows, cols, count; std::uint64_t offset = 0; };
  std::vector<Part> parts = {
      {"token_embedding", vocab, dim, 1}, {"rms_att", 1, dim, layers}, {"wq", dim, dim, layers},
      {"wk", kv_dim, dim, layers},        {"wv", kv_dim, dim, layers}, {"wo", dim, dim, layers},
      {"rms_ffn", 1, dim, layers},        {"w1", hidden, dim, layers}, {"w2", dim, hidden, layers},
      {"w3", hidden, dim, layers},        {"rms_final", 1, dim, 1},    {"freq_cis", seq_len, head_size, 1},
      {"wcls", tied ? 0 : vocab, dim, 1}};
  std::uint64_t floats = 0;
  for (auto& p : parts) {
    std::uint64_t n = 0;
    if (!mul(p.rows, p.cols, n) || !mul(n, p.count, n) || __builtin_add_overflow(floats, n, &p.offset))
      return make_error(ErrorKind::input, file, "byte 0", std::string("header: size of ") + p.name + " overflows");
    std::swap(p.offset, floats);  // p.offset = start, floats = end
  }
  std::uint64_t need = 0;
  if (!mul(floats, 4, need) || need > bytes.size() - k_llama2c_header_bytes)
    return make_error(ErrorKind::input, file, "byte " + std::to_string(bytes.size()),
                      "weights: header needs " + std::to_string(floats) + " floats (" + std::to_string(need + k_llama2c_header_bytes) +
                          " bytes), file has " + std::to_string(bytes.size()) + " bytes");

  Model m;
  m.name = file;
  m.title = std::filesystem::path(file).stem().string();  // GGUF general.name: "stories260K", not a path
  m.storage->keep_file_mapping(*mapped, (*mapped)->bytes());
  m.shape.layers = std::uint32_t(layers);
  m.shape.hidden = std::uint32_t(dim);
  m.shape.heads = std::uint32_t(heads);
  m.shape.kv_heads = std::uint32_t(kv_heads);
  m.shape.head_dim = std::uint32_t(head_size);
  m.shape.ffn = std::uint32_t(hidden);
  m.shape.vocab = std::uint32_t(vocab);
  m.shape.context = std::uint32_t(seq_len);
  m.shape.tied_embeddings = tied;
  m.shape.rope_layout = RopeLayout::adjacent;
  if (const std::string problem = validate_shape(m.shape); !problem.empty())
    return make_error(ErrorKind::input, file, "byte 0", "header: " + problem);
  const std::byte* base = bytes.data() + k_llama2c_header_bytes;
  const auto part = [&](int index, std::uint64_t layer) {
    const Part& p = parts[std::size_t(index)];
    return Matrix{TensorType::f32, std::int64_t(p.rows), std::int64_t(p.cols), base + 4 * (p.offset + layer * p.rows * p.cols)};
  };
  const auto matrix = [&](int index, std::uint64_t layer, const std::string& name) {
    return prepare_matrix(m, name, part(index, layer), weights.of(name), pool);
  };
  // Tensors are named as in GGUF (token_embd.weight, blk.N.attn_q.weight, ...) in reports.
  TRILEMMA_TRY(emb, matrix(0, 0, "token_embd.weight"));
  m.token_embedding = emb;
  for (std::uint64_t l = 0; l < layers; ++l) {
    const std::string pre = "blk." + std::to_string(l) + ".";
    LayerWeights lw;
    lw.attn_norm = reinterpret_cast<const float*>(part(1, l).data);
    lw.ffn_norm = reinterpret_cast<const float*>(part(6, l).data);
    TRILEMMA_TRY(wq, matrix(2, l, pre + "attn_q.weight"));
    TRILEMMA_TRY(wk, matrix(3, l, pre + "attn_k.weight"));
    TRILEMMA_TRY(wv, matrix(4, l, pre + "attn_v.weight"));
    TRILEMMA_TRY(wo, matrix(5, l, pre + "attn_output.weight"));
    TRILEMMA_TRY(w1, matrix(7, l, pre + "ffn_gate.weight"));
    TRILEMMA_TRY(w2, matrix(8, l, pre + "ffn_down.weight"));
    TRILEMMA_TRY(w3, matrix(9, l, pre + "ffn_up.weight"));
    lw.wq = wq, lw.wk = wk, lw.wv = wv, lw.wo = wo, lw.w1 = w1, lw.w2 = w2, lw.w3 = w3;
    m.layers.push_back(lw);
  }
  m.final_norm = reinterpret_cast<const float*>(part(10, 0).data);
  if (tied) {
    m.classifier = m.token_embedding;
  } else {
    TRILEMMA_TRY(cls, matrix(12, 0, "output.weight"));
    m.classifier = cls;
  }
  return m;
}

}  // namespace trilemma::engine
