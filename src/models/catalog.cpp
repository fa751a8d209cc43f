#include "models/catalog.hpp"

#include <algorithm>
#include <filesystem>

#include "io/atomic_write.hpp"
#include "io/embedded_data.hpp"
#include "io/yaml_fields.hpp"
#include "models/gguf_shape.hpp"
#include "models/hf_config.hpp"

namespace trilemma::models {
namespace {

std::string stem_of(std::string_view path) { return std::filesystem::path(std::string(path)).stem().string(); }

void read_shape(io::FieldReader s, ModelShape& shape) {
  shape.layers = s.count("layers");
  shape.hidden = s.count("hidden");
  shape.heads = s.count("heads");
  shape.kv_heads = s.count("kv_heads");
  shape.head_dim = s.count("head_dim");
  shape.ffn = s.count("ffn");
  shape.vocab = s.count("vocab");
  shape.tied_embeddings = s.boolean("tied_embeddings");
  shape.context = s.count("context");
  shape.rope_theta = s.positive("rope_theta");
  shape.rope_layout = s.choice("rope_layout", {"adjacent", "neox"}) == "neox" ? RopeLayout::neox : RopeLayout::adjacent;
  shape.attention_bias = s.boolean("attention_bias");
  shape.ffn_gated = s.boolean("ffn_gated");
  shape.sliding_window = s.optional_count("sliding_window").value_or(0);
  shape.sliding_window_layers = s.optional_count("sliding_window_layers").value_or(0);
  if (auto m = s.optional_map("moe")) {
    shape.moe.experts = m->count("experts");
    shape.moe.experts_per_token = m->count("experts_per_token");
    shape.moe.shared_experts = m->count("shared_experts");
    shape.moe.expert_ffn = m->count("expert_ffn");
    m->finish();
  }
  s.finish();
}

}  // namespace

Result<Model> parse_model_yaml(const std::string& text, const std::string& file, const std::string& expected_id) {
  TRILEMMA_TRY(doc, io::parse_yaml(text, file));
  io::YamlContext ctx(file);
  io::FieldReader root(ctx, doc, "");
  Model m;
  m.origin = file;
  m.id = root.id("id", expected_id);
  m.name = root.string("name");
  m.publisher = root.string("publisher");
  m.architecture = root.string("architecture");
  m.tokenizer_family = root.string("tokenizer_family");
  m.family = root.optional_string("family").value_or("");
  read_shape(root.map("shape"), m.shape);
  if (auto p = root.optional_map("params")) {
    m.published_total = p->positive("published_total");
    m.published_active = p->optional_positive("published_active");
    p->string("source");
    p->finish();
  } else {
    ctx.fail(doc, "params", "required field is missing");
  }
  for (auto s : root.map_list("sources")) {
    ModelSource src;
    src.fields = s.string_list("fields");
    src.url = s.string("url");
    src.note = s.optional_string("note").value_or("");
    s.finish();
    m.sources.push_back(std::move(src));
  }
  m.notes = root.optional_string("notes").value_or("");
  root.finish();
  if (!ctx.failed()) {
    if (auto problem = validate_shape(m.shape); !problem.empty())
      ctx.fail(doc["shape"], "shape." + problem.substr(0, problem.find(':')), problem.substr(problem.find(':') + 2));
  }
  if (ctx.failed()) return ctx.error();
  return m;
}

namespace {

Result<std::vector<Model>> parse_catalog() {
  std::vector<Model> out;
  for (const auto& f : io::embedded_yaml_in("models")) {
    TRILEMMA_TRY(m, parse_model_yaml(std::string(f.content), std::string(f.path), stem_of(f.path)));
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.id < b.id; });
  return out;
}

}  // namespace

Result<std::vector<Model>> builtin_models() {
  // The catalog is compiled in, so one parse serves the whole run (gate, calibrate and the
  // fitter ask for it per row).
  static const Result<std::vector<Model>> catalog = parse_catalog();
  return catalog;
}

Result<Model> resolve_model(const std::string& arg) {
  const std::filesystem::path p(arg);
  const std::string ext = p.extension().string();
  if (ext == ".gguf") return model_from_gguf(arg);
  if (ext == ".json") return model_from_hf_config(arg);
  if (ext == ".yaml" || ext == ".yml") {
    TRILEMMA_TRY(text, io::read_text_file(arg));
    return parse_model_yaml(text, arg, "");
  }
  for (const auto& f : io::embedded_yaml_in("models"))
    if (stem_of(f.path) == arg) return parse_model_yaml(std::string(f.content), std::string(f.path), arg);
  std::string ids;
  for (const auto& f : io::embedded_yaml_in("models")) {
    const std::string stem = stem_of(f.path);
    if (stem.find(arg) != std::string::npos || arg.find(stem.substr(0, stem.find('-'))) != std::string::npos)
      ids += (ids.empty() ? "" : ", ") + stem;
  }
  return make_error(ErrorKind::input, "", "",
                    "unknown model '" + arg + "'" + (ids.empty() ? "" : " (similar: " + ids + ")") +
                        "; give a catalog id (`trilemma models list`), a .gguf file or a config.json");
}

}  // namespace trilemma::models
