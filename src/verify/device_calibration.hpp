// `trilemma calibrate`'s fit: a device's efficiencies fitted to the results measured on it
// (ResultFiles), through the same fitter and predictor as `verify --calibrate` and `plan`, and
// every point checked against verify's tolerances before and after.
#pragma once
#include <string>
#include <vector>

#include "verify/result_files.hpp"
#include "verify/verify.hpp"

namespace trilemma::verify {

struct PointCheck {
  const ResultPoint* point = nullptr;  // into the ResultFiles
  FigureCheck before, after;
};

struct DeviceCalibration {
  devices::Device device;  // the input device with the fitted calibration block
  std::vector<PointCheck> checks;
  calibration::FitOptions options;  // what the points could tell apart, and so what was fitted
  bool pass() const;                // every point within tolerance after the fit
  // Points the fit moved far from their measurement (out of tolerance, and 20 points of error
  // worse than before): "q4_0.json:14 ... decode_tok_s: +4% before the fit, -88% after". The
  // points disagree: noisy runs, or a configuration the fitted factors cannot express.
  std::vector<std::string> worsened() const;
};

// What the points can tell apart: per-format fractions need two formats, attention needs
// results at two depths, a per-layer overhead needs models of different depths.
calibration::FitOptions fit_options_for(const std::vector<ResultPoint>& points);

// `fitted_on` says what and when ("llama-bench on ... , 2026-12-01"). Fails when no point can be
// predicted on `device` (a backend it does not list, a format no path runs).
Result<DeviceCalibration> calibrate_device(const devices::Device& device, const ResultFiles& results, const Tolerances& tol,
                                           const std::string& fitted_on);

}  // namespace trilemma::verify
