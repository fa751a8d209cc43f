// The `trilemma.verify` document (docs/cli.md documents its schema): every point's
// configuration, measurement and checks, the summary per figure, and after a calibration the
// same points predicted again.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "devices/device.hpp"
#include "verify/verify.hpp"

namespace trilemma::verify {

struct ReportInputs {
  std::string model_id;
  devices::Device host;  // the profile the first predictions used (its calibration may be newer)
  bool profile_was_calibrated = false;
  Tolerances tol;
  std::vector<PointReport> reports;
  std::vector<PointReport> calibrated;  // empty without --calibrate
  bool with_calibration = false;
};

// All points (the calibrated ones when there are) within tolerance.
bool all_pass(const ReportInputs& in);
nlohmann::json report_json(const ReportInputs& in);

}  // namespace trilemma::verify
