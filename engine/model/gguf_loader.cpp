// GGUF `llama` models: hyperparameters from llama.* keys, tensors by llama.cpp's names
// (token_embd, blk.N.attn_q, ..., output_norm, output). Tensor data stays in the mapping
// unless a conversion is asked for. ggml dims are [cols, rows]: dims[0] is the row length.
#include "engine/model/loaders.hpp"

#include <filesystem>

#include "engine/model/prepare.hpp"

namespace trilemma::engine {
namespace {

struct Reader {
  const gguf::GgufFile& file;
  Model& model;

  Result<std::uint32_t> key(const std::string& k) const {
    const auto v = file.get_uint(k);
    if (!v || *v == 0 || *v > 0xFFFFFFFFull)
      return make_error(ErrorKind::input, file.name(), "metadata[\"" + k + "\"]", "missing, or not a positive 32-bit integer");
    return std::uint32_t(*v);
  }

  // The tensor `name`, checked to be rows x cols (rows 1 for vectors) and of a known type.
  Result<Matrix> tensor(const std::string& name, std::uint64_t rows, std::uint64_t cols) const {
    const gguf::TensorInfo* t = file.find_tensor(name);
    if (t == nullptr) return make_error(ErrorKind::input, file.name(), name, "tensor missing");
    const std::vector<std::uint64_t> want = rows == 1 ? std::vector<std::uint64_t>{cols} : std::vector<std::uint64_t>{cols, rows};
    if (t->dims != want) {
      std::string got;
      for (auto d : t->dims) got += (got.empty() ? "" : ", ") + std::to_string(d);
      return make_error(ErrorKind::input, file.name(), name,
                        "dims [" + got + "] do not match the hyperparameters (want [" + std::to_string(cols) +
                            (rows == 1 ? "" : ", " + std::to_string(rows)) + "])");
    }
    if (!t->type)
      return make_error(ErrorKind::input, file.name(), name, "unknown tensor type id " + std::to_string(t->gguf_type));
    return Matrix{*t->type, std::int64_t(rows), std::int64_t(cols), file.tensor_data(*t).data()};
  }
};

}  // namespace

Result<Model> load_gguf_model(const gguf::GgufFile& file, const WeightChoice& weights, ThreadPool& pool) {
  const auto arch = file.get_string("general.architecture");
  if (arch != "llama")
    return make_error(ErrorKind::input, file.name(), "metadata[\"general.architecture\"]",
                      "\"" + arch.value_or("") + "\" is not supported (llama)");
  Model m;
  m.name = file.name();
  m.title = file.get_string("general.name").value_or(std::filesystem::path(file.name()).stem().string());
  if (file.file_backed()) m.storage->keep_file_mapping(file.owner(), file.bytes());
  else m.storage->keep(file.owner());
  const Reader r{file, m};
  ModelShape& s = m.shape;
  TRILEMMA_TRY(layers, r.key("llama.block_count"));
  TRILEMMA_TRY(hidden, r.key("llama.embedding_length"));
  TRILEMMA_TRY(heads, r.key("llama.attention.head_count"));
  TRILEMMA_TRY(ffn, r.key("llama.feed_forward_length"));
  s.layers = layers, s.hidden = hidden, s.heads = heads, s.ffn = ffn;
  s.kv_heads = std::uint32_t(file.get_uint("llama.attention.head_count_kv").value_or(heads));
  s.head_dim = std::uint32_t(file.get_uint("llama.attention.key_length").value_or(hidden / heads));
  s.context = std::uint32_t(file.get_uint("llama.context_length").value_or(2048));
  s.rope_theta = file.get_float("llama.rope.freq_base").value_or(10000.0);
  s.rope_layout = RopeLayout::adjacent;
  m.norm_eps = float(file.get_float("llama.attention.layer_norm_rms_epsilon").value_or(1e-5));
  const gguf::TensorInfo* emb = file.find_tensor("token_embd.weight");
  if (emb == nullptr || emb->dims.size() != 2)
    return make_error(ErrorKind::input, file.name(), "token_embd.weight", "tensor missing or not 2-D");
  s.vocab = std::uint32_t(emb->dims[1]);
  s.tied_embeddings = file.find_tensor("output.weight") == nullptr;
  if (const std::string problem = validate_shape(s); !problem.empty())
    return make_error(ErrorKind::input, file.name(), "llama.*", problem);

  const auto matrix = [&](const std::string& name, std::uint64_t rows, std::uint64_t cols) -> Result<Matrix> {
    TRILEMMA_TRY(src, r.tensor(name, rows, cols));
    return prepare_matrix(m, name, src, weights.of(name), pool);
  };
  const auto norm = [&](const std::string& name) -> Result<const float*> {
    TRILEMMA_TRY(src, r.tensor(name, 1, s.hidden));
    return prepare_norm(m, name, src);
  };
  TRILEMMA_TRY(tok, matrix("token_embd.weight", s.vocab, s.hidden));
  m.token_embedding = tok;
  for (std::uint32_t l = 0; l < s.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights lw;
    TRILEMMA_TRY(an, norm(p + "attn_norm.weight"));
    TRILEMMA_TRY(fn, norm(p + "ffn_norm.weight"));
    TRILEMMA_TRY(wq, matrix(p + "attn_q.weight", s.q_dim(), s.hidden));
    TRILEMMA_TRY(wk, matrix(p + "attn_k.weight", s.kv_dim(), s.hidden));
    TRILEMMA_TRY(wv, matrix(p + "attn_v.weight", s.kv_dim(), s.hidden));
    TRILEMMA_TRY(wo, matrix(p + "attn_output.weight", s.hidden, s.q_dim()));
    TRILEMMA_TRY(w1, matrix(p + "ffn_gate.weight", s.ffn, s.hidden));
    TRILEMMA_TRY(w2, matrix(p + "ffn_down.weight", s.hidden, s.ffn));
    TRILEMMA_TRY(w3, matrix(p + "ffn_up.weight", s.ffn, s.hidden));
    lw.attn_norm = an, lw.ffn_norm = fn;
    lw.wq = wq, lw.wk = wk, lw.wv = wv, lw.wo = wo, lw.w1 = w1, lw.w2 = w2, lw.w3 = w3;
    m.layers.push_back(lw);
  }
  TRILEMMA_TRY(fin, norm("output_norm.weight"));
  m.final_norm = fin;
  if (s.tied_embeddings) {
    m.classifier = m.token_embedding;
  } else {
    TRILEMMA_TRY(cls, matrix("output.weight", s.vocab, s.hidden));
    m.classifier = cls;
  }
  return m;
}

}  // namespace trilemma::engine
