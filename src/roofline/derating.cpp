#include "roofline/derating.hpp"

#include <map>
#include <mutex>

#include "io/embedded_data.hpp"
#include "io/yaml_fields.hpp"

namespace trilemma::roofline {
namespace {

// The two tables are parsed once; they are built in and validated by tests.
const YAML::Node& table(std::string_view path) {
  static std::map<std::string, YAML::Node, std::less<>> cache;
  static std::mutex lock;
  std::lock_guard guard(lock);
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  YAML::Node node;
  for (const auto& f : io::embedded_files())
    if (f.path == path) {
      auto parsed = io::parse_yaml(std::string(f.content), std::string(f.path));
      if (parsed.ok()) node = *parsed;
    }
  return cache.emplace(std::string(path), node).first->second;
}

Range range_of(const YAML::Node& n, Range fallback) {
  if (!n.IsDefined() || !n.IsMap()) return fallback;
  return {n["low"].as<double>(fallback.low), n["mid"].as<double>(fallback.mid), n["high"].as<double>(fallback.high)};
}

}  // namespace

Derating derating_for(const devices::Device& d, const std::string& backend, const std::string& weights) {
  Derating out;
  const YAML::Node row = table("devices/derating.yaml")["backends"][backend];
  out.bandwidth_fraction = range_of(row["bandwidth_fraction"], {0.5, 0.65, 0.8});
  out.compute_fraction = range_of(row["compute_fraction"], {0.25, 0.4, 0.55});
  out.overhead_ms = row["overhead_ms"].as<double>(0.5);
  out.runtime_bytes = row["runtime_mib"].as<double>(50) * 1048576.0;
  out.basis = "derating: devices/derating.yaml backend " + backend;
  // CPU decode on a class of device: the class's measured efficiency is the middle value.
  if (backend == "cpu") {
    const YAML::Node cls = table("devices/classes.yaml")["classes"][d.device_class];
    if (cls["bandwidth_efficiency"]) {
      const double mid = cls["bandwidth_efficiency"].as<double>();
      out.bandwidth_fraction = {std::min(out.bandwidth_fraction.low, mid * 0.85), mid,
                                std::max(out.bandwidth_fraction.high, mid * 1.15)};
      out.basis += ", class " + d.device_class + " bandwidth_efficiency " + std::to_string(mid).substr(0, 4) +
                   " (devices/classes.yaml)";
    }
  }
  if (d.calibration) {
    const auto& c = *d.calibration;
    // A fraction fitted for this weight format wins over one fitted for "all" formats.
    auto pick = [&](const std::vector<std::pair<std::string, double>>& table) {
      std::optional<double> fraction;
      for (const auto& [format, value] : table)
        if (format == weights) return std::optional<double>(value);
        else if (format == "all") fraction = value;
      return fraction;
    };
    if (auto f = pick(c.bandwidth_fraction)) {
      out.bandwidth_fraction = Range::exact(*f);
      out.basis = "calibrated on this host (" + c.fitted_on + ")";
    }
    if (auto f = pick(c.compute_fraction_by_format)) out.compute_fraction = Range::exact(*f);
    if (c.overhead_ms) out.overhead_ms = *c.overhead_ms;
    if (c.runtime_mib) out.runtime_bytes = *c.runtime_mib * 1048576.0;
    if (c.scratch_fraction) out.scratch_fraction = *c.scratch_fraction;
    if (c.speculative_round_ms) out.speculative_round_ms = *c.speculative_round_ms;
  }
  return out;
}

Range attention_fraction_for(const devices::Device& d, const std::string& backend, const std::string& kv_format,
                             AttentionPhase phase) {
  const YAML::Node row = table("devices/derating.yaml")["backends"][backend];
  Range out = range_of(row["attention_fraction"], range_of(row["compute_fraction"], {0.25, 0.4, 0.55}));
  if (d.calibration) {
    for (const auto& [format, value] : d.calibration->attention_fraction)
      if (format == kv_format) out = Range::exact(value);
    if (phase == AttentionPhase::prefill)
      for (const auto& [format, value] : d.calibration->prefill_attention_fraction)
        if (format == kv_format) out = Range::exact(value);
  }
  return out;
}

OffloadTier offload_tier_for(const devices::Device& d) {
  const YAML::Node row = table("devices/derating.yaml")["offload_tier"][d.device_class];
  OffloadTier t;
  t.name = row["name"].as<std::string>("slower tier");
  t.read_gbps = row["read_gbps"].as<double>(1.0);
  t.source = row["url"].as<std::string>("");
  return t;
}

}  // namespace trilemma::roofline
