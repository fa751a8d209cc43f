// The pictures of a verify or calibrate run: predicted against measured for each checked
// figure, one chart per figure, with the tolerance band, before and after calibration
// (report/chart.hpp).
#pragma once
#include <string>
#include <vector>

#include "report/plan_plots.hpp"
#include "verify/device_calibration.hpp"
#include "verify/report_json.hpp"

namespace trilemma::report {

// One figure of one measured point, as a plot takes it (values in the figure's own unit).
struct PredictedMeasured {
  std::string figure;  // decode_tok_s, prefill_tok_s, ttft_ms, peak_memory_bytes
  double predicted = 0, measured = 0, tolerance = 0;
  std::string what;    // the configuration or result it belongs to
};

// One plot per figure present, log-log: measured on x, predicted on y, the diagonal and the band
// of +-tolerance around it; `before` hollow, `after` (the calibrated predictions, may be empty)
// filled. `device` names what the predictions were made for. None when there are no pairs.
std::vector<Plot> prediction_plots(const std::vector<PredictedMeasured>& before, const std::vector<PredictedMeasured>& after,
                                   const std::string& device);

// verify's points (and with --calibrate, the calibrated ones).
std::vector<Plot> verify_plots(const verify::ReportInputs& report);
// calibrate's results before and after the fit.
std::vector<Plot> calibrate_plots(const verify::DeviceCalibration& fit, const std::string& device);

}  // namespace trilemma::report
