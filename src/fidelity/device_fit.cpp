#include "fidelity/device_fit.hpp"

#include <cmath>
#include <map>

#include "calibration/fit.hpp"
#include "fidelity/median.hpp"

namespace trilemma::fidelity {
namespace {

// A device's factors shrink toward the fitted tables as if the tables were this many pages
// (chosen by leave-one-source-out, docs/fidelity.md): one page moves a factor part of the way,
// several move it to what they agree on.
constexpr double k_prior_sources = 1.0;
// A decode below a tenth of the published peak bandwidth says the peak or the run is not what
// the data describe; a factor the rows push there is reported and not used.
constexpr double k_min_bandwidth_fraction = 0.1;
}  // namespace

std::optional<DeviceFit> fit_device(const calibration::ObservationSet& set, const std::string& id,
                                    const std::vector<std::size_t>& use, const roofline::DeratingTables& tables,
                                    const std::string& fitted_on) {
  // Only runs of each backend's own runtime (the one plans are for): ExecuTorch's or MLX's
  // figures would move llama.cpp's calibration of the same backend.
  // Each page weighs one per figure, however many rows it has: the evidence is its sources.
  std::vector<calibration::Observation> obs;
  std::map<std::pair<std::string, calibration::Figure>, int> rows_of;
  for (auto i : use) {
    const auto& o = set.observations()[i];
    if (o.device != id || !o.observation.config.runtime.empty()) continue;
    obs.push_back(o.observation);
    obs.back().source = o.source;
    ++rows_of[{o.source, o.figure}];
  }
  if (obs.empty()) return std::nullopt;
  std::size_t k = 0;
  for (auto i : use) {
    const auto& o = set.observations()[i];
    if (o.device == id && o.observation.config.runtime.empty()) obs[k++].weight = 1.0 / rows_of[{o.source, o.figure}];
  }
  calibration::FitOptions options;
  options.bandwidth_per_format = false;
  options.compute_per_format = false;
  options.attention = false;
  options.overhead_per_layer = true;
  // Published memory figures differ in scope between pages (process peak, the runtime's own
  // count, buffer totals) and between releases of one runtime: a device's few pages would set
  // its runtime memory to one page's scope. The tables' runtime per backend and engine, a
  // median over devices, predicts held-out pages better (docs/fidelity.md).
  options.memory = false;
  options.max_fraction = 1.0;
  options.min_bandwidth_fraction = k_min_bandwidth_fraction;
  options.prior_sources = k_prior_sources;
  options.drop_at_bound = true;
  options.tables = &tables;
  const auto& device = set.device(id);
  const auto before = calibration::median_errors(device, obs, &tables);
  auto cal = calibration::fit(device, obs, options, fitted_on + ", " + std::to_string(obs.size()) + " observations of " + id);
  devices::Device fitted = device;
  fitted.calibration = cal;
  const auto after = calibration::median_errors(fitted, obs, &tables);
  cal.points = static_cast<std::uint32_t>(obs.size());
  cal.error_before = rounded(std::max(before.decode, before.ttft));
  cal.error_after = rounded(std::max(after.decode, after.ttft));
  for (auto& b : cal.backends) {
    for (auto* table : {&b.bandwidth_fraction, &b.compute_fraction})
      for (auto& [k, v] : *table) v = rounded(v);
    if (b.overhead_ms) b.overhead_ms = rounded(*b.overhead_ms);
    if (b.overhead_us_per_layer) b.overhead_us_per_layer = rounded(*b.overhead_us_per_layer);
    if (b.runtime_mib) b.runtime_mib = std::round(*b.runtime_mib);
    if (b.scratch_fraction) b.scratch_fraction = rounded(*b.scratch_fraction);
  }
  return DeviceFit{id, std::move(cal)};
}

std::vector<DeviceFit> fit_devices(const calibration::ObservationSet& set, const roofline::DeratingTables& tables,
                                   const std::string& fitted_on) {
  std::vector<std::size_t> all(set.observations().size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<DeviceFit> out;
  for (const auto& id : set.device_ids())
    if (auto fit = fit_device(set, id, all, tables, fitted_on)) out.push_back(std::move(*fit));
  return out;
}

}  // namespace trilemma::fidelity
