#include "fidelity/error_bands.hpp"

#include <algorithm>
#include <set>

#include "fidelity/median.hpp"

namespace trilemma::fidelity {
namespace {

using calibration::Figure;

constexpr BackendKind k_kinds[] = {BackendKind::cpu, BackendKind::gpu, BackendKind::npu};
constexpr roofline::Phase k_phases[] = {roofline::Phase::decode, roofline::Phase::prefill};

std::string kind_name(BackendKind k) { return k == BackendKind::cpu ? "cpu" : k == BackendKind::gpu ? "gpu" : "npu"; }
std::string phase_name(roofline::Phase p) { return p == roofline::Phase::decode ? "decode" : "prefill"; }

struct PointKey {
  BackendKind kind;
  roofline::Phase phase;
};
std::optional<PointKey> key_of(const calibration::ObservationSet& set, const PointResult& p) {
  const auto& o = set.observations()[p.observation];
  if (o.figure == Figure::memory) return std::nullopt;
  return PointKey{info(o.observation.config.backend).kind, o.figure == Figure::decode ? roofline::Phase::decode : roofline::Phase::prefill};
}

roofline::ErrorBand band_of(BackendKind kind, roofline::Phase phase, const std::vector<double>& ratios) {
  // The range holds its mid: a bias that puts 90% of measurements above the prediction widens
  // the high side and leaves the low at the prediction.
  return {kind, phase, std::min(quantile(ratios, 0.1), 1.0), std::max(quantile(ratios, 0.9), 1.0),
          std::uint32_t(ratios.size())};
}

}  // namespace

std::vector<roofline::ErrorBand> error_bands(const calibration::ObservationSet& set, const Report& held_out,
                                             const std::string& without_source) {
  std::map<std::pair<int, int>, std::vector<double>> ratios;
  for (const auto& p : held_out.points) {
    const auto key = key_of(set, p);
    if (!key || set.observations()[p.observation].source == without_source || !(p.predicted > 0)) continue;
    ratios[{int(key->kind), int(key->phase)}].push_back(p.measured / p.predicted);
  }
  std::vector<roofline::ErrorBand> out;
  for (auto kind : k_kinds)
    for (auto phase : k_phases)
      if (const auto& r = ratios[{int(kind), int(phase)}]; r.size() >= k_min_band_points) out.push_back(band_of(kind, phase, r));
  return out;
}

std::map<std::string, Coverage> coverage(const calibration::ObservationSet& set, const Report& held_out) {
  std::set<std::string> sources;
  for (const auto& p : held_out.points) sources.insert(set.observations()[p.observation].source);
  std::map<std::string, Coverage> out;
  for (const auto& source : sources) {
    roofline::DeratingTables bands;
    bands.error_bands = error_bands(set, held_out, source);
    for (const auto& p : held_out.points) {
      const auto key = key_of(set, p);
      if (!key || set.observations()[p.observation].source != source) continue;
      const auto* band = bands.error_band(key->kind, key->phase);
      if (!band) continue;
      const double r = p.measured / p.predicted;
      const bool inside = r >= band->low && r <= band->high;
      for (const auto& name : {kind_name(key->kind) + " " + phase_name(key->phase), "all " + phase_name(key->phase)}) {
        ++out[name].points;
        out[name].inside += inside;
      }
    }
  }
  return out;
}

}  // namespace trilemma::fidelity
