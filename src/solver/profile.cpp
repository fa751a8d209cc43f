#include "solver/profile.hpp"

#include <filesystem>

#include "io/atomic_write.hpp"
#include "io/embedded_data.hpp"
#include "io/yaml_fields.hpp"
#include "types/deployment.hpp"

namespace trilemma::solver {
namespace {

const std::vector<std::string> k_metrics = {"decode_tok_s", "ttft_ms", "memory_gib", "loss_points", "joules_per_token"};

}  // namespace

std::string metric_name(Metric m) { return k_metrics[static_cast<std::size_t>(m)]; }

Result<Profile> parse_profile(const std::string& text, const std::string& file, const std::string& expected_id) {
  TRILEMMA_TRY(doc, io::parse_yaml(text, file));
  io::YamlContext ctx(file);
  io::FieldReader root(ctx, doc, "");
  Profile p;
  p.origin = file;
  p.id = root.id("id", expected_id);
  p.name = root.string("name");
  p.use_cases = root.string("use_cases");
  p.keeps = root.choice("keeps", {"latency", "memory", "accuracy", "battery"});
  auto c = root.map("constraints");
  p.constraints.max_ttft_ms = c.optional_positive("max_ttft_ms");
  p.constraints.min_decode_tok_s = c.optional_positive("min_decode_tok_s");
  p.constraints.max_memory_gib = c.optional_positive("max_memory_gib");
  p.constraints.max_loss_points = c.optional_positive("max_loss_points");
  p.constraints.max_joules_per_token = c.optional_positive("max_joules_per_token");
  p.constraints.max_power_w = c.optional_positive("max_power_w");
  if (c.has("allowed_weights")) {
    p.constraints.allowed_weights = c.string_list("allowed_weights");
    for (const auto& w : p.constraints.allowed_weights)
      if (!weight_format_from_name(w))
        ctx.fail(doc["constraints"]["allowed_weights"], c.field("allowed_weights"),
                 "unknown weight format '" + w + "' (expected one of: " + weight_format_names() + ")");
  } else {
    c.raw("allowed_weights");
  }
  if (c.has("allowed_kv")) {
    p.constraints.allowed_kv = c.string_list("allowed_kv");
    for (const auto& k : p.constraints.allowed_kv) {
      auto t = tensor_type_from_name(k);
      if (!t || !is_kv_format(*t)) ctx.fail(doc["constraints"]["allowed_kv"], c.field("allowed_kv"), "unknown KV format '" + k + "'");
    }
  } else {
    c.raw("allowed_kv");
  }
  c.finish();
  for (auto o : root.map_list("objective")) {
    Objective obj;
    const std::string metric = o.choice("metric", k_metrics);
    for (std::size_t i = 0; i < k_metrics.size(); ++i)
      if (k_metrics[i] == metric) obj.metric = static_cast<Metric>(i);
    obj.maximize = o.choice("direction", {"min", "max"}) == "max";
    obj.tolerance = o.optional_number("tolerance").value_or(0);
    obj.tolerance_pct = o.optional_number("tolerance_pct").value_or(0);
    o.finish();
    p.objective.push_back(obj);
  }
  if (!ctx.failed() && p.objective.empty()) ctx.fail(doc["objective"], "objective", "must list at least one metric");
  auto d = root.map("defaults");
  p.default_context = d.count("context");
  p.default_prompt = d.count("prompt");
  p.sustained_minutes = d.optional_positive("sustained_minutes");
  d.finish();
  if (!ctx.failed() && (p.default_context == 0 || p.default_prompt == 0))
    ctx.fail(doc["defaults"], "defaults", "context and prompt must be > 0");
  root.finish();
  if (ctx.failed()) return ctx.error();
  return p;
}

Result<std::vector<Profile>> builtin_profiles() {
  std::vector<Profile> out;
  for (const auto& f : io::embedded_yaml_in("profiles")) {
    TRILEMMA_TRY(p, parse_profile(std::string(f.content), std::string(f.path),
                                  std::filesystem::path(std::string(f.path)).stem().string()));
    out.push_back(std::move(p));
  }
  return out;
}

Result<Profile> resolve_profile(const std::string& arg) {
  if (arg.ends_with(".yaml") || arg.ends_with(".yml")) {
    TRILEMMA_TRY(text, io::read_text_file(arg));
    return parse_profile(text, arg, "");
  }
  for (const auto& f : io::embedded_yaml_in("profiles"))
    if (std::filesystem::path(std::string(f.path)).stem() == arg)
      return parse_profile(std::string(f.content), std::string(f.path), arg);
  return make_error(ErrorKind::usage, "--scenario", "", "unknown scenario '" + arg + "' (expected latency, memory, accuracy, battery or a profile .yaml)");
}

}  // namespace trilemma::solver
