#include "models/hf_config.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <type_traits>

#include "io/atomic_write.hpp"
#include "io/json_text.hpp"
#include "types/safe_text.hpp"

namespace trilemma::models {
namespace {

using nlohmann::json;

// Reads a non-negative integer key; `fallback` when absent (nullopt = required).
Result<std::uint32_t> uint_key(const json& j, const std::string& key, const std::string& file,
                               std::optional<std::uint32_t> fallback) {
  if (!j.contains(key) || j[key].is_null()) {
    if (fallback) return *fallback;
    return make_error(ErrorKind::input, file, key, "required key is missing");
  }
  const auto& v = j[key];
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 0xffffffffLL)
    return make_error(ErrorKind::input, file, key, "expected a whole number >= 0, got " + v.dump());
  return static_cast<std::uint32_t>(v.get<std::int64_t>());
}

// Reads a string or boolean key; `fallback` when absent. Another JSON type is an input error
// (a string model_type of 151936 once threw out of the parser).
template <class T>
Result<T> typed_key(const json& j, const std::string& key, const std::string& file, T fallback) {
  static_assert(std::is_same_v<T, bool> || std::is_same_v<T, std::string>);
  if (!j.contains(key) || j[key].is_null()) return fallback;
  const auto& v = j[key];
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) return make_error(ErrorKind::input, file, key, "expected true or false, got " + v.dump());
  } else {
    if (!v.is_string()) return make_error(ErrorKind::input, file, key, "expected a string, got " + v.dump());
  }
  return v.get<T>();
}

}  // namespace

Result<Model> parse_hf_config(const std::string& text, const std::string& file) {
  TRILEMMA_TRY(j, io::parse_json(text, file));
  if (!j.is_object()) return make_error(ErrorKind::input, file, "", "expected a JSON object");
  // Multimodal configs nest the language model.
  if (j.contains("text_config") && j["text_config"].is_object()) j = j["text_config"];

  Model m;
  m.origin = file;
  TRILEMMA_TRY(architecture, typed_key(j, "model_type", file, std::string("llama")));
  m.architecture = architecture;
  const std::string folder = std::filesystem::path(file).parent_path().filename().string();
  m.id = as_id(folder.empty() ? m.architecture : folder);
  m.name = m.id;
  m.publisher = "unknown (config.json)";
  ModelShape& s = m.shape;
  TRILEMMA_TRY(layers, uint_key(j, "num_hidden_layers", file, std::nullopt));
  TRILEMMA_TRY(hidden, uint_key(j, "hidden_size", file, std::nullopt));
  TRILEMMA_TRY(heads, uint_key(j, "num_attention_heads", file, std::nullopt));
  TRILEMMA_TRY(kv_heads, uint_key(j, "num_key_value_heads", file, heads));
  TRILEMMA_TRY(head_dim, uint_key(j, "head_dim", file, heads ? hidden / heads : 0));
  TRILEMMA_TRY(ffn, uint_key(j, "intermediate_size", file, 0u));
  TRILEMMA_TRY(vocab, uint_key(j, "vocab_size", file, std::nullopt));
  TRILEMMA_TRY(context, uint_key(j, "max_position_embeddings", file, std::nullopt));
  s.layers = layers; s.hidden = hidden; s.heads = heads; s.kv_heads = kv_heads; s.head_dim = head_dim;
  s.ffn = ffn; s.vocab = vocab; s.context = context;
  m.tokenizer_family = m.architecture + "-vocab-" + std::to_string(vocab);
  TRILEMMA_TRY(tied, typed_key(j, "tie_word_embeddings", file, false));
  s.tied_embeddings = tied;
  if (j.contains("rope_theta") && j["rope_theta"].is_number()) s.rope_theta = j["rope_theta"].get<double>();
  // llama.cpp runs llama-style checkpoints with interleaved (adjacent) pairs after permuting
  // Q/K at conversion; the others keep the NeoX half split.
  const std::string& t = m.architecture;
  s.rope_layout = (t == "llama" || t == "mistral" || t == "mixtral") ? RopeLayout::adjacent : RopeLayout::neox;
  TRILEMMA_TRY(bias, typed_key(j, "attention_bias", file, t == "qwen2" || t == "qwen2_moe"));
  s.attention_bias = bias;
  TRILEMMA_TRY(use_window, typed_key(j, "use_sliding_window", file, true));
  s.ffn_gated = true;
  if (use_window && j.contains("sliding_window") && j["sliding_window"].is_number_integer()) {
    const auto w = j["sliding_window"].get<std::int64_t>();
    if (w > 0 && w < context) {
      s.sliding_window = static_cast<std::uint32_t>(w);
      // Gemma-2 alternates local and global layers; others window every layer.
      s.sliding_window_layers = (t == "gemma2") ? layers / 2 : layers;
    }
  }
  TRILEMMA_TRY(experts, uint_key(j, j.contains("num_local_experts") ? "num_local_experts" : "num_experts", file, 0u));
  if (experts > 0) {
    TRILEMMA_TRY(per_token, uint_key(j, "num_experts_per_tok", file, std::nullopt));
    TRILEMMA_TRY(expert_ffn, uint_key(j, "moe_intermediate_size", file, ffn));
    // Shared experts run for every token. DeepSeek counts them (n_shared_experts, each of the
    // routed experts' size); Qwen2-MoE gives one shared expert's intermediate size, a multiple
    // of the routed one's (Qwen2-57B-A14B: 20480 = 8 x 2560), counted here as that many experts.
    TRILEMMA_TRY(shared_count, uint_key(j, "n_shared_experts", file, 0u));
    TRILEMMA_TRY(shared_ffn, uint_key(j, "shared_expert_intermediate_size", file, 0u));
    std::uint32_t shared = shared_count;
    if (shared_ffn > 0) {
      if (expert_ffn == 0 || shared_ffn % expert_ffn != 0)
        return make_error(ErrorKind::input, file, "shared_expert_intermediate_size",
                          std::to_string(shared_ffn) + " is not a multiple of moe_intermediate_size " + std::to_string(expert_ffn) +
                              ": a shared expert of another size is not a shape trilemma costs");
      shared = shared_ffn / expert_ffn;
    }
    s.moe = {experts, per_token, shared, expert_ffn};
    // Every layer is MoE in the supported configs; Mixtral's intermediate_size is the expert's.
    s.ffn = 0;
  }
  if (auto problem = validate_shape(s); !problem.empty())
    return make_error(ErrorKind::input, file, "", "shape: " + problem);
  return m;
}

Result<Model> model_from_hf_config(const std::string& path) {
  TRILEMMA_TRY(text, io::read_text_file(path));
  return parse_hf_config(text, path);
}

}  // namespace trilemma::models
