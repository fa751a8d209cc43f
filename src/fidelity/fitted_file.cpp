#include "fidelity/fitted_file.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "calibration/fit.hpp"
#include "devices/device_loader.hpp"
#include "fidelity/median.hpp"

namespace trilemma::fidelity {
namespace {

using calibration::Figure;


void emit_range(YAML::Emitter& out, const Range& r) {
  out << YAML::Flow << YAML::BeginMap << YAML::Key << "low" << YAML::Value << rounded(r.low) << YAML::Key << "mid"
      << YAML::Value << rounded(r.mid) << YAML::Key << "high" << YAML::Value << rounded(r.high) << YAML::EndMap;
}

}  // namespace

void set_ranges(GlobalFit& fit, const calibration::ObservationSet& set, const Report& held_out) {
  // pred / measured ratios of the held-out points, per backend and figure.
  std::map<std::pair<Backend, Figure>, std::vector<double>> ratios;
  for (const auto& p : held_out.points) {
    const auto& o = set.observations()[p.observation];
    ratios[{o.observation.config.backend, o.figure}].push_back(p.predicted / p.measured);
  }
  for (std::size_t bi = 0; bi < fit.tables.backends.size(); ++bi) {
    auto& row = fit.tables.backends[bi];
    if (!row) continue;
    const auto backend = static_cast<Backend>(bi);
    // A fraction 80% of held-out devices' points fall within: the truth / prediction ratio
    // runs from 1 / p90 to 1 / p10 of the predicted / measured ratios.
    auto widen = [&](Range& r, Figure f) {
      const auto it = ratios.find({backend, f});
      if (it == ratios.end() || it->second.size() < 5) {
        r = {r.mid / 1.3, r.mid, std::min(1.0, r.mid * 1.3)};
        return;
      }
      const double lo = quantile(it->second, 0.1), hi = quantile(it->second, 0.9);
      r = {r.mid / std::max(hi, 1.0), r.mid, r.mid / std::min(lo, 1.0)};
    };
    for (auto& c : row->bandwidth_by_class)
      if (c) widen(*c, Figure::decode);
    for (auto& m : row->bandwidth_of_measured)
      if (m) widen(*m, Figure::decode);
    for (auto& c : row->compute_by_path)
      if (c) widen(*c, Figure::prefill);
  }
}

std::string fitted_yaml(const GlobalFit& fit, const std::vector<DeviceFit>& devices, const std::string& fitted_on) {
  YAML::Emitter out;
  out.SetDoublePrecision(4);
  out << YAML::BeginMap << YAML::Key << "fitted_on" << YAML::Value << fitted_on;
  out << YAML::Key << "backends" << YAML::Value << YAML::BeginMap;
  // Only what the fit touched: the names in fit.values say which.
  auto fitted = [&](const std::string& name) {
    return std::any_of(fit.values.begin(), fit.values.end(), [&](const FittedValue& v) { return v.name == name; });
  };
  for (const auto& b : backends()) {
    const auto* row = fit.tables.find(b.backend);
    const std::string name(b.name);
    if (!row || std::none_of(fit.values.begin(), fit.values.end(),
                             [&](const FittedValue& v) { return v.name.rfind(name + ".", 0) == 0; }))
      continue;
    out << YAML::Key << name << YAML::Value << YAML::BeginMap;
    bool any_bw = false;
    for (std::size_t c = 0; c < roofline::k_device_classes.size(); ++c)
      any_bw |= row->bandwidth_by_class[c] && fitted(name + ".bandwidth_fraction." + roofline::k_device_classes[c]);
    auto measured_fitted = [&](const CpuReadKindInfo& k) {
      return row->bandwidth_of_measured[static_cast<std::size_t>(k.kind)] &&
             fitted(name + ".bandwidth_fraction." + std::string(k.fraction_key));
    };
    for (const auto& k : k_cpu_read_kinds) any_bw |= measured_fitted(k);
    if (any_bw) {
      out << YAML::Key << "bandwidth_fraction" << YAML::Value << YAML::BeginMap;
      for (const auto& k : k_cpu_read_kinds)
        if (measured_fitted(k)) {
          out << YAML::Key << std::string(k.fraction_key) << YAML::Value;
          emit_range(out, *row->bandwidth_of_measured[static_cast<std::size_t>(k.kind)]);
        }
      for (std::size_t c = 0; c < roofline::k_device_classes.size(); ++c)
        if (row->bandwidth_by_class[c] && fitted(name + ".bandwidth_fraction." + roofline::k_device_classes[c])) {
          out << YAML::Key << roofline::k_device_classes[c] << YAML::Value;
          emit_range(out, *row->bandwidth_by_class[c]);
        }
      out << YAML::EndMap;
    }
    bool any_compute = false;
    for (const auto& p : compute_paths())
      any_compute |= row->compute_by_path[static_cast<std::size_t>(p.path)] && fitted(name + ".compute_fraction." + std::string(p.name));
    if (any_compute) {
      out << YAML::Key << "compute_fraction" << YAML::Value << YAML::BeginMap;
      for (const auto& p : compute_paths())
        if (const auto& r = row->compute_by_path[static_cast<std::size_t>(p.path)];
            r && fitted(name + ".compute_fraction." + std::string(p.name))) {
          out << YAML::Key << std::string(p.name) << YAML::Value;
          emit_range(out, *r);
        }
      out << YAML::EndMap;
    }
    bool any_factor = false;
    for (const auto& w : weight_formats())
      any_factor |= fitted(name + ".compute_factor." + std::string(w.name));
    if (any_factor) {
      out << YAML::Key << "compute_factor" << YAML::Value << YAML::Flow << YAML::BeginMap;
      for (const auto& w : weight_formats())
        if (fitted(name + ".compute_factor." + std::string(w.name)))
          out << YAML::Key << std::string(w.name) << YAML::Value << rounded(row->compute_factor(w.format));
      out << YAML::EndMap;
    }
    if (fitted(name + ".overhead_us_per_layer")) {
      out << YAML::Key << "overhead_ms" << YAML::Value << 0;
      out << YAML::Key << "overhead_us_per_layer" << YAML::Value << rounded(row->overhead_us_per_layer);
    }
    const bool engines = std::any_of(row->runtime_by_engine.begin(), row->runtime_by_engine.end(),
                                     [&](const auto& e) { return fitted(name + ".runtime_mib." + e.first); });
    if (fitted(name + ".runtime_mib") || engines) {
      out << YAML::Key << "runtime_mib" << YAML::Value << YAML::Flow << YAML::BeginMap;
      if (fitted(name + ".runtime_mib")) out << YAML::Key << "default" << YAML::Value << std::round(row->runtime_mib);
      for (const auto& [engine, mib] : row->runtime_by_engine)
        if (fitted(name + ".runtime_mib." + engine)) out << YAML::Key << engine << YAML::Value << std::round(mib);
      out << YAML::EndMap;
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  if (!fit.tables.error_bands.empty()) {
    out << YAML::Key << "ranges" << YAML::Value << YAML::BeginSeq;
    for (const auto& b : fit.tables.error_bands)
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "kind" << YAML::Value
          << (b.kind == BackendKind::cpu ? "cpu" : b.kind == BackendKind::gpu ? "gpu" : "npu") << YAML::Key << "phase"
          << YAML::Value << (b.phase == roofline::Phase::decode ? "decode" : "prefill") << YAML::Key << "low" << YAML::Value << rounded(b.low) << YAML::Key << "high"
          << YAML::Value << rounded(b.high) << YAML::Key << "points" << YAML::Value << b.points << YAML::EndMap;
    out << YAML::EndSeq;
  }
  out << YAML::Key << "devices" << YAML::Value << YAML::BeginMap;
  for (const auto& d : devices) {
    out << YAML::Key << d.device << YAML::Value;
    devices::emit_calibration(out, d.calibration);
  }
  out << YAML::EndMap << YAML::EndMap;
  return "# Generated by `trilemma fidelity --write devices/fitted.yaml` from data/measurements: do not edit.\n"
         "# Schema and method: docs/fidelity.md. The priors these values replace: devices/derating.yaml.\n"
         "# ranges: measured / predicted of leave-one-source-out predictions (10th, 90th percentile).\n" +
         std::string(out.c_str()) + "\n";
}

}  // namespace trilemma::fidelity
