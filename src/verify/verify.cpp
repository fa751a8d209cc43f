#include "verify/verify.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "memory/tensor_layout.hpp"
#include "roofline/derating.hpp"
#include "solver/estimate.hpp"

namespace trilemma::verify {
namespace {

constexpr double k_mib = 1048576.0;

DeploymentConfig engine_config(const RunPoint& p, std::uint32_t prompt_tokens) {
  DeploymentConfig c = p.config;
  c.prompt = prompt_tokens;
  // The engine sizes its cache to what it runs (a speculative round may overshoot by g).
  c.context = prompt_tokens + p.decode_tokens + (c.speculative.on() ? c.speculative.draft_len : 0);
  c.backend = "cpu";
  return c;
}

std::string weights_key(TensorType t) { return std::string(info(t).name); }

}  // namespace

bool PointReport::pass() const {
  return std::all_of(checks.begin(), checks.end(), [](const FigureCheck& c) { return c.pass; });
}

models::Model engine_model(const models::Model& base, TensorType engine_weights) {
  models::Model m = base;
  m.stored_tensors.clear();
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

// The engine's model for each weight format it runs, prepared once (the tensor walk is the
// expensive part of an estimate; calibration evaluates thousands).
class Predictor {
 public:
  explicit Predictor(const models::Model& model) : m_model(model) {}

  Estimate operator()(const solver::PreparedDevice& pd, const RunPoint& p, std::uint32_t prompt_tokens,
                      double measured_acceptance, bool with_basis) {
    auto c = engine_config(p, prompt_tokens);
    // The weight format whose bulk type is the engine's: its prepared bytes are the stored ones.
    c.weights = format_of(p.engine_weights);
    c.speculative.measured_acceptance = measured_acceptance;
    return solver::estimate(prepared(p.engine_weights), pd, c, nullptr, with_basis);
  }

 private:
  const solver::PreparedModel& prepared(TensorType weights) {
    for (const auto& entry : m_prepared)
      if (entry->weights == weights) return entry->prepared;
    auto entry = std::make_unique<Entry>(Entry{weights, engine_model(m_model, weights), {}});
    entry->prepared = solver::PreparedModel::prepare(entry->model);
    m_prepared.push_back(std::move(entry));
    return m_prepared.back()->prepared;
  }
  struct Entry {
    TensorType weights;
    models::Model model;
    solver::PreparedModel prepared;  // points into `model`: entries never move
  };
  const models::Model& m_model;
  std::vector<std::unique_ptr<Entry>> m_prepared;
};

}  // namespace

Estimate predict(const models::Model& model, const devices::Device& host, const RunPoint& p, std::uint32_t prompt_tokens,
                 double measured_acceptance) {
  return Predictor(model)(solver::PreparedDevice::prepare(host), p, prompt_tokens, measured_acceptance, true);
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

namespace {

// One fitted latency factor and where it goes in a Calibration.
struct Factor {
  enum class Kind { bandwidth, compute, attention, prefill_attention, overhead, speculative_round } kind;
  std::string key;  // weight format or KV format name; empty for the overhead
  double value = 0;
};

devices::Calibration with_factors(devices::Calibration c, const std::vector<Factor>& factors) {
  c.bandwidth_fraction.clear(), c.compute_fraction_by_format.clear(), c.attention_fraction.clear();
  c.prefill_attention_fraction.clear();
  for (const auto& f : factors) switch (f.kind) {
      case Factor::Kind::bandwidth: c.bandwidth_fraction.emplace_back(f.key, f.value); break;
      case Factor::Kind::compute: c.compute_fraction_by_format.emplace_back(f.key, f.value); break;
      case Factor::Kind::attention: c.attention_fraction.emplace_back(f.key, f.value); break;
      case Factor::Kind::prefill_attention: c.prefill_attention_fraction.emplace_back(f.key, f.value); break;
      case Factor::Kind::overhead: c.overhead_ms = f.value; break;
      case Factor::Kind::speculative_round: c.speculative_round_ms = f.value; break;
    }
  return c;
}

// The factors a set of points can inform, started from the host's current values: bandwidth
// and compute per weight format (targets and drafts), attention per KV format in each phase,
// the overhead per pass, and, when some points speculate, a round's cost beyond its passes.
std::vector<Factor> initial_factors(const std::vector<PointReport>& reports, const devices::Device& host) {
  std::vector<Factor> out;
  auto add = [&](Factor::Kind kind, const std::string& key, double value) {
    for (const auto& f : out)
      if (f.kind == kind && f.key == key) return;
    out.push_back({kind, key, std::max(value, 1e-3)});
  };
  const auto per_pass = roofline::derating_for(host, "cpu", "f32");
  for (const auto& r : reports) {
    const auto& c = r.point.config;
    std::vector<std::string> formats = {std::string(info(c.weights).name)};
    if (c.speculative.has_draft_weights())
      formats.emplace_back(info(c.speculative.draft_weights).name);
    for (const auto& f : formats) {
      const auto d = roofline::derating_for(host, "cpu", f);
      add(Factor::Kind::bandwidth, f, d.bandwidth_fraction.mid);
      add(Factor::Kind::compute, f, d.compute_fraction.mid);
    }
    const std::string kv(info(c.kv_type).name);
    using roofline::AttentionPhase;
    add(Factor::Kind::attention, kv, roofline::attention_fraction_for(host, "cpu", kv, AttentionPhase::decode).mid);
    add(Factor::Kind::prefill_attention, kv, roofline::attention_fraction_for(host, "cpu", kv, AttentionPhase::prefill).mid);
    // Search in log space cannot leave zero: an unfitted round starts at one pass's overhead.
    if (c.speculative.on())
      add(Factor::Kind::speculative_round, "",
          per_pass.speculative_round_ms > 0 ? per_pass.speculative_round_ms : per_pass.overhead_ms);
  }
  add(Factor::Kind::overhead, "", per_pass.overhead_ms);
  return out;
}

// A fraction is relative to the host profile's figures, and a probe taken while a neighbour
// loaded this shared machine can be a third of what the cores reach later: the bound only
// keeps the search finite.
constexpr double k_max_fraction = 16.0;
constexpr double k_max_ms = 1e4;

double upper_bound(Factor::Kind kind) {
  return kind == Factor::Kind::overhead || kind == Factor::Kind::speculative_round ? k_max_ms : k_max_fraction;
}

double log_error(double predicted, double measured) {
  if (!(predicted > 0) || !(measured > 0)) return 0;  // a failed measurement informs nothing
  return std::log(predicted / measured);
}

}  // namespace

devices::Calibration calibrate(const models::Model& model, const std::vector<PointReport>& reports, const devices::Device& host,
                               const std::string& fitted_on) {
  // Memory: measured - weights - KV - draft = runtime + f x modelled scratch, fitted by least
  // squares over the points (the modelled scratch is llama.cpp's compute buffer; an engine
  // that keeps fewer logits needs a smaller f).
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& r : reports) {
    const auto& mem = r.predicted.memory;
    const auto derate = roofline::derating_for(host, "cpu", std::string(info(r.point.config.weights).name));
    const double x = mem.scratch_bytes / derate.scratch_fraction;  // the unscaled model
    const double y = r.measured.peak_rss_bytes - (mem.weights_bytes + mem.kv_bytes + mem.draft_bytes);
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  double scratch_fraction = 1, runtime_bytes = n > 0 ? sy / n : 0;
  if (n >= 2 && n * sxx - sx * sx > 0) {
    scratch_fraction = std::max(0.0, (n * sxy - sx * sy) / (n * sxx - sx * sx));
    runtime_bytes = (sy - scratch_fraction * sx) / n;
  }
  devices::Calibration base;
  base.fitted_on = fitted_on;
  if (n > 0) {
    base.runtime_mib = std::max(0.0, runtime_bytes) / k_mib;
    base.scratch_fraction = scratch_fraction;
  }

  // Latency: the factors that minimise the squared log error of decode tok/s and TTFT over all
  // points, through the very predictor that plans use (so a fitted host reproduces its own
  // measurements as far as the model's form allows). Bandwidth and compute per weight format,
  // attention per KV format (decode and prefill), one fixed overhead per forward pass and one
  // per speculative round are separable because the grid varies weights, KV formats, contexts
  // and speculation independently. Coordinate search in log
  // space: each factor in turn moves by a factor e^step up or down when that lowers the error.
  std::vector<Factor> factors = initial_factors(reports, host);
  devices::Device trial = host;
  Predictor predictor(model);
  auto error = [&](const std::vector<Factor>& f) {
    trial.calibration = with_factors(base, f);
    const auto pd = solver::PreparedDevice::prepare(trial);
    double sum = 0;
    for (const auto& r : reports) {
      const auto e = predictor(pd, r.point, r.measured.prompt_tokens, r.measured.acceptance, false);
      const double d = log_error(e.latency.decode_tok_s.mid, r.measured.decode_tok_s.median);
      const double t = log_error(e.latency.ttft_ms.mid, r.measured.ttft_ms.median);
      sum += d * d + t * t;
    }
    return sum;
  };
  double best = error(factors);
  // A sweep that gains less than 0.1% also halves the step: factors that trade against each
  // other (a format's bandwidth and the overhead) would otherwise zig-zag in tiny gains.
  for (double step = std::log(2.0); step > 1e-3;) {
    const double at_start = best;
    for (auto& f : factors)
      for (const double dir : {1.0, -1.0}) {
        const double before = f.value;
        f.value = std::clamp(before * std::exp(dir * step), 1e-5, upper_bound(f.kind));
        const double e = error(factors);
        if (e < best) {
          best = e;
          break;
        }
        f.value = before;
      }
    if (best > at_start * (1 - 1e-3)) step /= 2;
  }
  return with_factors(base, factors);
}

}  // namespace trilemma::verify
