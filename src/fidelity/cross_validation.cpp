#include "fidelity/cross_validation.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <system_error>
#include <exception>
#include <mutex>
#include <thread>

#include "fidelity/device_fit.hpp"
#include "fidelity/median.hpp"
#include "solver/estimate.hpp"

namespace trilemma::fidelity {
namespace {

using calibration::Figure;

// Nearest-rank percentile.
double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t rank = static_cast<std::size_t>(std::ceil(p / 100.0 * v.size()));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

// Predictions of `indices` with `tables`; a device with an entry in `calibrated` is predicted
// with that calibration (its fold's own), the others as devices without data.
std::vector<PointResult> predict(const calibration::ObservationSet& set, const std::vector<std::size_t>& indices,
                                 const roofline::DeratingTables& tables,
                                 const std::map<std::string, devices::Device>& calibrated = {}) {
  std::vector<PointResult> out;
  std::map<std::string, solver::PreparedDevice> prepared;
  for (auto i : indices) {
    const auto& o = set.observations()[i];
    auto it = prepared.find(o.device);
    if (it == prepared.end()) {
      const auto c = calibrated.find(o.device);
      const auto& device = c != calibrated.end() ? c->second : set.device(o.device);
      auto pd = solver::PreparedDevice::prepare(device, tables, solver::PreparedDevice::Purpose::fitting);
      if (!pd.ok()) continue;
      it = prepared.emplace(o.device, std::move(*pd)).first;
    }
    const auto e = solver::estimate_speed(*o.observation.model, it->second, o.observation.config);
    if (!e.ok()) continue;
    PointResult p{i, 0, 0, 0, e->latency.bytes_per_token, false};
    if (const auto* eff = it->second.efficiency(o.observation.config.backend, o.observation.config.weights))
      p.calibrated = eff->calibrated;
    const auto& ob = o.observation;
    switch (o.figure) {
      case Figure::decode: p.predicted = e->latency.decode_tok_s.mid, p.measured = *ob.decode_tok_s; break;
      case Figure::prefill:
        p.predicted = ob.config.prompt / e->latency.ttft_ms.mid * 1000.0, p.measured = ob.config.prompt / *ob.ttft_ms * 1000.0;
        break;
      case Figure::memory: p.predicted = e->memory.total_bytes, p.measured = *ob.peak_memory_bytes; break;
      case Figure::count: continue;  // not a figure
    }
    p.error = (p.predicted - p.measured) / p.measured;
    out.push_back(p);
  }
  return out;
}

const std::string& group_of(const calibration::RowObservation& o, HoldOut by) {
  switch (by) {
    case HoldOut::source: return o.source;
    case HoldOut::runtime: return o.runtime;
    default: return o.device;
  }
}

// One fold: the tables refitted without the group; unless the group is a device, the group's
// devices recalibrated on their observations outside it.
std::vector<PointResult> fold(const calibration::ObservationSet& set, const roofline::DeratingTables& priors, HoldOut by,
                              const std::string& group) {
  std::vector<std::size_t> train, test;
  for (std::size_t i = 0; i < set.observations().size(); ++i)
    (group_of(set.observations()[i], by) == group ? test : train).push_back(i);
  const auto fit = fit_tables(set, train, priors);
  std::map<std::string, devices::Device> calibrated;
  if (by != HoldOut::device)
    for (auto i : test) {
      const auto& id = set.observations()[i].device;
      if (calibrated.count(id)) continue;
      devices::Device d = set.device(id);
      if (auto cal = fit_device(set, id, train, fit.tables, "fold")) d.calibration = std::move(cal->calibration);
      calibrated.emplace(id, std::move(d));
    }
  return predict(set, test, fit.tables, calibrated);
}

Report summarize(const calibration::ObservationSet& set, std::vector<PointResult> points, std::string method) {
  Report r;
  r.method = std::move(method);
  std::sort(points.begin(), points.end(), [](auto& a, auto& b) { return a.observation < b.observation; });
  std::map<std::string, DeviceResult> by_device;
  for (const auto& p : points) {
    const auto& o = set.observations()[p.observation];
    auto& d = by_device[o.device];
    d.device = o.device;
    d.errors[static_cast<std::size_t>(o.figure)].push_back(p.error);
  }
  for (auto& [id, d] : by_device) r.devices.push_back(std::move(d));
  for (auto f : k_figures) {
    const auto fi = static_cast<std::size_t>(f);
    std::vector<double> abs_medians, signed_medians;
    auto& s = r.figures[fi];
    for (const auto& d : r.devices) {
      if (d.errors[fi].empty()) continue;
      abs_medians.push_back(d.median_abs(f));
      signed_medians.push_back(median(d.errors[fi]));
      s.points += int(d.errors[fi].size());
    }
    s.devices = int(abs_medians.size());
    s.median = median(abs_medians);
    s.p90 = percentile(abs_medians, 90);
    s.bias = median(signed_medians);
  }
  r.points = std::move(points);
  return r;
}

}  // namespace

std::string figure_name(Figure f) {
  switch (f) {
    case Figure::decode: return "decode_tok_s";
    case Figure::prefill: return "prefill_tok_s";
    case Figure::memory: return "peak_memory";
    case Figure::count: break;
  }
  return "";
}

double DeviceResult::median_abs(Figure f) const {
  std::vector<double> a;
  for (double e : errors[static_cast<std::size_t>(f)]) a.push_back(std::abs(e));
  return median(a);
}

std::string hold_out_name(HoldOut by) {
  switch (by) {
    case HoldOut::device: return "leave-one-device-out";
    case HoldOut::source: return "leave-one-source-out";
    case HoldOut::runtime: return "leave-one-runtime-out";
    case HoldOut::count: break;
  }
  return "";
}

std::optional<HoldOut> hold_out_from_key(const std::string& key) {
  if (key == "device") return HoldOut::device;
  if (key == "source") return HoldOut::source;
  if (key == "runtime") return HoldOut::runtime;
  return std::nullopt;
}

Report hold_out(const calibration::ObservationSet& set, const roofline::DeratingTables& priors, HoldOut by,
                unsigned threads, const std::string& only) {
  std::vector<std::string> groups;
  for (const auto& o : set.observations()) groups.push_back(group_of(o, by));
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  if (!only.empty()) groups = {only};
  std::vector<std::vector<PointResult>> per_fold(groups.size());
  std::atomic<std::size_t> next{0};
  // A fold that fails (out of memory under a limit) stops every worker; the first failure is
  // rethrown here, where the command reports it, instead of terminating the process.
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    try {
      for (std::size_t k; (k = next++) < groups.size();) per_fold[k] = fold(set, priors, by, groups[k]);
    } catch (...) {
      next = groups.size();
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  // The folds are CPU-bound: more workers than CPUs only add each one's memory (a thread's
  // stack and malloc arena: 64 of them exhausted a 1 GB address-space limit). A thread the
  // system refuses is one fewer worker, not an abort: the folds are shared through `next`
  // (reliability D11, as the engine's pool does).
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t workers = std::min<std::size_t>({std::max(1u, threads), cpus, groups.size()});
  for (std::size_t t = 1; t < workers; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;
    }
  }
  worker();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  std::vector<PointResult> all;
  for (auto& f : per_fold) all.insert(all.end(), f.begin(), f.end());
  return summarize(set, std::move(all), hold_out_name(by));
}

Report with_tables(const calibration::ObservationSet& set, const roofline::DeratingTables& tables) {
  std::vector<std::size_t> all(set.observations().size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return summarize(set, predict(set, all, tables), "priors");
}

}  // namespace trilemma::fidelity
