#include "solver/plan_document.hpp"


#include "io/json_text.hpp"
#include "io/yaml_json.hpp"
#include "types/safe_text.hpp"

namespace trilemma::solver {
namespace {

using nlohmann::json;

json range_json(const Range& r) { return {{"low", r.low}, {"mid", r.mid}, {"high", r.high}}; }

Error bad(const std::string& file, const std::string& where, const std::string& message) {
  return make_error(ErrorKind::input, file, where, message);
}

std::vector<std::string> violation_texts(const std::vector<Violation>& violations) {
  std::vector<std::string> out;
  for (const auto& v : violations) out.push_back(v.text());
  return out;
}

}  // namespace

json config_to_json(const DeploymentConfig& c) {
  json spec = {{"kind", std::string(draft_kind_name(c.speculative.kind))}};
  if (c.speculative.on()) {
    spec["draft_len"] = c.speculative.draft_len;
    if (c.speculative.kind == DraftKind::model) spec["draft_model"] = c.speculative.draft_model;
    if (c.speculative.kind != DraftKind::layers) spec["draft_weights"] = std::string(info(c.speculative.draft_weights).name);
    if (c.speculative.kind == DraftKind::layers) spec["draft_layers"] = c.speculative.draft_layers;
  }
  json j = {{"weights", std::string(info(c.weights).name)},
            {"kv_type", std::string(info(c.kv_type).name)},
            {"kv_strategy", std::string(info(c.kv_strategy).name)},
            {"context", c.context},
            {"prompt", c.prompt},
            {"backend", std::string(info(c.backend).name)},
            {"threads", c.threads},
            {"speculative", spec}};
  for (const KvStrategyParam& p : info(c.kv_strategy).params) {
    if (p.whole) j[std::string(p.key)] = static_cast<std::uint32_t>(p.get(c));
    else j[std::string(p.key)] = p.get(c);
  }
  if (c.prompt_depth > 0) j["prompt_depth"] = c.prompt_depth;
  if (c.imatrix) j["imatrix"] = true;
  return j;
}

Result<DeploymentConfig> config_from_json(const json& j, const std::string& file, const std::string& where) {
  if (!j.is_object()) return bad(file, where, "expected an object");
  DeploymentConfig c;
  auto str = [&](const char* key) -> Result<std::string> {
    if (!j.contains(key) || !j[key].is_string()) return bad(file, where + "." + key, "missing or not a string");
    return j[key].get<std::string>();
  };
  auto uint = [&](const json& o, const char* key, const std::string& at) -> Result<std::uint32_t> {
    if (!o.contains(key) || !o[key].is_number_unsigned() || o[key].get<std::uint64_t>() > 0xffffffffull)
      return bad(file, at + "." + key, "missing or not a whole number >= 0");
    return static_cast<std::uint32_t>(o[key].get<std::uint64_t>());
  };
  TRILEMMA_TRY(weights, str("weights"));
  const auto w = weight_format_from_name(weights);
  if (!w) return bad(file, where + ".weights", "unknown weight format '" + weights + "' (expected one of: " + weight_format_names() + ")");
  c.weights = *w;
  if (j.contains("imatrix")) {
    if (!j["imatrix"].is_boolean()) return bad(file, where + ".imatrix", "not true or false");
    c.imatrix = j["imatrix"].get<bool>();
  }
  TRILEMMA_TRY(kv, str("kv_type"));
  const auto k = tensor_type_from_name(kv);
  if (!k || !is_kv_format(*k)) return bad(file, where + ".kv_type", "unknown KV format '" + kv + "'");
  c.kv_type = *k;
  TRILEMMA_TRY(strategy, str("kv_strategy"));
  const auto s = kv_strategy_from_name(strategy);
  if (!s) return bad(file, where + ".kv_strategy", "unknown KV strategy '" + strategy + "' (expected one of: " + kv_strategy_names() + ")");
  c.kv_strategy = *s;
  TRILEMMA_TRY(context, uint(j, "context", where));
  TRILEMMA_TRY(prompt, uint(j, "prompt", where));
  TRILEMMA_TRY(threads, uint(j, "threads", where));
  TRILEMMA_TRY(backend, str("backend"));
  c.context = context;
  c.prompt = prompt;
  if (j.contains("prompt_depth")) {
    TRILEMMA_TRY(depth, uint(j, "prompt_depth", where));
    c.prompt_depth = depth;
  }
  c.threads = threads;
  const auto b = backend_from_name(backend);
  if (!b) return bad(file, where + ".backend", "unknown backend '" + backend + "' (expected one of: " + backend_names() + ")");
  c.backend = *b;
  if (c.context == 0) return bad(file, where + ".context", "must be > 0");
  for (const KvStrategyParam& p : info(c.kv_strategy).params) {
    const std::string key(p.key);
    if (p.whole) {
      TRILEMMA_TRY(v, uint(j, key.c_str(), where));
      p.set(c, v);
    } else {
      if (!j.contains(key) || !j[key].is_number()) return bad(file, where + "." + key, "missing or not a number");
      p.set(c, j[key].get<double>());
    }
  }
  if (const std::string why = info(c.kv_strategy).validate_params(c); !why.empty()) {  // "field: problem"
    const auto colon = why.find(": ");
    return bad(file, where + "." + why.substr(0, colon), why.substr(colon + 2));
  }
  if (!j.contains("speculative") || !j["speculative"].is_object()) return bad(file, where + ".speculative", "missing");
  const json& sp = j["speculative"];
  const std::string at = where + ".speculative";
  if (!sp.contains("kind") || !sp["kind"].is_string()) return bad(file, at + ".kind", "missing or not a string");
  const std::string kind_name = sp["kind"].get<std::string>();
  const auto kind = draft_kind_from_name(kind_name);
  if (!kind) return bad(file, at + ".kind", "unknown draft kind '" + kind_name + "' (expected one of: " + draft_kind_names() + ")");
  c.speculative.kind = *kind;
  if (c.speculative.on()) {
    TRILEMMA_TRY(len, uint(sp, "draft_len", at));
    c.speculative.draft_len = len;
    if (*kind == DraftKind::model) {
      if (!sp.contains("draft_model") || !sp["draft_model"].is_string()) return bad(file, at + ".draft_model", "missing");
      c.speculative.draft_model = sp["draft_model"].get<std::string>();
    }
    if (*kind != DraftKind::layers) {
      if (!sp.contains("draft_weights") || !sp["draft_weights"].is_string()) return bad(file, at + ".draft_weights", "missing");
      const std::string dw_name = sp["draft_weights"].get<std::string>();
      const auto dw = weight_format_from_name(dw_name);
      if (!dw)
        return bad(file, at + ".draft_weights", "unknown weight format '" + dw_name + "' (expected one of: " + weight_format_names() + ")");
      c.speculative.draft_weights = *dw;
    } else {
      TRILEMMA_TRY(layers, uint(sp, "draft_layers", at));
      c.speculative.draft_layers = layers;
    }
  }
  // The same rules as plan's pins (types/deployment.hpp).
  if (const std::string problem = validate_config(c); !problem.empty())
    return bad(file, where + "." + problem.substr(0, problem.find(':')), problem.substr(problem.find(':') + 2));
  return c;
}

json energy_to_json(const EnergyEstimate& e) {
  if (!e.known) return {{"known", false}, {"basis", e.basis}};
  json j = {{"known", true},
            {"decode_w", range_json(e.decode_w)},
            {"prefill_w", range_json(e.prefill_w)},
            {"joules_per_token", range_json(e.joules_per_token)},
            {"joules_per_prompt_token", range_json(e.joules_per_prompt_token)},
            {"basis", e.basis}};
  if (e.battery_pct_per_1k_tokens) j["battery_pct_per_1k_tokens"] = range_json(*e.battery_pct_per_1k_tokens);
  return j;
}

json candidate_to_json(const Candidate& c) {
  const auto& e = c.estimate;
  return {{"config", config_to_json(c.config)},
          {"summary", describe(c.config)},
          {"memory",
           {{"weights_bytes", e.memory.weights_bytes},
            {"kv_bytes", e.memory.kv_bytes},
            {"kv_spilled_bytes", e.memory.kv_spilled_bytes},
            {"scratch_bytes", e.memory.scratch_bytes},
            {"runtime_bytes", e.memory.runtime_bytes},
            {"draft_bytes", e.memory.draft_bytes},
            {"total_bytes", e.memory.total_bytes},
            {"usable_bytes", e.memory.usable_bytes}}},
          {"latency",
           {{"decode_tok_s", range_json(e.latency.decode_tok_s)},
            {"ttft_ms", range_json(e.latency.ttft_ms)},
            {"prefill_tok_s", range_json(e.latency.prefill_tok_s)},
            {"bytes_per_token", e.latency.bytes_per_token},
            {"flops_per_token", e.latency.flops_per_token},
            {"bound", e.latency.bound},
            {"effective_bandwidth_gbps", e.latency.effective_bandwidth_gbps},
            {"effective_compute_gflops", e.latency.effective_compute_gflops},
            {"compute_path", e.latency.compute_path}, {"path_peak_gops", e.latency.path_peak_gops},
            {"acceptance", e.latency.acceptance},
            {"tokens_per_pass", e.latency.tokens_per_pass},
            {"speedup", e.latency.speedup},
            {"draft_cost_ratio", e.latency.draft_cost_ratio}}},
          {"accuracy",
           {{"kld", range_json(e.accuracy.kld)},
            {"ppl_delta_pct", range_json(e.accuracy.ppl_delta_pct)},
            {"loss_points", range_json(e.accuracy.points)}}},
          {"energy", energy_to_json(e.energy)},
          {"violations", violation_texts(c.violations)},
          {"basis", e.basis}};
}

json plan_to_json(const PlanResult& r, const models::Model& model, const devices::Device& device, const Profile& profile) {
  json j;
  j["schema"] = "trilemma.plan";
  j["schema_version"] = k_plan_schema_version;
  j["model"] = {{"id", model.id}, {"origin", model.origin}, {"path", model.path},
                {"architecture", model.architecture}, {"stored_format", model.stored_format},
                {"tokenizer_family", model.tokenizer_family},
                {"shape",
                 {{"layers", model.shape.layers}, {"hidden", model.shape.hidden}, {"heads", model.shape.heads},
                  {"kv_heads", model.shape.kv_heads}, {"head_dim", model.shape.head_dim}, {"ffn", model.shape.ffn},
                  {"vocab", model.shape.vocab}, {"context", model.shape.context},
                  {"experts", model.shape.moe.experts}, {"experts_per_token", model.shape.moe.experts_per_token}}}};
  j["device"] = {{"id", device.id}, {"name", device.name}, {"class", device.device_class},
                 {"ram_gib", device.ram_gib}, {"peak_bandwidth_gbps", device.peak_bandwidth_gbps}};
  j["scenario"] = profile.id;
  j["context"] = r.context;
  j["prompt"] = r.prompt;
  j["status"] = r.chosen ? "ok" : "infeasible";
  if (r.sustained)
    j["sustained"] = {{"minutes", r.sustained->minutes}, {"fraction", range_json(r.sustained->fraction)},
                      {"has_data", r.sustained->has_data}, {"basis", r.sustained->basis}};
  j["evaluated"] = r.evaluated;
  j["feasible"] = r.feasible;
  if (r.chosen) {
    j["chosen"] = candidate_to_json(*r.chosen);
    j["gives_up"] = r.gives_up;
    j["binding"] = r.binding;
  }
  j["runners_up"] = json::array();
  for (const auto& c : r.runners_up) j["runners_up"].push_back(candidate_to_json(c));
  j["front"] = json::array();
  for (const auto& c : r.front)
    j["front"].push_back({{"summary", describe(c.config)}, {"config", config_to_json(c.config)},
                          {"decode_tok_s", c.tok_s()}, {"memory_gib", c.memory_gib()}, {"loss_points", c.loss_points()},
                          {"joules_per_token", c.estimate.energy.known ? json(c.joules_per_token()) : json()}});
  j["relaxations"] = json::array();
  for (const auto& x : r.relaxations) {
    json rj = {{"constraint", x.constraint}, {"message", x.message}};
    if (x.plan) rj["plan"] = candidate_to_json(*x.plan);
    j["relaxations"].push_back(rj);
  }
  j["smaller_models"] = r.smaller_models;
  return j;
}

namespace {

Result<PlanDocument> read_plan_document(const json& j, const std::string& file) {
  if (!j.is_object() || j.value("schema", json()) != "trilemma.plan")
    return bad(file, "schema", "not a trilemma plan document (expected \"schema\": \"trilemma.plan\")");
  if (!j.contains("schema_version") || !j["schema_version"].is_number_integer())
    return bad(file, "schema_version", "missing");
  const int version = j["schema_version"].get<int>();
  if (version > k_plan_schema_version)
    return bad(file, "schema_version", "version " + std::to_string(version) + " is newer than this trilemma reads (" +
                                           std::to_string(k_plan_schema_version) + "); upgrade trilemma");
  if (version < 1) return bad(file, "schema_version", "must be >= 1");
  if (j.value("status", "") != "ok" || !j.contains("chosen"))
    return bad(file, "status", "the plan is not feasible: it has no chosen configuration");
  PlanDocument d;
  d.raw = j;
  if (!j.contains("model") || !j["model"].is_object() || !j["model"].contains("id"))
    return bad(file, "model.id", "missing");
  // Text that emitters write into scripts and config files: ids of the documented set, paths
  // without control characters (types/safe_text.hpp, docs/plan-schema.md).
  for (const auto& [object, key] : {std::pair{"model", "id"}, {"device", "id"}, {"model", "architecture"},
                                     {"model", "stored_format"}, {"device", "class"}}) {
    if (!j.contains(object) || !j[object].is_object() || !j[object].contains(key)) continue;
    const auto& v = j[object][key];
    const std::string field = std::string(object) + "." + key;
    if (!v.is_string()) return bad(file, field, "must be a string");
    const bool optional = std::string(key) == "architecture" || std::string(key) == "stored_format";
    if (optional && v.get<std::string>().empty()) continue;  // not known: nothing is written for it
    if (auto why = id_problem(v.get<std::string>())) return bad(file, field, *why);
  }
  if (j.contains("scenario")) {
    if (!j["scenario"].is_string()) return bad(file, "scenario", "must be a string");
    if (auto why = path_problem(j["scenario"].get<std::string>())) return bad(file, "scenario", *why);
  }
  // The shape emitters read (layers for -ngl, head size): counts, each within what any model has
  // (a plan of 1e20 layers once emitted without a word: reliability D25).
  if (j["model"].contains("shape")) {
    const auto& shape = j["model"]["shape"];
    if (!shape.is_object()) return bad(file, "model.shape", "must be an object");
    for (const auto& [key, value] : shape.items()) {
      const auto n = io::json_count(shape, key, 0, k_max_context, file, "model.shape");
      if (!n.ok()) return n.error();
    }
  }
  if (j["model"].contains("path") && !j["model"]["path"].is_null()) {
    if (!j["model"]["path"].is_string()) return bad(file, "model.path", "must be a string");
    const auto path = j["model"]["path"].get<std::string>();
    if (!path.empty())
      if (auto why = path_problem(path)) return bad(file, "model.path", *why);
  }
  const auto& m = j["model"];
  d.model = m.value("path", std::string()).empty() ? m["id"].get<std::string>() : m["path"].get<std::string>();
  if (!j.contains("device") || !j["device"].is_object() || !j["device"].contains("id")) return bad(file, "device.id", "missing");
  d.device = j["device"]["id"].get<std::string>();
  d.scenario = j.value("scenario", "");
  if (!j["chosen"].is_object() || !j["chosen"].contains("config")) return bad(file, "chosen.config", "missing");
  TRILEMMA_TRY(config, config_from_json(j["chosen"]["config"], file, "chosen.config"));
  if (!config.speculative.draft_model.empty())
    if (auto why = path_problem(config.speculative.draft_model)) return bad(file, "chosen.config.draft_model", *why);
  d.config = config;
  d.predicted = j["chosen"];
  return d;
}

}  // namespace

Result<PlanDocument> parse_plan_document(const std::string& text, const std::string& file) {
  // JSON (plan --json, plan --out) or the same tree as YAML (emit --format plan-yaml): a JSON
  // document starts with '{', and a YAML plan cannot (its root is a block mapping).
  const auto first = text.find_first_not_of(" \t\r\n");
  const bool json_text = first != std::string::npos && text[first] == '{';
  TRILEMMA_TRY(j, json_text ? io::parse_json(text, file) : io::parse_yaml_as_json(text, file));
  try {
    return read_plan_document(j, file);
  } catch (const json::exception& e) {  // a field of another type than the schema's
    return bad(file, "", std::string("not a plan document of this schema: ") + e.what());
  }
}

}  // namespace trilemma::solver
