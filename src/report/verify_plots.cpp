#include "report/verify_plots.hpp"

#include <algorithm>
#include <cmath>

#include "report/chart.hpp"

namespace trilemma::report {
namespace {

struct Figure {
  const char* name;   // the check's figure
  const char* label;  // axis label with unit
  double scale;       // check value -> axis unit
};
constexpr Figure k_figures[] = {
    {"decode_tok_s", "decode tok/s", 1.0},
    {"prefill_tok_s", "prefill tok/s", 1.0},
    {"ttft_ms", "TTFT, ms", 1.0},
    {"peak_memory_bytes", "peak memory, GiB", 1.0 / 1073741824.0},
};

std::vector<PredictedMeasured> of_figure(const std::vector<PredictedMeasured>& all, const Figure& f) {
  std::vector<PredictedMeasured> out;
  for (const auto& p : all)
    if (p.figure == f.name && p.measured > 0 && p.predicted > 0) out.push_back({p.figure, p.predicted * f.scale, p.measured * f.scale, p.tolerance, p.what});
  return out;
}

std::vector<PredictedMeasured> pairs_of(const std::vector<verify::PointReport>& reports) {
  std::vector<PredictedMeasured> out;
  for (const auto& r : reports)
    for (const auto& c : r.checks) out.push_back({c.figure, c.predicted, c.measured, c.tolerance, describe(r.point.config)});
  return out;
}

}  // namespace

std::vector<Plot> prediction_plots(const std::vector<PredictedMeasured>& all_before, const std::vector<PredictedMeasured>& all_after,
                                   const std::string& device) {
  std::vector<Plot> plots;
  for (const Figure& f : k_figures) {
    const auto before = of_figure(all_before, f), after = of_figure(all_after, f);
    if (before.empty() && after.empty()) continue;
    double lo = 1e300, hi = 0, tol = 0;
    for (const auto* set : {&before, &after})
      for (const auto& p : *set) lo = std::min({lo, p.measured, p.predicted}), hi = std::max({hi, p.measured, p.predicted}), tol = p.tolerance;
    lo /= 1.6, hi *= 1.6;
    Chart chart(std::string("Predicted against measured: ") + f.label, Axis{std::string("measured ") + f.label + " (log)", lo, hi, true, {}},
                Axis{std::string("predicted ") + f.label + " (log)", lo, hi, true, {}});
    chart.legend("roof-effective", "prediction = measurement");
    chart.legend("limit", "tolerance +-" + short_label(100 * tol) + "%");
    chart.legend("point", after.empty() ? "points" : "before calibration");
    if (!after.empty()) chart.legend("loss-high", "after calibration");
    chart.line(lo, lo, hi, hi, "roof-effective");
    chart.line(lo, lo * (1 + tol), hi / (1 + tol), hi, "limit");
    chart.line(lo / (1 - tol), lo, hi, hi * (1 - tol), "limit");
    auto tip = [](const PredictedMeasured& p) {
      return p.what + ": predicted " + short_label(p.predicted) + ", measured " + short_label(p.measured) + " (" +
             short_label(100 * (p.predicted - p.measured) / p.measured) + "%)";
    };
    for (const auto& p : before) chart.marker(p.measured, p.predicted, "point", tip(p));
    for (const auto& p : after) chart.marker(p.measured, p.predicted, "loss-high", tip(p));
    plots.push_back({std::string("predicted-") + f.name,
                     std::string("Each measurement's ") + f.label + " as the planner predicted it for " + device +
                         " (y) and as measured (x): on the diagonal a prediction is exact; between the dotted lines it is within tolerance." +
                         (after.empty() ? "" : " Filled points use the factors the calibration fitted."),
                     chart.svg()});
  }
  return plots;
}

std::vector<Plot> verify_plots(const verify::ReportInputs& in) {
  return prediction_plots(pairs_of(in.reports), pairs_of(in.calibrated), in.host.name);
}

std::vector<Plot> calibrate_plots(const verify::DeviceCalibration& fit, const std::string& device) {
  std::vector<PredictedMeasured> before, after;
  for (const auto& c : fit.checks) {
    const std::string what = c.point != nullptr ? c.point->label : c.before.figure;
    before.push_back({c.before.figure, c.before.predicted, c.before.measured, c.before.tolerance, what});
    after.push_back({c.after.figure, c.after.predicted, c.after.measured, c.after.tolerance, what});
  }
  return prediction_plots(before, after, device);
}

}  // namespace trilemma::report
