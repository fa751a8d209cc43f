// The picture of a gate run: budgets x models as a pass/fail grid, each cell with the figure
// that limits it and its margin (report/chart.hpp).
#pragma once
#include "gate/gate.hpp"
#include "report/plan_plots.hpp"

namespace trilemma::report {

// One cell per model x budget: pass (white) or fail (dark), the limiting figure and its margin
// ("decode_tok_s +12%"), "REGRESSED" where a figure regressed against the baseline.
Plot gate_grid_plot(const gate::Report& report);

}  // namespace trilemma::report
