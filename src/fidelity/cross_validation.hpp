// How well trilemma predicts a device it has no measurements of: leave-one-device-out
// cross-validation over the published dataset. For each device, every fitted constant (the
// derating tables of global_fit) is refitted on the other devices' observations, then the
// device's own observations are predicted. Errors are (predicted - measured) / measured of
// decode tok/s, prefill tok/s and peak memory; each device's median absolute error counts
// once in the summary (device-weighted median and p90), whatever its number of rows.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "calibration/observations.hpp"
#include "fidelity/global_fit.hpp"

namespace trilemma::fidelity {

inline constexpr auto k_figures = std::to_array<calibration::Figure>({calibration::Figure::decode, calibration::Figure::prefill,
                                                                       calibration::Figure::memory});
static_assert(k_figures.size() == static_cast<std::size_t>(calibration::Figure::count), "one entry per Figure");
std::string figure_name(calibration::Figure figure);

struct PointResult {
  std::size_t observation = 0;  // index into set.observations()
  double predicted = 0, measured = 0;  // tok/s (decode, prefill) or bytes
  double error = 0;                    // (predicted - measured) / measured
  double bytes_per_token = 0;          // decode: weights and KV read per token, as predicted
};

struct DeviceResult {
  std::string device;
  std::array<std::vector<double>, static_cast<std::size_t>(calibration::Figure::count)> errors;  // per figure, signed
  double median_abs(calibration::Figure f) const;
};

struct FigureSummary {
  int devices = 0, points = 0;
  double median = 0, p90 = 0;  // of the per-device median absolute errors
  double bias = 0;             // median of the per-device median signed errors
};

struct Report {
  std::vector<DeviceResult> devices;
  std::array<FigureSummary, static_cast<std::size_t>(calibration::Figure::count)> figures;  // indexed by Figure
  std::vector<PointResult> points;
  std::string method;  // "leave-one-device-out" or "priors"
};

// Every device held out in turn (or only `only`, when not empty); `threads` folds run at once.
Report leave_one_device_out(const calibration::ObservationSet& set, const roofline::DeratingTables& priors,
                            unsigned threads = 2, const std::string& only = "");
// The tables as they are, no fit: what a plan for a device without data predicts today.
Report with_tables(const calibration::ObservationSet& set, const roofline::DeratingTables& tables);

}  // namespace trilemma::fidelity
