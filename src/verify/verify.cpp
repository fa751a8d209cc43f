#include "verify/verify.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "calibration/fit.hpp"
#include "memory/tensor_layout.hpp"
#include "models/catalog.hpp"
#include "solver/estimate.hpp"

namespace trilemma::verify {
namespace {

DeploymentConfig engine_config(const RunPoint& p, std::uint32_t prompt_tokens) {
  DeploymentConfig c = p.config;
  c.prompt = prompt_tokens;
  // The engine sizes its cache to what it runs (a speculative round may overshoot by g).
  c.context = prompt_tokens + p.decode_tokens + (c.speculative.on() ? c.speculative.draft_len : 0);
  c.backend = Backend::cpu;
  // The reference engine, not the backend's runtime: its own prefill chunk (devices/derating.yaml).
  c.runtime = "trilemma";
  return c;
}

std::string weights_key(TensorType t) { return std::string(info(t).name); }

}  // namespace

bool PointReport::pass() const {
  return std::all_of(checks.begin(), checks.end(), [](const FigureCheck& c) { return c.pass; });
}

models::Model engine_model(const models::Model& base, TensorType engine_weights, std::optional<WeightFormat> recipe) {
  models::Model m = base;
  m.stored_tensors.clear();
  if (recipe) {  // the recipe's own types: what `run --weights q4_k_m` hands the engine
    for (const auto& t : memory::plan_tensors(base.shape, *recipe)) {
      m.stored_tensors.push_back({t.name, t.elems(), t.bytes(), std::string(info(t.type).name)});
    }
    m.stored_format = std::string(info(*recipe).name);
    return m;
  }
  // The planner's tensor list with a uniform recipe; the engine falls back to f32 per row.
  for (auto t : memory::plan_tensors(base.shape, WeightFormat::f32)) {
    models::StoredTensor st;
    st.name = t.name;
    st.elems = t.elems();
    const bool matrix = t.role != memory::TensorRole::norm && t.role != memory::TensorRole::bias &&
                        t.role != memory::TensorRole::router;
    TensorType type = matrix ? engine_weights : TensorType::f32;
    if (t.row % info(type).block_elems != 0) type = TensorType::f32;
    st.bytes = tensor_bytes(type, st.elems);
    st.type = std::string(info(type).name);
    m.stored_tensors.push_back(st);
  }
  m.stored_format = weights_key(engine_weights);
  return m;
}

namespace {
WeightFormat format_of(TensorType engine_weights) {
  for (const auto& row : weight_formats())
    if (row.engine_type == engine_weights) return row.format;
  return WeightFormat::f32;
}

}  // namespace

DeploymentConfig EnginePredictor::config(const RunPoint& p, std::uint32_t prompt_tokens, double measured_acceptance) {
  auto c = engine_config(p, prompt_tokens);
  // The weight format whose bulk type is the engine's (or the recipe it ran): its prepared bytes
  // are the stored ones.
  c.weights = p.recipe ? p.config.weights : format_of(p.engine_weights);
  c.speculative.measured_acceptance = measured_acceptance;
  return c;
}

Result<Estimate> EnginePredictor::operator()(const solver::PreparedDevice& pd, const RunPoint& p, std::uint32_t prompt_tokens,
                                             double measured_acceptance, bool with_basis) {
  return solver::estimate(prepared(p), pd, config(p, prompt_tokens, measured_acceptance), nullptr, with_basis);
}

double unmapped_embedding_bytes(const models::Model& engine, const models::Model* file) {
  if (file == nullptr || engine.shape.tied_embeddings) return 0;
  const auto find = [](const models::Model& m) {
    const auto it = std::find_if(m.stored_tensors.begin(), m.stored_tensors.end(),
                                 [](const models::StoredTensor& t) { return t.name == "token_embd.weight"; });
    return it == m.stored_tensors.end() ? nullptr : &*it;
  };
  const models::StoredTensor *ran = find(engine), *stored = find(*file);
  if (ran == nullptr || stored == nullptr || ran->type != stored->type || engine.shape.vocab == 0) return 0;
  const double table = double(ran->bytes), row = table / engine.shape.vocab;
  return table - std::min(table, std::max(row, 65536.0));
}

const solver::PreparedModel& EnginePredictor::prepared(const RunPoint& p) {
  const std::string weights = engine_weights_name(p);
  for (const auto& entry : m_prepared)
    if (entry->weights == weights) return entry->prepared;
  auto entry = std::make_unique<Entry>(
      Entry{weights, engine_model(m_model, p.engine_weights, p.recipe ? std::optional(p.config.weights) : std::nullopt), {}});
  entry->prepared = solver::PreparedModel::prepare(entry->model);
  if (p.model_file && p.model_file->extension() == ".gguf" && entry->prepared.stored) {
    if (!m_file) {  // the file's tensor types, read once (verify checked the file already)
      auto file = models::resolve_model(p.model_file->string());
      m_file = file.ok() ? std::make_unique<models::Model>(std::move(*file)) : std::make_unique<models::Model>();
    }
    entry->prepared.stored->total -= unmapped_embedding_bytes(entry->model, m_file.get());
  }
  m_prepared.push_back(std::move(entry));
  return m_prepared.back()->prepared;
}

calibration::Observation EnginePredictor::observation(const PointReport& r) {
  calibration::Observation ob;
  ob.model = &prepared(r.point);
  ob.config = config(r.point, r.measured.prompt_tokens, r.measured.acceptance);
  ob.decode_tok_s = r.measured.decode_tok_s.median;
  ob.ttft_ms = r.measured.ttft_ms.median;
  ob.peak_memory_bytes = r.measured.peak_rss_bytes;
  return ob;
}

Result<Estimate> predict(const models::Model& model, const devices::Device& host, const RunPoint& p,
                         std::uint32_t prompt_tokens, double measured_acceptance) {
  TRILEMMA_TRY(pd, solver::PreparedDevice::prepare(host));
  return EnginePredictor(model)(pd, p, prompt_tokens, measured_acceptance, true);
}

std::vector<FigureCheck> compare(const Estimate& e, const Measurement& m, const Tolerances& tol) {
  auto check = [](std::string name, double predicted, double measured, double tolerance) {
    FigureCheck c{std::move(name), predicted, measured, 0, tolerance, false};
    c.rel_error = measured != 0 ? (predicted - measured) / measured : (predicted == 0 ? 0 : INFINITY);
    c.pass = std::isfinite(c.rel_error) && std::abs(c.rel_error) <= tolerance;
    return c;
  };
  return {check("decode_tok_s", e.latency.decode_tok_s.mid, m.decode_tok_s.median, tol.decode),
          check("ttft_ms", e.latency.ttft_ms.mid, m.ttft_ms.median, tol.ttft),
          check("peak_memory_bytes", e.memory.total_bytes, m.peak_rss_bytes, tol.memory)};
}

std::vector<FigureSummary> summarize(const std::vector<PointReport>& reports) {
  std::vector<FigureSummary> out;
  std::vector<std::vector<double>> errors;
  for (const auto& r : reports)
    for (std::size_t i = 0; i < r.checks.size(); ++i) {
      const auto& c = r.checks[i];
      if (out.size() <= i) out.push_back({c.figure}), errors.emplace_back();
      const double e = std::isfinite(c.rel_error) ? std::abs(c.rel_error) : INFINITY;
      out[i].total += 1;
      out[i].within += c.pass ? 1 : 0;
      out[i].max_abs_error = std::max(out[i].max_abs_error, e);
      errors[i].push_back(e);
    }
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto& e = errors[i];
    std::sort(e.begin(), e.end());
    out[i].median_abs_error = e[e.size() / 2];  // the upper middle, as a SPREAD's median
  }
  return out;
}

devices::Calibration calibrate(const models::Model& model, const std::vector<PointReport>& reports, const devices::Device& host,
                               const std::string& fitted_on) {
  // The engine's model per weight format; observations point into it.
  EnginePredictor predictor(model);
  std::vector<calibration::Observation> obs;
  for (const auto& r : reports) obs.push_back(predictor.observation(r));
  calibration::FitOptions options;
  // Attention's rate shows only as a slope over the prompt (compute grows with it, attention
  // with its square): prompts at least 2x apart. From one length the search traded the two
  // freely; one Q4_K_M run left the host's prefill attention at 0.8% of its peak, and the
  // plans it fed predicted 8.5 s for a 512-token prompt the engine prefilled in 1.6 s.
  const auto [shortest, longest] = std::minmax_element(reports.begin(), reports.end(), [](const auto& a, const auto& b) {
    return a.point.prompt_tokens < b.point.prompt_tokens;
  });
  options.attention = !reports.empty() && longest->point.prompt_tokens >= 2 * shortest->point.prompt_tokens;
  // From the tables, not from an earlier calibration: a factor these reports cannot fit would
  // otherwise keep its old fitted value (the 0.8% above outlived the next calibration).
  devices::Device fresh = host;
  fresh.calibration.reset();
  return calibration::fit(fresh, obs, options, fitted_on);
}

}  // namespace trilemma::verify
