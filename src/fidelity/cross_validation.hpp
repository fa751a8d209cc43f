// How well trilemma predicts what its fit never saw: cross-validation over the published
// dataset, holding out one group of observations at a time and refitting everything a plan
// uses without it, then predicting the group:
//   device:  a device trilemma has no measurements of (the tables refitted without it);
//   source:  a page and all its rows (the tables refitted, and the page's devices recalibrated
//            on their other pages' rows, as plans on a calibrated device use them);
//   runtime: every row of one engine (llama.cpp, MLX, RKLLM, ...), likewise.
// Errors are (predicted - measured) / measured of decode tok/s, prefill tok/s and peak memory;
// each device's median absolute error counts once in the summary (device-weighted median and
// p90), whatever its number of rows.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "calibration/observations.hpp"
#include "fidelity/global_fit.hpp"

namespace trilemma::fidelity {

inline constexpr auto k_figures = std::to_array<calibration::Figure>({calibration::Figure::decode, calibration::Figure::prefill,
                                                                       calibration::Figure::memory});
static_assert(k_figures.size() == static_cast<std::size_t>(calibration::Figure::count), "one entry per Figure");
std::string figure_name(calibration::Figure figure);

enum class HoldOut { device, source, runtime, count };
std::string hold_out_name(HoldOut by);  // "leave-one-device-out", ...
std::optional<HoldOut> hold_out_from_key(const std::string& key);  // "device", "source", "runtime"

struct PointResult {
  std::size_t observation = 0;  // index into set.observations()
  double predicted = 0, measured = 0;  // tok/s (decode, prefill) or bytes
  double error = 0;                    // (predicted - measured) / measured
  double bytes_per_token = 0;          // decode: weights and KV read per token, as predicted
  bool calibrated = false;             // the device had a calibration of its own for the backend
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
  std::string method;  // hold_out_name() or "priors"
};

// Every group held out in turn (or only the group `only`, when not empty: a device id, a page's
// URL or an engine name); `threads` folds run at once.
Report hold_out(const calibration::ObservationSet& set, const roofline::DeratingTables& priors, HoldOut by,
                unsigned threads = 2, const std::string& only = "");
inline Report leave_one_device_out(const calibration::ObservationSet& set, const roofline::DeratingTables& priors,
                                   unsigned threads = 2, const std::string& only = "") {
  return hold_out(set, priors, HoldOut::device, threads, only);
}
// The tables as they are, no fit: what a plan for a device without data predicts today.
Report with_tables(const calibration::ObservationSet& set, const roofline::DeratingTables& tables);

}  // namespace trilemma::fidelity
