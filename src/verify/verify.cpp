#include "verify/verify.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "memory/tensor_layout.hpp"
#include "roofline/derating.hpp"
#include "solver/estimate.hpp"

namespace trilemma::verify {
namespace {

constexpr double k_mib = 1048576.0;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

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

Estimate predict(const models::Model& model, const devices::Device& host, const RunPoint& p, std::uint32_t prompt_tokens,
                 double measured_acceptance) {
  // The weight format whose bulk type is the engine's: its prepared bytes are the stored ones.
  WeightFormat format = WeightFormat::f32;
  for (const auto& row : weight_formats())
    if (row.engine_type == p.engine_weights) {
      format = row.format;
      break;
    }
  const auto m = engine_model(model, p.engine_weights);
  const auto pm = solver::PreparedModel::prepare(m);
  const auto pd = solver::PreparedDevice::prepare(host);
  auto c = engine_config(p, prompt_tokens);
  c.weights = format;
  c.speculative.measured_acceptance = measured_acceptance;
  return solver::estimate(pm, pd, c);
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

devices::Calibration calibrate(const std::vector<PointReport>& reports, const devices::Device& host,
                               const std::string& fitted_on) {
  // Per weight format: the bandwidth fraction that makes bytes per token / (peak x f) equal
  // the measured step time (fixed overhead is folded in: it is not separable from two
  // contexts), and the compute fraction that makes prefill FLOPs / (peak x f) equal the TTFT.
  std::map<std::string, std::vector<double>> bandwidth, compute;
  for (const auto& r : reports) {
    const auto& l = r.predicted.latency;
    const std::string key = weights_key(r.point.engine_weights);
    if (r.measured.decode_tok_s.median > 0)
      bandwidth[key].push_back(l.bytes_per_token * r.measured.decode_tok_s.median / (host.peak_bandwidth_gbps * 1e9));
    if (r.measured.ttft_ms.median > 0) {
      const double achieved_gflops = l.prefill_flops / (r.measured.ttft_ms.median / 1000.0) / 1e9;
      // The same peak the estimate divided by, so the fraction reproduces the measurement.
      const double fraction_used = r.predicted.latency.effective_compute_gflops;
      const auto derate = roofline::derating_for(host, "cpu", key);
      const double peak_gflops = fraction_used / derate.compute_fraction.mid;
      compute[key].push_back(achieved_gflops / peak_gflops);
    }
  }
  // Memory: measured - weights - KV - draft = runtime + f x modelled scratch, fitted by least
  // squares over the points (the modelled scratch is llama.cpp's compute buffer; an engine
  // that keeps fewer logits needs a smaller f).
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& r : reports) {
    const auto& mem = r.predicted.memory;
    const auto derate = roofline::derating_for(host, "cpu", weights_key(r.point.engine_weights));
    const double x = mem.scratch_bytes / derate.scratch_fraction;  // the unscaled model
    const double y = r.measured.peak_rss_bytes - (mem.weights_bytes + mem.kv_bytes + mem.draft_bytes);
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  double scratch_fraction = 1, runtime_bytes = n > 0 ? sy / n : 0;
  if (n >= 2 && n * sxx - sx * sx > 0) {
    scratch_fraction = std::max(0.0, (n * sxy - sx * sy) / (n * sxx - sx * sx));
    runtime_bytes = (sy - scratch_fraction * sx) / n;
  }
  devices::Calibration c;
  c.fitted_on = fitted_on;
  for (const auto& [k, v] : bandwidth) c.bandwidth_fraction.emplace_back(k, median(v));
  for (const auto& [k, v] : compute) c.compute_fraction_by_format.emplace_back(k, median(v));
  c.overhead_ms = 0.0;
  if (n > 0) {
    c.runtime_mib = std::max(0.0, runtime_bytes) / k_mib;
    c.scratch_fraction = scratch_fraction;
  }
  return c;
}

}  // namespace trilemma::verify
