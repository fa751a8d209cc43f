#include "fidelity/global_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "calibration/search.hpp"
#include "solver/estimate.hpp"

namespace trilemma::fidelity {
namespace {

using calibration::Figure;

// One fitted mid value inside the tables; low and high move with it.
struct Handle {
  std::string name;
  Range* range = nullptr;   // a fraction's range, or
  double* value = nullptr;  // a cost
  std::set<std::string> devices;
};

// The names of the handles a prediction of `c` on `d` reads (whether or not the fit has them).
std::vector<std::string> handles_read(const devices::Device& d, const DeploymentConfig& c) {
  const std::string b(info(c.backend).name);
  std::vector<std::string> out;
  if (c.backend == Backend::cpu && d.cpu_read_gbps && d.cpu_read_kind)
    out.push_back(b + ".bandwidth_fraction." + std::string(info(*d.cpu_read_kind).fraction_key));
  else
    out.push_back(b + ".bandwidth_fraction." + d.device_class);
  for (const auto path : {roofline::matmul_path(d, c.backend, c.weights), roofline::matvec_path(d, c.backend, c.weights)})
    if (path) out.push_back(b + ".compute_fraction." + std::string(info(*path).name));
  out.push_back(b + ".compute_factor." + std::string(info(c.weights).name));
  out.push_back(b + ".overhead_us_per_layer");
  return out;
}

void set_mid(Range& r, double mid) {
  const double k = r.mid > 0 ? mid / r.mid : 1;
  r = {r.low * k, mid, r.high * k};
}

}  // namespace

GlobalFit fit_tables(const calibration::ObservationSet& set, const std::vector<std::size_t>& use,
                     const roofline::DeratingTables& priors) {
  GlobalFit out;
  out.tables = priors;
  auto& t = out.tables;
  const auto& obs = set.observations();

  // The handles the observations inform, created in the tables where the priors have only a
  // default (a class or path of its own gets the default as its start).
  std::vector<Handle> handles;
  auto handle = [&](const std::string& name, Range* range, double* value, const std::string& device) {
    for (auto& h : handles)
      if (h.name == name) return h.devices.insert(device), void();
    handles.push_back({name, range, value, {device}});
  };
  std::map<std::pair<std::string, int>, double> per_device_figure;  // observations per (device, figure)
  for (auto i : use) per_device_figure[{obs[i].device, int(obs[i].figure)}] += 1;
  // Handles point into `t`; optional rows are created before any pointer is taken.
  for (auto i : use) {
    const auto& o = obs[i];
    const auto& d = set.device(o.device);
    auto& row = t.backends[static_cast<std::size_t>(o.observation.config.backend)];
    if (!row) continue;
    if (o.observation.config.backend == Backend::cpu && d.cpu_read_gbps && d.cpu_read_kind) {
      auto& slot = row->bandwidth_of_measured[static_cast<std::size_t>(*d.cpu_read_kind)];
      if (!slot) slot = Range{0.5, 0.75, 0.95};
    } else {
      auto& slot = row->bandwidth_by_class[roofline::class_index(d.device_class).value_or(0)];
      if (!slot) slot = row->bandwidth_fraction;
    }
    for (const auto path : {roofline::matmul_path(d, o.observation.config.backend, o.observation.config.weights),
                            roofline::matvec_path(d, o.observation.config.backend, o.observation.config.weights)})
      if (path) {
        auto& slot = row->compute_by_path[static_cast<std::size_t>(*path)];
        if (!slot) slot = row->compute_fraction;
      }
  }
  for (auto i : use) {
    const auto& o = obs[i];
    if (o.figure == Figure::memory) continue;
    const auto& d = set.device(o.device);
    const auto backend = o.observation.config.backend;
    auto& row = t.backends[static_cast<std::size_t>(backend)];
    if (!row) continue;
    const std::string b(info(backend).name);
    // A backend reaches a different share of peak bandwidth on each class of device (a
    // discrete card's GDDR against a module's shared LPDDR).
    // Each phase's factors move only with that phase's rows: bandwidth with decode.
    const auto ci = roofline::class_index(d.device_class).value_or(0);
    if (o.figure != Figure::decode) {
    } else if (backend == Backend::cpu && d.cpu_read_gbps && d.cpu_read_kind) {
      const auto& kind = info(*d.cpu_read_kind);
      handle(b + ".bandwidth_fraction." + std::string(kind.fraction_key),
             &*row->bandwidth_of_measured[static_cast<std::size_t>(kind.kind)], nullptr, o.device);
    } else {
      handle(b + ".bandwidth_fraction." + d.device_class, &*row->bandwidth_by_class[ci], nullptr, o.device);
    }
    // Prefill informs the matrix path's fraction, decode the vector path's (they are one path
    // on devices without matrix units).
    const auto path = o.figure == Figure::prefill ? roofline::matmul_path(d, backend, o.observation.config.weights)
                                                  : roofline::matvec_path(d, backend, o.observation.config.weights);
    if (path)
      handle(b + ".compute_fraction." + std::string(info(*path).name),
             &*row->compute_by_path[static_cast<std::size_t>(*path)], nullptr, o.device);
    // Per-format factors, against a reference format per class of weights (Q4_0 for integer,
    // F16 for half) so that factor and path fraction do not trade against each other.
    const WeightFormat w = o.observation.config.weights;
    if (o.figure == Figure::prefill && w != WeightFormat::q4_0 && w != WeightFormat::f16 && w != WeightFormat::f32) {
      auto& slot = row->compute_factor_by_format[static_cast<std::size_t>(w)];
      if (!slot) slot = 1.0;
      handle(b + ".compute_factor." + std::string(info(w).name), nullptr, &*slot, o.device);
    }
    // The fixed cost of a pass is one per layer (kernel launches, thread barriers): fitted per
    // layer, the per-pass prior dropped, so models of other depths scale.
    handle(b + ".overhead_us_per_layer", nullptr, &row->overhead_us_per_layer, o.device);
  }
  // A cost fitted in log space cannot start at zero: a per-layer cost starts at the per-pass
  // prior spread over a 32-layer model.
  std::vector<calibration::Parameter> params;
  for (auto& h : handles) {
    if (h.value && h.name.find(".compute_factor.") != std::string::npos) {
      params.push_back({*h.value, 0.05, 20.0});
    } else if (h.value) {
      auto& row = *t.backends[static_cast<std::size_t>(backend_from_name(h.name.substr(0, h.name.find('.'))).value())];
      params.push_back({std::max(*h.value, std::max(row.overhead_ms * 1000.0 / 32.0, 1.0)), 0.1, 1e5});
      row.overhead_ms = 0;
    } else {
      // A fraction of a peak cannot exceed it: data that want more say the peak is wrong.
      params.push_back({std::min(h.range->mid, 1.0), 1e-4, 1.0});
    }
  }
  auto apply = [&](const std::vector<double>& v) {
    for (std::size_t k = 0; k < handles.size(); ++k) {
      if (handles[k].value) *handles[k].value = v[k];
      else set_mid(*handles[k].range, v[k]);
    }
  };

  // The handles each observation's prediction reads (its backend's bandwidth for its class or
  // measured kind, both of its compute paths, its format's factor, the per-layer cost): a trial
  // that moves a few handles re-predicts only the observations that read them.
  std::map<std::string, std::size_t> index_of;
  for (std::size_t k = 0; k < handles.size(); ++k) index_of[handles[k].name] = k;
  std::vector<std::size_t> timed;
  std::vector<std::vector<std::size_t>> readers(handles.size());  // handle -> positions in `timed`
  for (auto i : use) {
    const auto& o = obs[i];
    if (o.figure == Figure::memory || !t.backends[static_cast<std::size_t>(o.observation.config.backend)]) continue;
    for (const auto& name : handles_read(set.device(o.device), o.observation.config))
      if (const auto it = index_of.find(name); it != index_of.end()) readers[it->second].push_back(timed.size());
    timed.push_back(i);
  }
  // Devices stripped of calibrations, prepared with the trial tables when a handle they read moves.
  std::map<std::string, solver::PreparedDevice> prepared;
  std::vector<double> cost(timed.size(), 0.0), last;
  auto predict = [&](std::size_t k) {
    const auto& o = obs[timed[k]];
    cost[k] = 0;
    const auto it = prepared.find(o.device);
    if (it == prepared.end()) return;
    const auto e = solver::estimate_speed(*o.observation.model, it->second, o.observation.config);
    if (!e.ok()) return;
    const double w = 1.0 / per_device_figure[{o.device, int(o.figure)}];
    const double err = o.figure == Figure::decode
                           ? calibration::log_error(e->latency.decode_tok_s.mid, *o.observation.decode_tok_s)
                           : calibration::log_error(e->latency.ttft_ms.mid, *o.observation.ttft_ms);
    cost[k] = w * err * err;
  };
  auto error = [&](const std::vector<double>& v) {
    apply(v);
    std::vector<std::size_t> stale;
    if (last.empty()) {
      for (std::size_t k = 0; k < timed.size(); ++k) stale.push_back(k);
    } else {
      for (std::size_t h = 0; h < v.size(); ++h)
        if (v[h] != last[h]) stale.insert(stale.end(), readers[h].begin(), readers[h].end());
      std::sort(stale.begin(), stale.end());
      stale.erase(std::unique(stale.begin(), stale.end()), stale.end());
    }
    last = v;
    std::set<std::string> devices;
    for (auto k : stale) devices.insert(obs[timed[k]].device);
    for (const auto& id : devices) {
      prepared.erase(id);
      if (auto pd = solver::PreparedDevice::prepare(set.device(id), t, solver::PreparedDevice::Purpose::fitting); pd.ok())
        prepared.emplace(id, std::move(*pd));
    }
    for (auto k : stale) predict(k);
    double sum = 0;
    for (double c : cost) sum += c;
    return sum;
  };
  if (!params.empty()) out.error = calibration::coordinate_search(params, error, std::log(2.0), 1e-2);
  std::vector<double> v;
  for (const auto& p : params) v.push_back(p.value);
  apply(v);

  // Runtime memory per backend: the median of measured minus modelled weights, KV and scratch
  // (a median: published "memory" figures mix process RSS and buffer totals).
  // Per backend and runtime: other runtimes (ExecuTorch on a CPU) keep other amounts.
  std::map<std::pair<Backend, std::string>, std::vector<double>> residuals;
  std::map<std::pair<Backend, std::string>, std::set<std::string>> memory_devices;
  for (auto i : use) {
    const auto& o = obs[i];
    if (o.figure != Figure::memory) continue;
    auto pd = solver::PreparedDevice::prepare(set.device(o.device), t, solver::PreparedDevice::Purpose::fitting);
    if (!pd.ok()) continue;
    const auto e = solver::estimate_speed(*o.observation.model, *pd, o.observation.config);
    if (!e.ok()) continue;
    const auto& m = e->memory;
    const std::pair key{o.observation.config.backend, o.observation.config.runtime};
    residuals[key].push_back(*o.observation.peak_memory_bytes - (m.weights_bytes + m.kv_bytes + m.scratch_bytes));
    memory_devices[key].insert(o.device);
  }
  for (auto& [key, r] : residuals) {
    std::sort(r.begin(), r.end());
    auto& row = t.backends[static_cast<std::size_t>(key.first)];
    if (!row) continue;
    const double mib = std::max(0.0, r[r.size() / 2] / 1048576.0);
    const std::string name = std::string(info(key.first).name) + ".runtime_mib";
    if (key.second.empty()) {
      row->runtime_mib = mib;
      handles.push_back({name, nullptr, &row->runtime_mib, memory_devices[key]});
    } else {
      const std::string engine = key.second;  // clang 14 cannot capture a structured binding
      std::erase_if(row->runtime_by_engine, [&](const auto& e) { return e.first == engine; });
      row->runtime_by_engine.emplace_back(key.second, mib);
      handles.push_back({name + "." + key.second, nullptr, &row->runtime_by_engine.back().second, memory_devices[key]});
    }
  }
  for (const auto& h : handles)
    out.values.push_back({h.name, h.value ? *h.value : h.range->mid, int(h.devices.size())});
  return out;
}

}  // namespace trilemma::fidelity
