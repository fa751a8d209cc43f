#include "report/gate_plots.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "report/chart.hpp"

namespace trilemma::report {
namespace {

std::string margin_text(const gate::Outcome& o) {
  if (!o.limiting) return o.pass ? "pass" : "FAIL";
  std::string s = o.limiting->figure;
  if (o.limiting->margin_pct) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " %+.0f%%", *o.limiting->margin_pct);
    s += buf;
  }
  return s;
}

}  // namespace

Plot gate_grid_plot(const gate::Report& r) {
  std::vector<std::string> budgets;
  for (const auto& o : r.outcomes)
    if (std::find(budgets.begin(), budgets.end(), o.budget) == budgets.end()) budgets.push_back(o.budget);
  std::vector<std::string> rows(budgets.rbegin(), budgets.rend());  // the file's first budget on top
  const int width = std::max(520, 220 + 170 * int(r.models.size())), height = std::max(240, 130 + 44 * int(budgets.size()));
  Chart chart("Gate: " + std::filesystem::path(r.budgets_file).filename().string() + ", " + std::to_string(r.outcomes.size() - r.failed()) + " of " +
                  std::to_string(r.outcomes.size()) + " pass",
              Axis{"model", 0, double(r.models.size()), false, r.models}, Axis{"", 0, double(budgets.size()), false, rows}, width, height);
  chart.legend("pass", "pass");
  chart.legend("fail", "fail (or regressed)");
  for (const auto& o : r.outcomes) {
    const double x = double(std::find(r.models.begin(), r.models.end(), o.model) - r.models.begin());
    const double y = double(rows.size() - 1) - double(std::find(budgets.begin(), budgets.end(), o.budget) - budgets.begin());
    const bool ok = o.pass && o.regressions.empty();
    chart.rect(x + 0.04, y + 0.08, x + 0.96, y + 0.92, ok ? "pass" : "fail", o.model + " x " + o.budget + ": " + o.message);
    const std::string cls = ok ? "note" : "note-inverse";
    chart.text(x + 0.5, y + 0.5, ok ? "pass" : (o.pass ? "REGRESSED" : "FAIL"), cls, "middle", 0, -3);
    chart.text(x + 0.5, y + 0.5, margin_text(o), cls, "middle", 0, 12);
  }
  return {"gate",
          "Each model against each budget: white cells pass, dark ones fail or regressed against the baseline; the second line is the "
          "figure with the smallest margin to its limit (positive: slack, negative: by how much it misses), as the text report says.",
          chart.svg()};
}

}  // namespace trilemma::report
