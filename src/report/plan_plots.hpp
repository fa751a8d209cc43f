// The pictures of a plan, as SVG (report/chart.hpp): where the chosen plan and the runners-up
// sit against the device's roofline, the trade-off between speed, memory and quality loss with
// the Pareto front and the scenario's limits, and each plan's memory against what the device
// lets one app use. Every figure drawn is one the planner computed (solver::Estimate) or one of
// the device file's sourced peaks.
#pragma once
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "solver/planner.hpp"
#include "solver/profile.hpp"

namespace trilemma::report {

struct Plot {
  std::string name;     // file stem: "roofline"
  std::string caption;  // one sentence: what it shows and how its figures were formed
  std::string svg;
};

// The scenario's limits with the user's budgets applied on top (the tighter of the two).
solver::Constraints effective_limits(const solver::Constraints& profile, const solver::Constraints& budgets);

// Roofline: arithmetic intensity (FLOP per byte read) against G(FL)OP/s, log-log. Roofs of the
// plan's backend: the published bandwidth times the intensity up to each compute path's peak;
// the planner's effective bandwidth and compute dashed. Points: the decode step and the prompt's
// prefill of the chosen plan (diamond) and the runners-up (circles).
Plot roofline_plot(const solver::PlanResult& result, const devices::Device& device);

// Trade-off: peak memory (GiB) against decode tok/s for the chosen plan, the runners-up and the
// Pareto front (joined), each point's quality loss in its label; the limits as dotted lines.
Plot tradeoff_plot(const solver::PlanResult& result, const solver::Constraints& limits);

// The triangle: every plan of the Pareto front and the runners-up placed by its three figures,
// each normalised to [0, 1] among them (speed: tok/s over the fastest; memory: the smallest peak
// over its own; accuracy: (1 + the least loss) over (1 + its loss)), as barycentric weights of
// the corners fast, small and accurate: a plan strong in one corner sits near it, a balanced one
// in the middle. Plans outside the scenario's limits are not drawn (the planner drops them).
Plot triangle_plot(const solver::PlanResult& result);

// Memory: one stacked bar per plan (weights, KV, scratch, runtime, draft) against the device's
// usable memory.
Plot memory_plot(const solver::PlanResult& result, const devices::Device& device);

// The four, for a plan that has a chosen configuration; none otherwise.
std::vector<Plot> plan_plots(const solver::PlanResult& result, const devices::Device& device, const solver::Constraints& limits);

}  // namespace trilemma::report
