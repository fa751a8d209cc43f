#include "models/gguf_shape.hpp"

#include <filesystem>
#include <map>

#include "engine/gguf/gguf_file.hpp"
#include "types/safe_text.hpp"

namespace trilemma::models {
namespace {

Result<std::uint32_t> required(const gguf::GgufFile& f, const std::string& key) {
  const auto v = f.get_uint(key);
  if (!v) return make_error(ErrorKind::input, f.name(), key, "required metadata key is missing or not an integer");
  if (*v > 0xffffffffull) return make_error(ErrorKind::input, f.name(), key, "value " + std::to_string(*v) + " is absurd");
  return static_cast<std::uint32_t>(*v);
}

std::uint32_t optional(const gguf::GgufFile& f, const std::string& key, std::uint32_t fallback) {
  const auto v = f.get_uint(key);
  return (v && *v <= 0xffffffffull) ? static_cast<std::uint32_t>(*v) : fallback;
}

}  // namespace

Result<Model> model_from_gguf(const std::string& path) {
  TRILEMMA_TRY(f, gguf::GgufFile::open(path));
  const auto arch = f.get_string("general.architecture");
  if (!arch) return make_error(ErrorKind::input, path, "general.architecture", "required metadata key is missing");
  const std::string a = *arch + ".";
  Model m;
  m.origin = path;
  // The file's absolute path: a plan is emitted, verified or served from other directories than
  // the one it was made in (Ollama reads a relative FROM against the Modelfile's own folder).
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(path, ec);
  m.path = ec ? path : absolute.lexically_normal().string();
  m.architecture = *arch;
  m.id = as_id(std::filesystem::path(path).stem().string());  // ids are tokens, whatever the file is called
  m.name = f.get_string("general.name").value_or(m.id);
  m.publisher = f.get_string("general.organization").value_or("unknown (GGUF)");
  m.tokenizer_family = f.get_string("tokenizer.ggml.model").value_or("unknown") + "-vocab-" +
                       std::to_string(f.array_length("tokenizer.ggml.tokens"));
  ModelShape& s = m.shape;
  TRILEMMA_TRY(layers, required(f, a + "block_count"));
  TRILEMMA_TRY(hidden, required(f, a + "embedding_length"));
  TRILEMMA_TRY(heads, required(f, a + "attention.head_count"));
  s.layers = layers;
  s.hidden = hidden;
  s.heads = heads;
  s.kv_heads = optional(f, a + "attention.head_count_kv", heads);
  s.head_dim = optional(f, a + "attention.key_length", heads ? hidden / heads : 0);
  s.ffn = optional(f, a + "feed_forward_length", 0);
  s.context = optional(f, a + "context_length", 0);
  s.rope_theta = f.get_float(a + "rope.freq_base").value_or(10000.0);
  s.rope_layout = (*arch == "llama" || *arch == "mistral") ? RopeLayout::adjacent : RopeLayout::neox;
  s.sliding_window = optional(f, a + "attention.sliding_window", 0);
  if (s.sliding_window) s.sliding_window_layers = (*arch == "gemma2") ? layers / 2 : layers;
  const std::uint32_t experts = optional(f, a + "expert_count", 0);
  if (experts) {
    s.moe.experts = experts;
    s.moe.experts_per_token = optional(f, a + "expert_used_count", 0);
    s.moe.shared_experts = optional(f, a + "expert_shared_count", 0);
    s.moe.expert_ffn = optional(f, a + "expert_feed_forward_length", s.ffn);
    s.ffn = 0;
  }
  // Vocabulary: the tokenizer's token list, or the embedding tensor's row count.
  s.vocab = static_cast<std::uint32_t>(f.array_length("tokenizer.ggml.tokens"));
  if (const auto* emb = f.find_tensor("token_embd.weight"); emb && emb->dims.size() == 2)
    s.vocab = static_cast<std::uint32_t>(emb->dims[1]);
  if (s.vocab == 0) s.vocab = optional(f, a + "vocab_size", 0);
  s.tied_embeddings = f.find_tensor("output.weight") == nullptr;
  s.attention_bias = f.find_tensor("blk.0.attn_q.bias") != nullptr;
  s.ffn_gated = f.find_tensor("blk.0.ffn_gate.weight") != nullptr || experts > 0;
  if (s.context == 0) s.context = 2048;  // absent in some old files; llama.cpp's historical default
  if (auto problem = validate_shape(s); !problem.empty())
    return make_error(ErrorKind::input, path, a + problem.substr(0, problem.find(':')), problem);

  // Real per-tensor types: the planner's memory model uses these instead of a recipe.
  std::map<std::string, std::uint64_t> bytes_by_type;
  for (const auto& t : f.tensors()) {
    StoredTensor st;
    st.name = t.name;
    st.elems = t.elems;
    st.bytes = t.bytes;
    st.type = t.type ? std::string(info(*t.type).name) : "ggml-type-" + std::to_string(t.gguf_type);
    bytes_by_type[st.type] += st.bytes;
    m.stored_tensors.push_back(std::move(st));
  }
  std::uint64_t best = 0;
  for (const auto& [type, bytes] : bytes_by_type)
    if (bytes > best) best = bytes, m.stored_format = type;
  m.sources.push_back({{"shape"}, path, "read from the GGUF header"});
  return m;
}

}  // namespace trilemma::models
