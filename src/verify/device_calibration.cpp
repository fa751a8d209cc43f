#include "verify/device_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "solver/estimate.hpp"

namespace trilemma::verify {
namespace {

double tolerance_of(const std::string& figure, const Tolerances& tol) {
  if (figure == "decode_tok_s") return tol.decode;
  if (figure == "peak_memory_bytes") return tol.memory;
  return tol.ttft;  // prefill tok/s and TTFT: the prompt's processing
}

Result<double> predicted(const solver::PreparedDevice& pd, const ResultPoint& p) {
  const auto& ob = p.observation;
  TRILEMMA_TRY(e, solver::estimate(*ob.model, pd, ob.config, ob.draft, false));
  if (p.figure == "decode_tok_s") return e.latency.decode_tok_s.mid;
  if (p.figure == "ttft_ms") return e.latency.ttft_ms.mid;
  if (p.figure == "prefill_tok_s") return e.latency.ttft_ms.mid > 0 ? ob.config.prompt / e.latency.ttft_ms.mid * 1000.0 : 0.0;
  return e.memory.total_bytes;
}

FigureCheck check(const std::string& figure, double predicted, double measured, double tolerance) {
  FigureCheck c{figure, predicted, measured, 0, tolerance, false};
  c.rel_error = measured != 0 ? (predicted - measured) / measured : INFINITY;
  c.pass = std::isfinite(c.rel_error) && std::abs(c.rel_error) <= tolerance;
  return c;
}

double median_abs(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

bool DeviceCalibration::pass() const {
  return std::all_of(checks.begin(), checks.end(), [](const PointCheck& c) { return c.after.pass; });
}

std::vector<std::string> DeviceCalibration::worsened() const {
  std::vector<std::string> out;
  auto pct = [](double e) {
    const long v = std::lround(100 * e);
    return (v > 0 ? "+" : "") + std::to_string(v) + "%";
  };
  for (const auto& c : checks) {
    const double before = std::abs(c.before.rel_error), after = std::abs(c.after.rel_error);
    if (c.after.pass || !std::isfinite(after) || !(after > before + 0.20)) continue;
    out.push_back(c.point->label + " " + c.point->figure + ": " + pct(c.before.rel_error) + " before the fit, " + pct(c.after.rel_error) +
                  " after");
  }
  return out;
}

calibration::FitOptions fit_options_for(const std::vector<ResultPoint>& points) {
  std::set<std::pair<Backend, WeightFormat>> decoded, prefilled;
  std::set<std::uint32_t> layers;
  std::set<TensorType> kv_formats;
  std::map<std::pair<Backend, WeightFormat>, std::set<std::uint32_t>> decode_threads;
  std::map<std::string, std::pair<std::uint32_t, std::uint32_t>> contexts;  // figure -> (min, max)
  for (const auto& p : points) {
    const auto& c = p.observation.config;
    if (p.observation.decode_tok_s) decoded.insert({c.backend, c.weights}), decode_threads[{c.backend, c.weights}].insert(c.threads);
    if (p.observation.ttft_ms) prefilled.insert({c.backend, c.weights});
    if (p.observation.decode_tok_s || p.observation.ttft_ms) layers.insert(p.observation.model->model->shape.layers);
    kv_formats.insert(c.kv_type);
    auto [it, fresh] = contexts.try_emplace(p.figure, c.context, c.context);
    it->second = {std::min(it->second.first, c.context), std::max(it->second.second, c.context)};
  }
  calibration::FitOptions o;
  // One format measured: its fractions stand for every format on the device (the device's
  // bandwidth is the unknown that matters most); several: each its own.
  o.bandwidth_per_format = decoded.size() >= 2;
  o.compute_per_format = prefilled.size() >= 2;
  // Attention's rate shows only as a slope over context: results at two depths at least 2x apart.
  o.attention = std::any_of(contexts.begin(), contexts.end(), [](const auto& c) {
    return c.first != "peak_memory_bytes" && c.second.second >= 2 * c.second.first;
  });
  // One KV format measured: its attention rate stands for every format (as bandwidth's does).
  o.attention_per_kv = kv_formats.size() >= 2;
  o.overhead_per_layer = layers.size() >= 2;
  // A decode speed that changes with the thread count is compute-bound: its own fraction.
  o.decode_compute = std::any_of(decode_threads.begin(), decode_threads.end(), [](const auto& d) { return d.second.size() >= 2; });
  return o;
}

Result<DeviceCalibration> calibrate_device(const devices::Device& device, const ResultFiles& results, const Tolerances& tol,
                                           const std::string& fitted_on) {
  const auto& points = results.points();
  if (points.empty())
    return make_error(ErrorKind::input, results.files().empty() ? "" : results.files().front(), "",
                      "no result could be matched to a catalog model and a costed configuration (see the unmatched list)");
  DeviceCalibration out;
  out.device = device;
  out.options = fit_options_for(points);
  out.options.decode_tolerance = tol.decode;
  out.options.ttft_tolerance = tol.ttft;
  TRILEMMA_TRY(before, solver::PreparedDevice::prepare(device));
  std::vector<calibration::Observation> obs;
  for (const auto& p : points) {
    TRILEMMA_TRY(value, predicted(before, p));
    PointCheck pc;
    pc.point = &p;
    pc.before = check(p.figure, value, p.measured, tolerance_of(p.figure, tol));
    out.checks.push_back(pc);
    obs.push_back(p.observation);
  }
  auto cal = calibration::fit(device, obs, out.options, fitted_on);
  cal.files = results.files();  // this fit's, not an earlier calibration's
  cal.points = static_cast<std::uint32_t>(points.size());
  out.device.calibration = cal;
  TRILEMMA_TRY(after, solver::PreparedDevice::prepare(out.device));
  std::vector<double> err_before, err_after;
  for (auto& pc : out.checks) {
    TRILEMMA_TRY(value, predicted(after, *pc.point));
    pc.after = check(pc.point->figure, value, pc.point->measured, pc.before.tolerance);
    err_before.push_back(std::abs(pc.before.rel_error));
    err_after.push_back(std::abs(pc.after.rel_error));
  }
  out.device.calibration->error_before = median_abs(err_before);
  out.device.calibration->error_after = median_abs(err_after);
  return out;
}

}  // namespace trilemma::verify
