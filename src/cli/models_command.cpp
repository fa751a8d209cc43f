// `trilemma models list|show ID|inspect PATH`
#include <nlohmann/json.hpp>

#include <iostream>

#include "cli/json_output.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/format.hpp"
#include "memory/tensor_layout.hpp"
#include "models/catalog.hpp"

namespace trilemma::cli {
namespace {

using nlohmann::json;

json model_json(const models::Model& m) {
  const auto c = count_parameters(m.shape);
  const auto& s = m.shape;
  json j = {{"id", m.id}, {"name", m.name}, {"publisher", m.publisher}, {"architecture", m.architecture},
            {"tokenizer_family", m.tokenizer_family}, {"origin", m.origin},
            {"shape", {{"layers", s.layers}, {"hidden", s.hidden}, {"heads", s.heads}, {"kv_heads", s.kv_heads},
                       {"head_dim", s.head_dim}, {"ffn", s.ffn}, {"vocab", s.vocab}, {"tied_embeddings", s.tied_embeddings},
                       {"context", s.context}, {"rope_theta", s.rope_theta},
                       {"rope_layout", s.rope_layout == RopeLayout::neox ? "neox" : "adjacent"},
                       {"attention_bias", s.attention_bias}, {"sliding_window", s.sliding_window},
                       {"sliding_window_layers", s.sliding_window_layers},
                       {"moe", {{"experts", s.moe.experts}, {"experts_per_token", s.moe.experts_per_token},
                                {"shared_experts", s.moe.shared_experts}, {"expert_ffn", s.moe.expert_ffn}}}}},
            {"parameters", {{"embedding", c.embedding}, {"attention", c.attention}, {"ffn", c.ffn}, {"router", c.router},
                            {"norms", c.norms}, {"output", c.output}, {"total", c.total()},
                            {"active_per_token", c.active_per_token}}},
            {"published_total", m.published_total ? json(*m.published_total) : json()}};
  json sizes = json::object();
  for (const auto& row : weight_formats()) {
    const auto w = memory::weight_bytes(s, row.format);
    sizes[std::string(row.name)] = {{"bytes", w.total}, {"bits_per_weight", w.bits_per_weight}};
  }
  j["weight_bytes"] = sizes;
  if (!m.stored_tensors.empty()) {
    double total = 0;
    for (const auto& t : m.stored_tensors) total += double(t.bytes);
    j["stored"] = {{"format", m.stored_format}, {"tensors", m.stored_tensors.size()}, {"bytes", total}};
  }
  return j;
}

void print_model(const models::Model& m) {
  const auto c = count_parameters(m.shape);
  const auto& s = m.shape;
  std::cout << m.name << " (" << m.id << ", " << m.architecture << ", tokenizer " << m.tokenizer_family << ")\n"
            << "  shape      " << s.layers << " layers, hidden " << s.hidden << ", " << s.heads << " heads / " << s.kv_heads
            << " KV heads x " << s.head_dim << ", ffn " << s.ffn << ", vocab " << s.vocab << ", context " << s.context
            << (s.tied_embeddings ? ", tied embeddings" : "") << "\n";
  if (s.is_moe())
    std::cout << "  moe        " << s.moe.experts << " experts, " << s.moe.experts_per_token << " per token, expert ffn "
              << s.moe.expert_ffn << "\n";
  if (s.sliding_window) std::cout << "  window     " << s.sliding_window << " on " << s.sliding_window_layers << " layers\n";
  std::cout << "  parameters " << count(c.total()) << " total (embedding " << count(c.embedding) << ", attention "
            << count(c.attention) << ", ffn " << count(c.ffn) << ", output " << count(c.output) << "), "
            << count(c.active_per_token) << " read per token";
  if (m.published_total) std::cout << "; published " << count(*m.published_total);
  std::cout << "\n  weights    ";
  for (const auto& row : weight_formats()) {
    if (row.format == WeightFormat::f32 || row.format == WeightFormat::int2) continue;
    std::cout << row.name << " " << gib(memory::weight_bytes(s, row.format).total) << "  ";
  }
  std::cout << "\n";
  if (!m.stored_tensors.empty()) {
    double total = 0;
    for (const auto& t : m.stored_tensors) total += double(t.bytes);
    std::cout << "  stored     " << m.stored_tensors.size() << " tensors, mostly " << m.stored_format << ", "
              << gib(total, 3) << "\n";
  }
  for (const auto& src : m.sources) std::cout << "  source     " << src.url << "\n";
  if (!m.notes.empty()) std::cout << "  notes      " << m.notes << "\n";
}

}  // namespace

namespace {

int list_models(bool as_json) {
  auto all = models::builtin_models();
  if (!all.ok()) return report_error(all.error());
  if (as_json) {
    json out = json::array();
    for (const auto& m : *all) out.push_back(model_json(m));
    std::cout << json_text(out) << "\n";
    return k_exit_ok;
  }
  std::cout << pad("id", 22) << pad("params", 10) << pad("per token", 10) << pad("layers", 8) << pad("ctx", 8) << "tokenizer\n";
  for (const auto& m : *all) {
    const auto c = count_parameters(m.shape);
    std::cout << pad(m.id, 22) << pad(count(c.total()), 10) << pad(count(c.active_per_token), 10)
              << pad(std::to_string(m.shape.layers), 8) << pad(std::to_string(m.shape.context), 8) << m.tokenizer_family << "\n";
  }
  std::cout << all->size() << " models\n";
  return k_exit_ok;
}

}  // namespace

void add_models_command(CLI::App& app, Handler& handler) {
  auto* cmd = app.add_subcommand("models", "Model shapes: the catalog, GGUF headers, config.json");
  cmd->require_subcommand(1);
  static bool as_json = false;
  static std::string id;
  auto* l = cmd->add_subcommand("list", "List catalog models");
  l->add_flag("--json", as_json, "JSON output: an array of model objects (docs/json-schemas.md#model)");
  l->callback([&] { handler = [] { return list_models(as_json); }; });
  for (const char* name : {"show", "inspect"}) {
    auto* s = cmd->add_subcommand(name, std::string(name) == "show" ? "Show a catalog model (or any model source)"
                                                                    : "Read a shape from a .gguf header or config.json");
    s->add_option(std::string(name) == "show" ? "id" : "path", id, "catalog id, .gguf, config.json or model .yaml")->required();
    s->add_flag("--json", as_json, "JSON output (docs/json-schemas.md#model)");
    s->callback([&] {
      handler = [] {
        auto m = models::resolve_model(id);
        if (!m.ok()) return report_error(m.error());
        if (as_json) std::cout << json_text(model_json(*m)) << "\n";
        else print_model(*m);
        return int(k_exit_ok);
      };
    });
  }
}

}  // namespace trilemma::cli
