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
    {"ttft_ms", "TTFT, ms", 1.0},
    {"peak_memory_bytes", "peak memory, GiB", 1.0 / 1073741824.0},
};

// (measured, predicted, tolerance, point description) of one figure over `reports`.
struct Pair {
  double measured, predicted, tolerance;
  std::string what;
};
std::vector<Pair> pairs_of(const std::vector<verify::PointReport>& reports, const Figure& f) {
  std::vector<Pair> out;
  for (const auto& r : reports)
    for (const auto& c : r.checks)
      if (c.figure == f.name && c.measured > 0 && c.predicted > 0)
        out.push_back({c.measured * f.scale, c.predicted * f.scale, c.tolerance, describe(r.point.config)});
  return out;
}

}  // namespace

std::vector<Plot> verify_plots(const verify::ReportInputs& in) {
  std::vector<Plot> plots;
  for (const Figure& f : k_figures) {
    const auto before = pairs_of(in.reports, f), after = pairs_of(in.calibrated, f);
    if (before.empty() && after.empty()) continue;
    double lo = 1e300, hi = 0, tol = 0;
    for (const auto* set : {&before, &after})
      for (const auto& p : *set) lo = std::min({lo, p.measured, p.predicted}), hi = std::max({hi, p.measured, p.predicted}), tol = p.tolerance;
    lo /= 1.6, hi *= 1.6;
    Chart chart(std::string("Verify: ") + f.label + ", predicted against measured",
                Axis{std::string("measured ") + f.label + " (log)", lo, hi, true, {}},
                Axis{std::string("predicted ") + f.label + " (log)", lo, hi, true, {}});
    chart.legend("roof-effective", "prediction = measurement");
    chart.legend("limit", "tolerance +-" + short_label(100 * tol) + "%");
    chart.legend("point", in.with_calibration ? "before calibration" : "points");
    if (!after.empty()) chart.legend("loss-high", "after calibration");
    chart.line(lo, lo, hi, hi, "roof-effective");
    chart.line(lo, lo * (1 + tol), hi / (1 + tol), hi, "limit");
    chart.line(lo / (1 - tol), lo, hi, hi * (1 - tol), "limit");
    auto tip = [](const Pair& p) {
      return p.what + ": predicted " + short_label(p.predicted) + ", measured " + short_label(p.measured) + " (" +
             short_label(100 * (p.predicted - p.measured) / p.measured) + "%)";
    };
    for (const auto& p : before) chart.marker(p.measured, p.predicted, "point", tip(p));
    for (const auto& p : after) chart.marker(p.measured, p.predicted, "loss-high", tip(p));
    plots.push_back({std::string("verify-") + f.name,
                     std::string("Each configuration's ") + f.label + " as the planner predicted it for " + in.host.name +
                         " (y) and the engine measured it (x): on the "
                         "diagonal a prediction is exact; between the dotted lines it is within tolerance." +
                         (after.empty() ? "" : " Filled points use the factors the calibration fitted."),
                     chart.svg()});
  }
  return plots;
}

}  // namespace trilemma::report
