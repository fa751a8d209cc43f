#include "report/plan_plots.hpp"

#include <algorithm>
#include <cmath>

#include "report/chart.hpp"
#include "types/number_text.hpp"

namespace trilemma::report {
namespace {


// The chosen plan first, then the runners-up: the plans each plot compares.
std::vector<const solver::Candidate*> compared(const solver::PlanResult& r) {
  std::vector<const solver::Candidate*> out;
  if (r.chosen) out.push_back(&*r.chosen);
  for (const auto& c : r.runners_up) out.push_back(&c);
  return out;
}

std::string short_config(const solver::Candidate& c) { return describe(c.config); }

// The compared plans and the Pareto front: what the triangle and the trade-off place.
std::vector<const solver::Candidate*> compared_and_front(const solver::PlanResult& r) {
  std::vector<const solver::Candidate*> out = compared(r);
  for (const auto& c : r.front) out.push_back(&c);
  return out;
}

// A quality loss as the plots label it: points lost, to one decimal. The accuracy model's
// scatter around zero (a loss of -0.009) is no measurable loss, not a gain to three digits.
std::string loss_text(double points) {
  if (points < 0.05) return "< 0.1 points lost";
  return fixed(points, 1) + " points lost";
}

bool breaks_scenario(const solver::Candidate& c) { return !c.violations.empty(); }

// A point's tooltip: its configuration, its three figures and the scenario limits it breaks.
std::string figures_tip(const solver::Candidate& c) {
  std::string tip = short_config(c) + ": " + short_label(c.tok_s()) + " tok/s, " + short_label(c.memory_gib()) + " GiB, " +
                    loss_text(c.loss_points());
  for (std::size_t i = 0; i < c.violations.size(); ++i) tip += (i ? "; " : "; breaks ") + c.violations[i].text();
  return tip;
}

// A front plan's third figure, quality loss, as its marker's shade; a plan that breaks a
// scenario limit is drawn apart from the plans the scenario allows, whatever its loss.
std::string loss_class(const solver::Candidate& c) {
  if (breaks_scenario(c)) return "breaks-limit";
  return c.loss_points() <= 1 ? "loss-low" : c.loss_points() <= 5 ? "loss-mid" : "loss-high";
}

// The legend of the plots that place the front by loss shade.
void front_legend(Chart& chart, const solver::PlanResult& r) {
  chart.legend("chosen", "chosen plan");
  chart.legend("loss-low", "Pareto front, <= 1 point lost");
  chart.legend("loss-mid", "1-5 points lost");
  chart.legend("loss-high", "> 5 points lost");
  if (std::any_of(r.front.begin(), r.front.end(), breaks_scenario)) chart.legend("breaks-limit", "breaks a scenario limit");
  chart.legend("point", "runners-up");
}

// Decode: one token's FLOPs over the bytes it reads. Prefill: the prompt's FLOPs over one pass
// of the same bytes (the weights are read once per prompt chunk), an upper bound on intensity.
struct Operating {
  double decode_ai, decode_gflops, prefill_ai, prefill_gflops;
};
Operating operating_points(const solver::Candidate& c, std::uint32_t prompt) {
  const auto& l = c.estimate.latency;
  const double bytes = std::max(l.bytes_per_token, 1.0);
  const double per_prompt_token = prompt > 0 ? l.prefill_flops / prompt : l.flops_per_token;
  return {l.flops_per_token / bytes, l.decode_tok_s.mid * l.flops_per_token / 1e9, l.prefill_flops / bytes,
          l.prefill_tok_s.mid * per_prompt_token / 1e9};
}

}  // namespace

solver::Constraints effective_limits(const solver::Constraints& p, const solver::Constraints& b) {
  auto lower = [](std::optional<double> x, std::optional<double> y) -> std::optional<double> {
    if (!x) return y;
    if (!y) return x;
    return std::min(*x, *y);
  };
  auto higher = [](std::optional<double> x, std::optional<double> y) -> std::optional<double> {
    if (!x) return y;
    if (!y) return x;
    return std::max(*x, *y);
  };
  solver::Constraints c = p;
  c.max_ttft_ms = lower(p.max_ttft_ms, b.max_ttft_ms);
  c.max_memory_gib = lower(p.max_memory_gib, b.max_memory_gib);
  c.max_loss_points = lower(p.max_loss_points, b.max_loss_points);
  c.min_decode_tok_s = higher(p.min_decode_tok_s, b.min_decode_tok_s);
  return c;
}

Plot roofline_plot(const solver::PlanResult& r, const devices::Device& d) {
  const auto plans = compared(r);
  const auto& chosen = *plans.front();
  const auto& backend = info(chosen.config.backend);
  // The backend's paths with a peak on this device, each with its roof.
  std::vector<std::pair<std::string, double>> roofs;
  for (const auto* paths : {&backend.fp32_paths, &backend.half_paths, &backend.integer_paths})
    for (ComputePath p : *paths) {
      const auto peak = d.peak_gops(p, chosen.config.threads);
      const std::string name(info(p).name);
      if (peak && *peak > 0 && std::none_of(roofs.begin(), roofs.end(), [&](const auto& x) { return x.first == name; }))
        roofs.emplace_back(name, *peak);
    }
  double y_max = 1, y_min = 1e30, x_max = 100;
  for (const auto& [name, peak] : roofs) y_max = std::max(y_max, peak);
  for (const auto* c : plans) {
    const Operating o = operating_points(*c, r.prompt);
    y_min = std::min({y_min, o.decode_gflops, o.prefill_gflops});
    y_max = std::max({y_max, o.decode_gflops, o.prefill_gflops});
    x_max = std::max(x_max, o.prefill_ai);
  }
  const double bw = d.peak_bandwidth_gbps;
  const double x_min = 0.1;
  y_min = std::max(1e-3, std::min(y_min, bw * x_min) / 2);
  Chart chart("Roofline: " + d.name + ", " + std::string(backend.name) + " backend",
              Axis{"arithmetic intensity, FLOP per byte read (log)", x_min, x_max * 4, true, {}},
              Axis{"G(FL)OP/s (log)", y_min, y_max * 3, true, {}});
  chart.legend("roof", "published bandwidth x intensity, up to each path's peak");
  chart.legend("roof-effective", "the plan's effective bandwidth and compute");
  chart.legend("chosen", "chosen plan");
  chart.legend("point", "runners-up");
  // Paths with the same peak share one roof and one label.
  std::vector<std::pair<double, std::string>> ceilings;
  for (const auto& roof : roofs) {
    const double peak = roof.second;
    auto same = std::find_if(ceilings.begin(), ceilings.end(), [peak](const auto& c) { return std::fabs(c.first - peak) <= 1e-6 * peak; });
    if (same == ceilings.end()) ceilings.emplace_back(peak, roof.first);
    else same->second += ", " + roof.first;
  }
  for (const auto& [peak, names] : ceilings) {
    chart.polyline({{x_min, bw * x_min}, {peak / bw, peak}, {x_max * 4, peak}}, "roof", names + ": " + short_label(peak) + " G(FL)OP/s peak");
    chart.text(x_max * 4, peak, names + " " + short_label(peak), "note", "end", -4, -5);
  }
  const auto& l = chosen.estimate.latency;
  if (l.effective_bandwidth_gbps > 0 && l.effective_compute_gflops > 0) {
    const double ridge = l.effective_compute_gflops / l.effective_bandwidth_gbps;
    chart.polyline({{x_min, l.effective_bandwidth_gbps * x_min}, {ridge, l.effective_compute_gflops}, {x_max * 4, l.effective_compute_gflops}},
                   "roof-effective", "effective: " + short_label(l.effective_bandwidth_gbps) + " GB/s, " +
                                         short_label(l.effective_compute_gflops) + " GFLOP/s (" + l.compute_path + ")");
  }
  chart.text(x_min, bw * x_min, short_label(bw) + " GB/s published", "note", "start", 6, -10);
  for (std::size_t i = plans.size(); i-- > 0;) {  // the chosen plan drawn last, on top
    const Operating o = operating_points(*plans[i], r.prompt);
    const std::string cls = i == 0 ? "chosen" : "point";
    chart.marker(o.decode_ai, o.decode_gflops, cls, "decode: " + short_config(*plans[i]));
    chart.marker(o.prefill_ai, o.prefill_gflops, cls, "prefill of " + std::to_string(r.prompt) + " tokens: " + short_config(*plans[i]));
    if (i == 0) {
      chart.text(o.decode_ai, o.decode_gflops, "decode", "note", "start", 12, 4);
      chart.text(o.prefill_ai, o.prefill_gflops, "prefill", "note", "end", -12, 16);
    }
  }
  return {"roofline",
          "Where the plans run against the device's roofs: decode streams every active weight per token (low intensity, under the "
          "bandwidth roof); the prompt's prefill reuses each weight for every prompt token (high intensity, under a compute "
          "roof). Intensity = the planner's FLOPs over the bytes read per token; prefill's assumes one pass over them.",
          chart.svg()};
}

Plot tradeoff_plot(const solver::PlanResult& r, const solver::Constraints& limits) {
  const auto all = compared_and_front(r);
  double mem_max = 0.5, tok_max = 1;
  for (const auto* c : all) mem_max = std::max(mem_max, c->memory_gib()), tok_max = std::max(tok_max, c->tok_s());
  if (limits.max_memory_gib) mem_max = std::max(mem_max, *limits.max_memory_gib);
  if (limits.min_decode_tok_s) tok_max = std::max(tok_max, *limits.min_decode_tok_s);
  Chart chart("Trade-off: speed, memory and quality loss", Axis{"peak memory, GiB", 0, mem_max * 1.15, false, {}},
              Axis{"decode tok/s (end of context)", 0, tok_max * 1.15, false, {}});
  front_legend(chart, r);
  chart.legend("limit", "scenario limits");
  if (limits.max_memory_gib) {
    chart.line(*limits.max_memory_gib, 0, *limits.max_memory_gib, tok_max * 1.15, "limit");
    chart.text(*limits.max_memory_gib, tok_max * 1.15, "max " + short_label(*limits.max_memory_gib) + " GiB", "note", "end", -4, 14);
  }
  if (limits.min_decode_tok_s) {
    chart.line(0, *limits.min_decode_tok_s, mem_max * 1.15, *limits.min_decode_tok_s, "limit");
    chart.text(mem_max * 1.15, *limits.min_decode_tok_s, "min " + short_label(*limits.min_decode_tok_s) + " tok/s", "note", "end", -4, -5);
  }
  for (const auto& c : r.front) chart.marker(c.memory_gib(), c.tok_s(), loss_class(c), figures_tip(c));
  for (const auto& c : r.runners_up) chart.marker(c.memory_gib(), c.tok_s(), "point", figures_tip(c));
  if (r.chosen) {
    const auto& c = *r.chosen;
    chart.marker(c.memory_gib(), c.tok_s(), "chosen", figures_tip(c));
    chart.text(c.memory_gib(), c.tok_s(), "chosen: " + loss_text(c.loss_points()) + ", gives up " + r.gives_up, "note", "start", 16, -12);
  }
  std::string caption = "Each plan on the Pareto front of speed, memory and quality loss, by its peak memory and decode speed, "
                        "shaded by the quality it loses (hover a point for its configuration). ";
  if (std::any_of(r.front.begin(), r.front.end(), breaks_scenario))
    caption += "Dashed hollow circles are front plans that break a scenario limit (hover one for which). ";
  if (limits.max_loss_points) caption += "The quality limit is " + short_label(*limits.max_loss_points) + " points lost; ";
  if (limits.max_ttft_ms) caption += "the TTFT limit is " + short_label(*limits.max_ttft_ms) + " ms. ";
  caption += "The chosen plan gives up " + r.gives_up + " (the founding note's thresholds: TTFT < 100 ms and > 20 tok/s, <= 4 GiB, <= 1 point).";
  return {"tradeoff", caption, chart.svg()};
}

Plot triangle_plot(const solver::PlanResult& r) {
  const auto plans = compared_and_front(r);
  double fastest = 0, smallest = 1e300, least_loss = 1e300;
  for (const auto* c : plans) {
    fastest = std::max(fastest, c->tok_s());
    smallest = std::min(smallest, c->memory_gib());
    least_loss = std::min(least_loss, std::max(0.0, c->loss_points()));
  }
  // Corners in a unit square: fast at the top, small bottom left, accurate bottom right.
  const std::pair<double, double> fast{0.5, 0.95}, small{0.04, 0.05}, accurate{0.96, 0.05};
  auto place = [&](const solver::Candidate& c) {
    const double s = fastest > 0 ? c.tok_s() / fastest : 0, m = c.memory_gib() > 0 ? smallest / c.memory_gib() : 0,
                 a = (1 + least_loss) / (1 + std::max(0.0, c.loss_points()));
    const double sum = std::max(s + m + a, 1e-12);
    return std::pair{(s * fast.first + m * small.first + a * accurate.first) / sum, (s * fast.second + m * small.second + a * accurate.second) / sum};
  };
  Chart chart("The triangle: which corner each plan leans to", Axis{"", 0, 1, false, {}}, Axis{"", 0, 1, false, {}}, 640, 520);
  chart.hide_axes();
  front_legend(chart, r);
  chart.polyline({fast, small, accurate, fast}, "roof");
  chart.text(fast.first, fast.second, "fast: " + short_label(fastest) + " tok/s", "axis-label", "middle", 0, -8);
  chart.text(small.first, small.second, "small: " + short_label(smallest) + " GiB", "axis-label", "start", 0, 20);
  chart.text(accurate.first, accurate.second, "accurate: " + loss_text(least_loss), "axis-label", "end", 0, 20);
  for (const auto& c : r.front) {
    const auto [x, y] = place(c);
    chart.marker(x, y, loss_class(c), figures_tip(c));
  }
  for (const auto& c : r.runners_up) {
    const auto [x, y] = place(c);
    chart.marker(x, y, "point", figures_tip(c));
  }
  if (r.chosen) {
    const auto [x, y] = place(*r.chosen);
    chart.marker(x, y, "chosen", figures_tip(*r.chosen));
    chart.text(x, y, "chosen: gives up " + r.gives_up, "note", "start", 16, 4);
  }
  return {"triangle",
          "The impossible triangle: each plan's decode speed, peak memory and quality loss, normalised among the plans shown "
          "(1 = the best of them), weight the corners; no plan reaches a corner in all three. Front plans that break a scenario "
          "limit are dashed hollow circles; the chosen plan and the runners-up meet every limit.",
          chart.svg()};
}

Plot memory_plot(const solver::PlanResult& r, const devices::Device& d) {
  const auto plans = compared(r);
  std::vector<std::string> names;
  double x_max = 0.5;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& c = plans[i]->config;
    names.push_back((i == 0 ? "chosen: " : "runner-up " + std::to_string(i) + ": ") + std::string(info(c.weights).name) + ", kv " +
                    std::string(info(c.kv_type).name) + ", " + std::string(info(c.backend).name));
    x_max = std::max({x_max, plans[i]->estimate.memory.total_bytes / k_gib, plans[i]->estimate.memory.usable_bytes / k_gib});
  }
  std::reverse(names.begin(), names.end());  // the chosen plan on top
  Chart chart("Memory: each plan against what " + d.name + " lets one app use", Axis{"GiB", 0, x_max * 1.1, false, {}},
              Axis{"", 0, double(plans.size()), false, names});
  const char* parts[] = {"weights", "KV cache", "scratch", "runtime", "draft"};
  for (int k = 0; k < 5; ++k) chart.legend("bar-" + std::to_string(k), parts[k]);
  chart.legend("capacity", "usable memory");
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& m = plans[i]->estimate.memory;
    const double row = double(plans.size() - 1 - i);
    const double sizes[] = {m.weights_bytes, m.kv_bytes, m.scratch_bytes, m.runtime_bytes, m.draft_bytes};
    double at = 0;
    for (int k = 0; k < 5; ++k) {
      if (sizes[k] <= 0) continue;
      const double w = sizes[k] / k_gib;
      chart.rect(at, row + 0.2, at + w, row + 0.8, "bar-" + std::to_string(k), std::string(parts[k]) + ": " + short_label(w) + " GiB");
      at += w;
    }
    chart.text(at + x_max * 0.01, row + 0.45, short_label(m.total_bytes / k_gib) + " GiB", "note");
  }
  const double usable = plans.front()->estimate.memory.usable_bytes / k_gib;
  chart.line(usable, 0, usable, double(plans.size()), "capacity", "usable: " + short_label(usable) + " GiB");
  chart.text(usable, double(plans.size()), "usable " + short_label(usable) + " GiB", "note", "end", -4, 14);
  return {"memory",
          "Peak resident memory per plan, by part, as the planner's memory model adds it up; the dashed line is the device's RAM less "
          "the OS reserve (" + short_label(usable) + " GiB).",
          chart.svg()};
}

std::vector<Plot> plan_plots(const solver::PlanResult& r, const devices::Device& d, const solver::Constraints& limits) {
  if (!r.chosen) return {};
  return {roofline_plot(r, d), triangle_plot(r), tradeoff_plot(r, limits), memory_plot(r, d)};
}

}  // namespace trilemma::report
