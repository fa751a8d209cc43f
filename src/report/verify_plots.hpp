// The pictures of a verify run: predicted against measured for each checked figure, one chart
// per figure, with the tolerance band, before and after calibration (report/chart.hpp).
#pragma once
#include <vector>

#include "report/plan_plots.hpp"
#include "verify/report_json.hpp"

namespace trilemma::report {

// One plot per figure the points check (decode_tok_s, ttft_ms, peak_memory_bytes), log-log:
// measured on x, predicted on y, the diagonal and the band of +-tolerance around it; points
// before calibration hollow, after it filled. None when there are no points.
std::vector<Plot> verify_plots(const verify::ReportInputs& report);

}  // namespace trilemma::report
