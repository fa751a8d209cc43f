#include "verify/report_points.hpp"

#include "io/json_text.hpp"
#include "models/catalog.hpp"
#include "solver/plan_document.hpp"

namespace trilemma::verify {
namespace {

// What a measurement can be: a rate no device reaches (1e9 tok/s), a wait past a day, memory past
// a petabyte is a corrupt or hostile report, not a run.
constexpr double k_max_rate = 1e9, k_max_ms = 86400e3, k_max_bytes = 1e15;

// The recipe `name` names when the engine runs it tensor by tensor ("q4_k_m"); nullopt for a
// tensor type ("q4_0") or anything else.
std::optional<WeightFormat> engine_recipe_named(const std::string& name) {
  const auto f = weight_format_from_name(name);
  return f && info(*f).engine_recipe && !info(*f).engine_type ? f : std::nullopt;
}

using nlohmann::json;

// A measured figure's spread; each value finite and within [0, max] (a 1.7e308 tok/s once drew a
// chart with NaN coordinates: reliability D18).
Result<Spread> spread_from(const json& j, double max, const std::string& file, const std::string& where) {
  Spread out{j.value("median", 0.0), j.value("min", 0.0), j.value("max", 0.0),
             j.value("runs", std::vector<double>{})};  // reports before the field have none
  std::vector<double> all = out.runs;
  all.insert(all.end(), {out.median, out.min, out.max});
  for (double v : all)
    if (!(v >= 0 && v <= max))
      return make_error(ErrorKind::input, file, where, "a measurement of " + json(v).dump() + " outside 0.." + json(max).dump());
  return out;
}

Error bad(const std::string& file, const std::string& where, const std::string& message) {
  return make_error(ErrorKind::input, file, where, message);
}

Result<TensorType> tensor_type_field(const json& j, const char* key, const std::string& file, const std::string& where) {
  if (!j.contains(key) || !j[key].is_string()) return bad(file, where + "." + key, "missing (a tensor type name)");
  const auto t = tensor_type_from_name(j[key].get<std::string>());
  if (!t) return bad(file, where + "." + key, "unknown tensor type '" + j[key].get<std::string>() + "'");
  return *t;
}

// The catalog id of a report's model: a model file's path is not one.
Result<std::string> catalog_id(const std::string& model, const std::string& model_id, const std::string& file,
                               const std::string& where) {
  if (!model_id.empty()) return model_id;
  if (model.empty()) return bad(file, where, "no model recorded: name it with --model");
  auto m = models::resolve_model(model);
  if (!m.ok() || !m->path.empty()) return bad(file, where, "'" + model + "' is not a catalog model: name it with --model");
  return m->id;
}

Result<std::vector<ReportPoint>> verify_points(const json& doc, const std::string& file, const std::string& model_id) {
  if (!doc.contains("points") || !doc["points"].is_array()) return bad(file, "points", "missing (an array of points)");
  TRILEMMA_TRY(model, catalog_id(doc.value("model", ""), model_id, file, "model"));
  std::vector<ReportPoint> out;
  for (std::size_t i = 0; i < doc["points"].size(); ++i) {
    const json& entry = doc["points"][i];
    const std::string where = "points[" + std::to_string(i) + "]";
    if (!entry.is_object()) return bad(file, where, "expected an object");
    ReportPoint rp;
    rp.model = model;
    rp.where = file + ": " + where;
    auto& p = rp.report.point;
    if (!entry.contains("config")) return bad(file, where + ".config", "missing");
    TRILEMMA_TRY(config, solver::config_from_json(entry["config"], file, where + ".config"));
    p.config = config;
    p.model_id = model;
    // "q4_0" (one type throughout) or a recipe the engine runs tensor by tensor ("q4_k_m").
    const auto recipe = entry.contains("engine_weights") && entry["engine_weights"].is_string()
                            ? engine_recipe_named(entry["engine_weights"].get<std::string>())
                            : std::nullopt;
    if (recipe) {
      p.recipe = true;
      p.engine_weights = info(*recipe).bulk;
      if (p.config.weights != *recipe) return bad(file, where + ".engine_weights", "a recipe other than the config's weights");
    } else {
      TRILEMMA_TRY(weights, tensor_type_field(entry, "engine_weights", file, where));
      p.engine_weights = weights;
    }
    if (entry.contains("draft_engine_weights") && !entry["draft_engine_weights"].is_null()) {
      TRILEMMA_TRY(draft, tensor_type_field(entry, "draft_engine_weights", file, where));
      p.draft_engine_weights = draft;
    }
    TRILEMMA_TRY(m, measurement_from_json(entry, file, where));
    p.prompt_tokens = m.prompt_tokens;
    p.decode_tokens = m.decode_tokens;
    rp.report.measured = m;
    out.push_back(std::move(rp));
  }
  return out;
}

Result<std::vector<ReportPoint>> run_point(const json& doc, const std::string& file, const std::string& model_id) {
  TRILEMMA_TRY(model, catalog_id(doc.value("model", ""), model_id, file, "model"));
  const std::string draft = doc.value("draft", "");
  if (!draft.empty() && draft != "none")
    return bad(file, "draft", "a speculative run: calibrate from `verify --json`, which records the draft's configuration");
  ReportPoint rp;
  rp.model = model;
  rp.where = file;
  auto& p = rp.report.point;
  p.model_id = model;
  const json kv = doc.value("kv_config", json());
  if (!kv.is_object()) return bad(file, "kv_config", "missing (reports of trilemma 0.4 and later have it)");
  TRILEMMA_TRY(kv_type, tensor_type_field(kv, "format", file, "kv_config"));
  const std::string strategy_name = kv.value("strategy", "");
  const auto strategy = kv_strategy_from_name(strategy_name);
  if (!strategy)
    return bad(file, "kv_config.strategy", "unknown KV strategy '" + strategy_name + "' (expected one of: " + kv_strategy_names() + ")");
  p.config.kv_type = kv_type;
  p.config.kv_strategy = *strategy;
  // The strategy's parameters under their plan-document keys (a run records the window and
  // sinks so; an offload run its resident bytes, not the share).
  for (const KvStrategyParam& param : info(*strategy).params) {
    const auto value = kv.find(param.key);
    if (value == kv.end() || !value->is_number())
      return bad(file, "kv_config." + std::string(param.key),
                 "not in the run's report (" + strategy_name + "): calibrate from `verify --json`, which records the plan's configuration");
    if (param.whole) {
      TRILEMMA_TRY(n, io::json_count(kv, std::string(param.key), param.min_whole, k_max_context, file, "kv_config"));
      param.set(p.config, n);
    } else {
      TRILEMMA_TRY(x, io::json_number(kv, std::string(param.key), 0, 1, file, "kv_config"));
      param.set(p.config, x);
    }
  }
  if (!doc.contains("weights") || !doc["weights"].is_string()) return bad(file, "weights", "missing");
  const std::string weights = doc["weights"].get<std::string>();
  // A recipe run tensor by tensor ("q4_k_m"), or the type of most matrices ("q4_0+mixed").
  if (const auto recipe = engine_recipe_named(weights)) {
    p.recipe = true;
    p.engine_weights = info(*recipe).bulk;
    p.config.weights = *recipe;
  } else {
    const auto t = tensor_type_from_name(weights.substr(0, weights.find('+')));
    if (!t) return bad(file, "weights", "unknown engine weights '" + weights + "'");
    p.engine_weights = *t;
  }
  TRILEMMA_TRY(threads, io::json_count(doc, "threads", 1, k_max_threads, file, ""));
  TRILEMMA_TRY(ttft, io::json_number(doc, "ttft_ms", 0, k_max_ms, file, ""));
  TRILEMMA_TRY(prefill, io::json_number(doc, "prefill_tok_s", 0, k_max_rate, file, ""));
  TRILEMMA_TRY(decode, io::json_number(doc, "decode_tok_s", 0, k_max_rate, file, ""));
  TRILEMMA_TRY(peak, io::json_number(doc, "peak_rss_bytes", 0, k_max_bytes, file, ""));
  try {
    p.config.threads = threads;
    Measurement& m = rp.report.measured;
    m.prompt_tokens = static_cast<std::uint32_t>(doc.at("prompt_tokens").size());
    m.decode_tokens = static_cast<std::uint32_t>(doc.at("tokens").size());
    m.ttft_ms = {ttft, ttft, ttft, {ttft}};
    m.prefill_tok_s = {prefill, prefill, prefill, {prefill}};
    m.decode_tok_s = {decode, decode, decode, {decode}};
    m.peak_rss_bytes = peak;
    m.weight_bytes = doc.value("weight_bytes", 0.0);
    m.kv_bytes = doc.value("kv_allocated_bytes", 0.0);
    m.synthetic = doc.value("synthetic", true);
    m.kernels = doc.value("kernels", "");
    m.weights = weights;
    m.runs = 1;
    if (m.prompt_tokens == 0 || !(ttft > 0) || !(decode > 0))
      return bad(file, "ttft_ms", "a run without a prompt, a first token and generated tokens measures nothing");
    p.prompt_tokens = m.prompt_tokens;
    p.decode_tokens = m.decode_tokens;
  } catch (const json::exception& e) {
    return bad(file, "", std::string("malformed run report: ") + e.what());
  }
  return std::vector<ReportPoint>{std::move(rp)};
}

}  // namespace

Result<Measurement> measurement_from_json(const json& entry, const std::string& file, const std::string& where) {
  try {
    const auto& j = entry.at("measured");
    Measurement m;
    const auto decode_s = spread_from(j.at("decode_tok_s"), k_max_rate, file, where + ".measured.decode_tok_s");
    const auto ttft_s = spread_from(j.at("ttft_ms"), k_max_ms, file, where + ".measured.ttft_ms");
    const auto prefill_s = spread_from(j.value("prefill_tok_s", json::object()), k_max_rate, file, where + ".measured.prefill_tok_s");
    for (const auto* r : {&decode_s, &ttft_s, &prefill_s})
      if (!r->ok()) return r->error();
    m.decode_tok_s = *decode_s, m.ttft_ms = *ttft_s, m.prefill_tok_s = *prefill_s;
    const auto peak = io::json_number(j, "peak_rss_bytes", 0, k_max_bytes, file, where + ".measured");
    if (!peak.ok()) return peak.error();
    m.peak_rss_bytes = *peak;
    m.weight_bytes = j.value("weight_bytes", 0.0);
    m.kv_bytes = j.value("kv_bytes", 0.0);
    m.acceptance = j.value("acceptance", 0.0);
    if (!(m.weight_bytes >= 0 && m.weight_bytes <= k_max_bytes && m.kv_bytes >= 0 && m.kv_bytes <= k_max_bytes &&
          m.acceptance >= 0 && m.acceptance <= 1))
      return bad(file, where + ".measured", "weight_bytes, kv_bytes or acceptance out of range");
    m.weights = j.value("weights", "");
    const auto prompt = io::json_count(entry, "prompt_tokens", 0, k_max_context, file, where);
    if (!prompt.ok()) return prompt.error();
    const auto decode = io::json_count(entry, "decode_tokens", 0, k_max_context, file, where);
    if (!decode.ok()) return decode.error();
    m.prompt_tokens = *prompt;
    m.decode_tokens = *decode;
    m.synthetic = entry.value("synthetic", true);
    m.kernels = entry.value("kernels", "");
    m.runs = entry.value("runs", 0);
    if (const auto a = entry.value("accuracy", json::object()); a.is_object()) {
      if (a.contains("kl_measured") && a["kl_measured"].is_number()) m.kl_mean = a["kl_measured"].get<double>();
      if (a.contains("top1_measured") && a["top1_measured"].is_number()) m.top1 = a["top1_measured"].get<double>();
    }
    return m;
  } catch (const json::exception& e) {
    return bad(file, where + ".measured", std::string("malformed measurement: ") + e.what());
  }
}

Result<std::vector<ReportPoint>> report_points(const json& doc, const std::string& file, const std::string& model_id) {
  if (!doc.is_object()) return bad(file, "", "expected a trilemma report object");
  // `value(key, default)` throws when the key holds another type ("draft": {...} where a name
  // belongs): any field of the wrong type is a malformed report, not a crash.
  try {
    const std::string schema = doc.value("schema", "");
    if (doc.value("schema_version", 0) != 1) return bad(file, "schema_version", "unsupported report version");
    if (schema == "trilemma.verify") return verify_points(doc, file, model_id);
    if (schema == "trilemma.run") return run_point(doc, file, model_id);
    return bad(file, "schema", "'" + schema + "' is not a measurement report (trilemma.verify or trilemma.run)");
  } catch (const json::exception& e) {
    return bad(file, "", std::string("malformed report (a field of the wrong type): ") + e.what());
  }
}

}  // namespace trilemma::verify
