#include "calibration/fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "calibration/search.hpp"
#include "solver/estimate.hpp"
#include "types/number_text.hpp"

namespace trilemma::calibration {
namespace {

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

Result<solver::PreparedDevice> prepare(const devices::Device& d, const roofline::DeratingTables* tables,
                                       const solver::PreparedDevice::Scope* scope = nullptr) {
  if (!tables) {
    TRILEMMA_TRY(builtin, roofline::derating_tables());
    tables = builtin;
  }
  return solver::PreparedDevice::prepare(d, *tables, solver::PreparedDevice::Purpose::fitting, scope);
}

// The backends and weight formats the observations run (a draft's weights included): all a
// trial of the fit predicts.
solver::PreparedDevice::Scope scope_of(const std::vector<Observation>& obs) {
  solver::PreparedDevice::Scope scope;
  for (const auto& ob : obs) {
    scope.backends.set(static_cast<std::size_t>(ob.config.backend));
    scope.formats.set(static_cast<std::size_t>(ob.config.weights));
    if (ob.config.speculative.has_draft_weights()) scope.formats.set(static_cast<std::size_t>(ob.config.speculative.draft_weights));
  }
  return scope;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

namespace {

// Runtime memory and the scratch's scale per backend, by linear least squares of measured -
// weights - KV - draft = runtime + f x modelled scratch (it does not depend on the latency
// factors).
void fit_memory(devices::Calibration& base, const solver::PreparedDevice& prepared, const std::vector<Observation>& obs) {
  std::map<std::string, std::array<double, 5>> sums;  // n, sx, sy, sxx, sxy
  for (const auto& ob : obs) {
    if (!ob.peak_memory_bytes) continue;
    const auto e = solver::estimate_speed(*ob.model, prepared, ob.config, ob.draft);
    const auto* eff = prepared.efficiency(ob.config.backend, ob.config.weights);
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

// The factors the observations inform, with their start values (what the device reaches now),
// bounds, and the observations behind each.
struct FactorSet {
  std::vector<Factor> factors;
  std::vector<Parameter> params;
  std::vector<std::set<std::size_t>> informed_by;  // observation indices per factor
  void add(Factor f, Parameter p, std::size_t observation) {
    for (std::size_t k = 0; k < factors.size(); ++k)
      if (factors[k].kind == f.kind && factors[k].backend == f.backend && factors[k].key == f.key)
        return informed_by[k].insert(observation), void();
    factors.push_back(std::move(f));
    p.value = std::clamp(p.value, p.lower, p.upper);
    params.push_back(p);
    informed_by.push_back({observation});
  }
};

FactorSet collect_factors(const solver::PreparedDevice& prepared, const std::vector<Observation>& obs, const FitOptions& o) {
  using roofline::AttentionPhase;
  FactorSet set;
  const double upper = o.max_fraction;
  auto fraction = [&](double start, double lower = 1e-5) { return Parameter{std::max(start, 1e-3), lower, upper}; };
  // A factor is fitted only where the measurements can tell it apart: compute needs a
  // prefill, a fixed per-pass cost needs decode speeds of two or more different byte counts
  // (with one, bandwidth and overhead trade freely).
  std::map<Backend, std::set<std::pair<const solver::PreparedModel*, WeightFormat>>> decoded;
  for (const auto& ob : obs)
    if (ob.decode_tok_s) decoded[ob.config.backend].insert({ob.model, ob.config.weights});
  for (std::size_t i = 0; i < obs.size(); ++i) {
    const auto& ob = obs[i];
    const auto& c = ob.config;
    const std::string backend(info(c.backend).name);
    const bool overhead_informed = decoded[c.backend].size() >= 2;
    std::vector<WeightFormat> formats = {c.weights};
    if (c.speculative.has_draft_weights()) formats.push_back(c.speculative.draft_weights);
    for (auto w : formats) {
      const auto* e = prepared.efficiency(c.backend, w);
      if (!e) continue;
      const std::string format(info(w).name);
      if (ob.decode_tok_s) {
        set.add({Factor::Kind::bandwidth, backend, o.bandwidth_per_format ? format : "all"},
                fraction(e->bandwidth_fraction.mid, o.min_bandwidth_fraction), i);
        if (o.decode_compute)
          set.add({Factor::Kind::decode_compute, backend, o.bandwidth_per_format ? format : std::string(info(e->decode_path).name)},
                  fraction(e->decode_compute_fraction.mid), i);
        // A calibrated overhead replaces the tables' fixed costs. Per pass (one model, the
        // host's engine runs), or per layer (models of several depths, as published results are).
        const std::uint32_t layers = ob.model->model->shape.layers;
        if (o.overhead && overhead_informed && o.overhead_per_layer)
          set.add({Factor::Kind::overhead_per_layer, backend, ""},
                  {std::max(e->pass_overhead_ms(layers) * 1000.0 / layers, 1.0), 1e-5, 1e6}, i);
        else if (o.overhead && overhead_informed)
          set.add({Factor::Kind::overhead, backend, ""}, {std::max(e->pass_overhead_ms(layers), 0.01), 1e-5, k_max_ms}, i);
        if (c.speculative.on())
          set.add({Factor::Kind::speculative_round, backend, ""},
                  {e->speculative_round_ms > 0 ? e->speculative_round_ms : std::max(e->overhead_ms, 0.01), 1e-5, k_max_ms}, i);
      }
      if (ob.ttft_ms)
        set.add({Factor::Kind::compute, backend, o.compute_per_format ? format : std::string(info(e->path).name)},
                fraction(e->compute_fraction.mid), i);
    }
    if (o.attention) {
      const std::string kv = o.attention_per_kv ? std::string(info(c.kv_type).name) : "all";
      if (ob.decode_tok_s)
        set.add({Factor::Kind::attention, backend, kv}, fraction(prepared.attention_fraction(c.backend, c.kv_type, AttentionPhase::decode).mid), i);
      if (ob.ttft_ms)
        set.add({Factor::Kind::prefill_attention, backend, kv},
                fraction(prepared.attention_fraction(c.backend, c.kv_type, AttentionPhase::prefill).mid), i);
    }
  }
  return set;
}

std::string factor_name(const Factor& f) {
  switch (f.kind) {
    case Factor::Kind::bandwidth: return "bandwidth_fraction." + f.key;
    case Factor::Kind::compute: return "compute_fraction." + f.key;
    case Factor::Kind::decode_compute: return "decode_compute_fraction." + f.key;
    case Factor::Kind::attention: return "attention_fraction." + f.key;
    case Factor::Kind::prefill_attention: return "prefill_attention_fraction." + f.key;
    case Factor::Kind::overhead: return "overhead_ms";
    case Factor::Kind::overhead_per_layer: return "overhead_us_per_layer";
    case Factor::Kind::speculative_round: return "speculative_round_ms";
  }
  return "";
}

bool is_fraction(const Factor& f) {
  return f.kind != Factor::Kind::overhead && f.kind != Factor::Kind::overhead_per_layer && f.kind != Factor::Kind::speculative_round;
}

}  // namespace

devices::Calibration fit(const devices::Device& device, const std::vector<Observation>& obs, const FitOptions& o,
                         const std::string& fitted_on) {
  devices::Calibration base = device.calibration.value_or(devices::Calibration{});
  base.fitted_on = fitted_on;
  const auto scope = scope_of(obs);
  auto prepared = prepare(device, o.tables, &scope);
  if (!prepared.ok() || obs.empty()) return base;
  if (o.memory) fit_memory(base, *prepared, obs);
  FactorSet set = collect_factors(*prepared, obs, o);

  devices::Device trial = device;
  std::vector<double> starts;
  auto error = [&](const std::vector<double>& values) {
    devices::Calibration c = base;
    apply(c, set.factors, values);
    trial.calibration = c;
    const auto pd = prepare(trial, o.tables, &scope);
    if (!pd.ok()) return double(INFINITY);
    double sum = 0;
    for (const auto& ob : obs) {
      const auto e = solver::estimate_speed(*ob.model, *pd, ob.config, ob.draft);
      if (!e.ok()) continue;
      auto add = [&](double predicted, double measured, double tolerance) {
        sum += ob.weight * std::pow(log_error(predicted, measured), 2);
        // 5% inside the tolerance, so a fitted point does not sit on its edge.
        if (tolerance > 0) sum += 100 * std::pow(std::max(0.0, std::abs(predicted / measured - 1) - 0.95 * tolerance), 2);
      };
      if (ob.decode_tok_s) add(e->latency.decode_tok_s.mid, *ob.decode_tok_s, o.decode_tolerance);
      if (ob.ttft_ms) add(e->latency.ttft_ms.mid, *ob.ttft_ms, o.ttft_tolerance);
    }
    for (std::size_t k = 0; k < values.size() && o.prior_sources > 0; ++k)
      sum += o.prior_sources * std::pow(std::log(values[k] / starts[k]), 2);
    return sum;
  };
  std::vector<std::string> at_bound;  // per backend, in factor order: "name: value (bound), from labels"
  std::vector<std::string> at_bound_backend;
  std::vector<double> values;
  for (int round = 0; round < 3 && !set.factors.empty(); ++round) {
    starts.clear();
    for (const auto& p : set.params) starts.push_back(p.value);
    double best = coordinate_search(set.params, error);
    values.clear();
    for (const auto& p : set.params) values.push_back(p.value);
    // A factor the measurements do not inform (a decode that one compute bound explains,
    // whatever the bandwidth above it) ends wherever the search left it, up to its bound. It
    // keeps the value it started from, the tables', where that fits as well: an unidentified
    // 16x-peak bandwidth would otherwise reach every format the calibration passes its ratios on to.
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i] == starts[i]) continue;
      auto trial_values = values;
      trial_values[i] = starts[i];
      const double e = error(trial_values);
      if (e <= best * (1 + 1e-9) + 1e-15) values = trial_values, best = std::min(best, e);
    }
    if (!o.drop_at_bound) break;
    // Fractions pushed to a physical bound: what the rows say is not a fraction of this peak.
    FactorSet kept;
    bool dropped = false;
    for (std::size_t k = 0; k < set.factors.size(); ++k) {
      const auto& p = set.params[k];
      const bool low = values[k] <= p.lower * 1.01, high = values[k] >= p.upper * 0.99;
      if (is_fraction(set.factors[k]) && (low || high)) {
        std::string rows;
        int n = 0;
        for (auto i : set.informed_by[k]) rows += (n++ < 4 ? (n > 1 ? ", " : "") + obs[i].label : "");
        if (n > 4) rows += " and " + std::to_string(n - 4) + " more";
        at_bound.push_back(factor_name(set.factors[k]) + " " + std::to_string(values[k]).substr(0, 6) +
                           (low ? " (lower bound)" : " (upper bound)") + " from " + rows);
        at_bound_backend.push_back(set.factors[k].backend);
        auto& table = table_of(base.at(set.factors[k].backend), set.factors[k].kind);
        std::erase_if(table, [&](const auto& entry) { return entry.first == set.factors[k].key; });
        dropped = true;
        continue;
      }
      kept.factors.push_back(set.factors[k]);
      kept.params.push_back({starts[k], p.lower, p.upper});
      kept.informed_by.push_back(set.informed_by[k]);
    }
    if (!dropped) break;
    set = std::move(kept);
    values.clear();
  }
  apply(base, set.factors, values);
  // The evidence of this fit replaces an earlier calibration's for the backends it fitted.
  for (const auto& f : set.factors) base.at(f.backend).sources.clear(), base.at(f.backend).at_bound.clear();
  for (const auto& b : at_bound_backend) base.at(b).sources.clear(), base.at(b).at_bound.clear();
  for (std::size_t k = 0; k < at_bound.size(); ++k) base.at(at_bound_backend[k]).at_bound.push_back(at_bound[k]);
  // The evidence behind each factor: independent sources (an observation without one is its own).
  for (std::size_t k = 0; k < set.factors.size(); ++k) {
    std::set<std::string> sources;
    for (auto i : set.informed_by[k]) sources.insert(obs[i].source.empty() ? obs[i].label : obs[i].source);
    base.at(set.factors[k].backend).sources.emplace_back(factor_name(set.factors[k]), std::uint32_t(sources.size()));
  }
  return base;
}

FitError median_errors(const devices::Device& device, const std::vector<Observation>& obs,
                       const roofline::DeratingTables* tables) {
  FitError out;
  auto pd = prepare(device, tables);
  if (!pd.ok()) return out;
  std::vector<double> decode, ttft, memory;
  for (const auto& ob : obs) {
    const auto e = solver::estimate_speed(*ob.model, *pd, ob.config, ob.draft);
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
