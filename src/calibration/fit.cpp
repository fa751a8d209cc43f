#include "calibration/fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "calibration/search.hpp"
#include "solver/estimate.hpp"

namespace trilemma::calibration {
namespace {

constexpr double k_mib = 1048576.0;
constexpr double k_max_ms = 1e4;

// One fitted quantity and where it goes in a backend's calibration.
struct Factor {
  enum class Kind { bandwidth, compute, decode_compute, attention, prefill_attention, overhead, overhead_per_layer, speculative_round } kind;
  std::string backend;
  std::string key;  // weight format, compute path or KV format name; "all"; empty for the costs
};

std::vector<std::pair<std::string, double>>& table_of(devices::BackendCalibration& b, Factor::Kind kind) {
  switch (kind) {
    case Factor::Kind::bandwidth: return b.bandwidth_fraction;
    case Factor::Kind::compute: return b.compute_fraction;
    case Factor::Kind::decode_compute: return b.decode_compute_fraction;
    case Factor::Kind::attention: return b.attention_fraction;
    default: return b.prefill_attention_fraction;
  }
}

void apply(devices::Calibration& c, const std::vector<Factor>& factors, const std::vector<double>& values) {
  for (const auto& f : factors) {
    auto& b = c.at(f.backend);
    if (f.kind != Factor::Kind::overhead && f.kind != Factor::Kind::overhead_per_layer &&
        f.kind != Factor::Kind::speculative_round)
      table_of(b, f.kind).clear();
  }
  for (std::size_t i = 0; i < factors.size(); ++i) {
    const auto& f = factors[i];
    auto& b = c.at(f.backend);
    if (f.kind == Factor::Kind::overhead) b.overhead_ms = values[i];
    else if (f.kind == Factor::Kind::overhead_per_layer) b.overhead_us_per_layer = values[i];
    else if (f.kind == Factor::Kind::speculative_round) b.speculative_round_ms = values[i];
    else table_of(b, f.kind).emplace_back(f.key, values[i]);
  }
}

Result<solver::PreparedDevice> prepare(const devices::Device& d, const roofline::DeratingTables* tables) {
  return tables ? solver::PreparedDevice::prepare(d, *tables, false) : solver::PreparedDevice::prepare(d);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

devices::Calibration fit(const devices::Device& device, const std::vector<Observation>& obs, const FitOptions& o,
                         const std::string& fitted_on) {
  devices::Calibration base = device.calibration.value_or(devices::Calibration{});
  base.fitted_on = fitted_on;
  auto prepared = prepare(device, o.tables);
  if (!prepared.ok() || obs.empty()) return base;

  // Start values: what the device reaches now for each factor the observations inform.
  std::vector<Factor> factors;
  std::vector<Parameter> params;
  auto add = [&](Factor f, double start, double upper) {
    for (const auto& g : factors)
      if (g.kind == f.kind && g.backend == f.backend && g.key == f.key) return;
    factors.push_back(std::move(f));
    params.push_back({std::max(start, 1e-3), 1e-5, upper});
  };
  using roofline::AttentionPhase;
  // A factor is fitted only where the measurements can tell it apart: compute needs a
  // prefill, a fixed per-pass cost needs decode speeds of two or more different byte counts
  // (with one, bandwidth and overhead trade freely).
  std::map<Backend, std::set<std::pair<const solver::PreparedModel*, WeightFormat>>> decoded;
  for (const auto& ob : obs)
    if (ob.decode_tok_s) decoded[ob.config.backend].insert({ob.model, ob.config.weights});
  for (const auto& ob : obs) {
    const auto& c = ob.config;
    const std::string backend(info(c.backend).name);
    const bool overhead_informed = decoded[c.backend].size() >= 2;
    std::vector<WeightFormat> formats = {c.weights};
    if (c.speculative.has_draft_weights()) formats.push_back(c.speculative.draft_weights);
    for (auto w : formats) {
      const auto* e = prepared->efficiency(c.backend, w);
      if (!e) continue;
      const bool timed = ob.decode_tok_s || ob.ttft_ms;
      if (!timed) continue;
      add({Factor::Kind::bandwidth, backend, o.bandwidth_per_format ? std::string(info(w).name) : "all"},
          e->bandwidth_fraction.mid, o.max_fraction);
      if (ob.ttft_ms)
        add({Factor::Kind::compute, backend, o.compute_per_format ? std::string(info(w).name) : std::string(info(e->path).name)},
            e->compute_fraction.mid, o.max_fraction);
      if (ob.decode_tok_s && o.decode_compute)
        add({Factor::Kind::decode_compute, backend,
             o.bandwidth_per_format ? std::string(info(w).name) : std::string(info(e->decode_path).name)},
            e->decode_compute_fraction.mid, o.max_fraction);
      // A calibrated overhead replaces the tables' fixed costs. Per pass (one model, the host's
      // engine runs), or per layer (models of several depths, as published results are).
      const std::uint32_t layers = ob.model->model->shape.layers;
      if (o.overhead && overhead_informed && o.overhead_per_layer)
        add({Factor::Kind::overhead_per_layer, backend, ""}, std::max(e->pass_overhead_ms(layers) * 1000.0 / layers, 1.0), 1e6);
      else if (o.overhead && overhead_informed)
        add({Factor::Kind::overhead, backend, ""}, std::max(e->pass_overhead_ms(layers), 0.01), k_max_ms);
      if (c.speculative.on())
        add({Factor::Kind::speculative_round, backend, ""}, e->speculative_round_ms > 0 ? e->speculative_round_ms : std::max(e->overhead_ms, 0.01), k_max_ms);
    }
    if (o.attention && (ob.decode_tok_s || ob.ttft_ms)) {
      const std::string kv = o.attention_per_kv ? std::string(info(c.kv_type).name) : "all";
      add({Factor::Kind::attention, backend, kv}, prepared->attention_fraction(c.backend, c.kv_type, AttentionPhase::decode).mid, o.max_fraction);
      add({Factor::Kind::prefill_attention, backend, kv}, prepared->attention_fraction(c.backend, c.kv_type, AttentionPhase::prefill).mid, o.max_fraction);
    }
  }

  // Memory first (it does not depend on the latency factors): per backend, the runtime and the
  // scale of the modelled scratch by linear least squares.
  if (o.memory) {
    std::map<std::string, std::array<double, 5>> sums;  // n, sx, sy, sxx, sxy
    for (const auto& ob : obs) {
      if (!ob.peak_memory_bytes) continue;
      const auto e = solver::estimate(*ob.model, *prepared, ob.config, ob.draft, false);
      const auto* eff = prepared->efficiency(ob.config.backend, ob.config.weights);
      if (!e.ok() || !eff) continue;
      const auto& m = e->memory;
      const double x = m.scratch_bytes / eff->scratch_fraction;
      const double y = *ob.peak_memory_bytes - (m.weights_bytes + m.kv_bytes + m.draft_bytes);
      auto& s = sums[std::string(info(ob.config.backend).name)];
      s[0] += 1, s[1] += x, s[2] += y, s[3] += x * x, s[4] += x * y;
    }
    for (const auto& [backend, s] : sums) {
      const auto [n, sx, sy, sxx, sxy] = s;
      double scratch = 1, runtime = sy / n - sx / n;
      // The slope is the scratch's scale; one outside [0, 4] of llama.cpp's compute buffer says
      // the points do not separate it from the runtime, which then takes it all.
      if (n >= 2 && n * sxx - sx * sx > 1e-9 * n * sxx) {
        const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
        if (slope >= 0 && slope <= 4) {
          scratch = slope;
          runtime = (sy - scratch * sx) / n;
        }
      }
      auto& b = base.at(backend);
      b.runtime_mib = std::max(0.0, runtime) / k_mib;
      b.scratch_fraction = scratch;
    }
  }
  if (factors.empty()) return base;

  devices::Device trial = device;
  auto error = [&](const std::vector<double>& values) {
    devices::Calibration c = base;
    apply(c, factors, values);
    trial.calibration = c;
    const auto pd = prepare(trial, o.tables);
    if (!pd.ok()) return double(INFINITY);
    double sum = 0;
    for (const auto& ob : obs) {
      const auto e = solver::estimate(*ob.model, *pd, ob.config, ob.draft, false);
      if (!e.ok()) continue;
      auto add = [&](double predicted, double measured, double tolerance) {
        sum += ob.weight * std::pow(log_error(predicted, measured), 2);
        // 5% inside the tolerance, so a fitted point does not sit on its edge.
        if (tolerance > 0) sum += 100 * std::pow(std::max(0.0, std::abs(predicted / measured - 1) - 0.95 * tolerance), 2);
      };
      if (ob.decode_tok_s) add(e->latency.decode_tok_s.mid, *ob.decode_tok_s, o.decode_tolerance);
      if (ob.ttft_ms) add(e->latency.ttft_ms.mid, *ob.ttft_ms, o.ttft_tolerance);
    }
    return sum;
  };
  std::vector<double> starts;
  for (const auto& p : params) starts.push_back(p.value);
  double best = coordinate_search(params, error);
  std::vector<double> values;
  for (const auto& p : params) values.push_back(p.value);
  // A factor the measurements do not inform (a decode that one compute bound explains, whatever
  // the bandwidth above it) ends wherever the search left it, up to its bound. It keeps the
  // value it started from, the tables', where that fits as well: an unidentified 16x-peak
  // bandwidth would otherwise reach every format the calibration passes its ratios on to.
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] == starts[i]) continue;
    auto trial_values = values;
    trial_values[i] = starts[i];
    const double e = error(trial_values);
    if (e <= best * (1 + 1e-9) + 1e-15) values = trial_values, best = std::min(best, e);
  }
  apply(base, factors, values);
  return base;
}

FitError median_errors(const devices::Device& device, const std::vector<Observation>& obs,
                       const roofline::DeratingTables* tables) {
  FitError out;
  auto pd = prepare(device, tables);
  if (!pd.ok()) return out;
  std::vector<double> decode, ttft, memory;
  for (const auto& ob : obs) {
    const auto e = solver::estimate(*ob.model, *pd, ob.config, ob.draft, false);
    if (!e.ok()) continue;
    auto rel = [](double p, double m) { return std::abs(p - m) / m; };
    if (ob.decode_tok_s) decode.push_back(rel(e->latency.decode_tok_s.mid, *ob.decode_tok_s));
    if (ob.ttft_ms) ttft.push_back(rel(e->latency.ttft_ms.mid, *ob.ttft_ms));
    if (ob.peak_memory_bytes) memory.push_back(rel(e->memory.total_bytes, *ob.peak_memory_bytes));
  }
  out = {median(decode), median(ttft), median(memory), int(decode.size()), int(ttft.size()), int(memory.size())};
  return out;
}

}  // namespace trilemma::calibration
