#include "gate/gate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

#include "io/json_text.hpp"
#include "solver/limits.hpp"
#include "types/table_order.hpp"
#include "types/number_text.hpp"

namespace trilemma::gate {
namespace {

using nlohmann::json;

// name, unit, budget key, higher is better, decimals, noise (absolute, in the unit)
constexpr std::array k_figures = {
    FigureInfo{Figure::decode_tok_s, "decode_tok_s", "tok/s", "min_decode_tok_s", true, 1, 0.05},
    FigureInfo{Figure::ttft_ms, "ttft_ms", "ms", "max_ttft_ms", false, 0, 0.5},
    FigureInfo{Figure::memory_gib, "memory_gib", "GiB", "max_memory_gib", false, 2, 0.005},
    FigureInfo{Figure::loss_points, "loss_points", "points", "max_loss_points", false, 2, 0.05},
    FigureInfo{Figure::kld, "kld", "", "max_kld", false, 4, 0.0005},
    FigureInfo{Figure::joules_per_token, "joules_per_token", "J/token", "max_joules_per_token", false, 3, 0.0005},
};
static_assert(k_figures.size() == static_cast<std::size_t>(Figure::count), "one row per Figure");
static_assert(rows_in_enum_order(k_figures, &FigureInfo::figure), "figure table must list figures in enum order");


std::string with_unit(Figure f, double v) {
  const auto& i = info(f);
  if (!std::isfinite(v)) return "unknown";  // energy without a power figure for the device
  return fixed(v, i.digits) + (i.unit.empty() ? "" : " " + std::string(i.unit));
}

Figures figures_of(const solver::Candidate& c) {
  Figures f;
  f[Figure::decode_tok_s] = c.tok_s();
  f[Figure::ttft_ms] = c.ttft_ms();
  f[Figure::memory_gib] = c.memory_gib();
  f[Figure::loss_points] = c.loss_points();
  f[Figure::kld] = c.estimate.accuracy.kld.mid;
  f[Figure::joules_per_token] = c.joules_per_token();  // +infinity without a power figure: fails a limit
  return f;
}

std::optional<double> limit_of(const Limits& l, Figure f) {
  switch (f) {
    case Figure::decode_tok_s: return l.min_decode_tok_s;
    case Figure::ttft_ms: return l.max_ttft_ms;
    case Figure::memory_gib: return l.max_memory_gib;
    case Figure::loss_points: return l.max_loss_points;
    case Figure::kld: return l.max_kld;
    case Figure::joules_per_token: return l.max_joules_per_token;
    case Figure::count: break;
  }
  return std::nullopt;
}

std::vector<Check> checks_of(const Figures& values, const Limits& limits) {
  std::vector<Check> out;
  for (const auto& fi : k_figures) {
    const auto limit = limit_of(limits, fi.figure);
    if (!limit) continue;
    Check c{fi.figure, *limit, values[fi.figure]};
    c.margin_pct = (fi.higher_is_better ? c.value - c.limit : c.limit - c.value) / c.limit * 100.0;
    c.pass = c.margin_pct >= 0;
    out.push_back(c);
  }
  return out;
}

const Check* tightest(const std::vector<Check>& checks) {
  const Check* t = nullptr;
  for (const auto& c : checks)
    if (!t || c.margin_pct < t->margin_pct) t = &c;
  return t;
}

bool all_pass(const std::vector<Check>& checks) {
  return std::all_of(checks.begin(), checks.end(), [](const Check& c) { return c.pass; });
}

std::string check_text(const Check& c) {
  const auto& i = info(c.figure);
  const char* op = c.pass ? (i.higher_is_better ? " >= " : " <= ") : (i.higher_is_better ? " < " : " > ");
  return std::string(i.limit) + ": " + with_unit(c.figure, c.value) + op + with_unit(c.figure, c.limit) + " (margin " +
         (std::isfinite(c.margin_pct) ? fixed(c.margin_pct, 1) + "%" : std::string("unknown")) + ")";
}

Limiting limiting_of(const Check& c) {
  return {std::string(info(c.figure).name), c.limit, c.value, c.margin_pct, check_text(c)};
}

void set_plan(Outcome& o, const solver::Candidate& c, const Limits& limits) {
  o.has_plan = true;
  o.plan_summary = describe(c.config);
  o.config = solver::config_to_json(c.config);
  o.weights = std::string(info(c.config.weights).name);
  o.figures = figures_of(c);
  o.checks = checks_of(o.figures, limits);
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : sep) + p;
  return s;
}

}  // namespace

std::span<const FigureInfo> figures() { return k_figures; }
const FigureInfo& info(Figure f) { return k_figures[static_cast<std::size_t>(f)]; }

std::size_t Report::failed() const {
  return static_cast<std::size_t>(std::count_if(outcomes.begin(), outcomes.end(), [](const Outcome& o) { return !o.pass; }));
}
std::size_t Report::regressions() const {
  std::size_t n = 0;
  for (const auto& o : outcomes) n += o.regressions.size();
  return n;
}

void apply_measurement(Outcome& o, const Limits& limits, double decode_tok_s, double ttft_ms, double memory_gib,
                       const std::string& note) {
  o.figures[Figure::decode_tok_s] = decode_tok_s;
  o.figures[Figure::ttft_ms] = ttft_ms;
  o.figures[Figure::memory_gib] = memory_gib;
  o.checks = checks_of(o.figures, limits);
  o.pass = all_pass(o.checks);
  o.limiting.reset();
  if (const Check* t = tightest(o.checks)) o.limiting = limiting_of(*t);
  o.message = std::string(o.pass ? "passes on " : "misses on ") + o.plan_summary + " as measured (" + note + ")" +
              (o.limiting ? "; limiting " + o.limiting->message : "");
}

Result<Outcome> evaluate(const models::Model& model, const Budget& budget, const std::vector<models::Model>& catalog,
                         bool engine_formats_only) {
  Outcome o;
  o.model = model.id;
  o.budget = budget.name;
  o.device = budget.device;
  o.scenario = budget.profile.id;
  o.context = budget.context;
  o.line = budget.line;

  // The budget's weight range narrows the scenario's allowed list (the planner would replace it).
  std::vector<std::string> allowed = budget.weight_formats;
  const auto& scenario_allowed = budget.profile.constraints.allowed_weights;
  if (!allowed.empty() && !scenario_allowed.empty()) {
    std::erase_if(allowed, [&](const std::string& w) {
      return std::find(scenario_allowed.begin(), scenario_allowed.end(), w) == scenario_allowed.end();
    });
    if (allowed.empty()) {
      o.message = "no weight format is both in the budget's range (" + join(budget.weight_formats, ", ") +
                  ") and allowed by scenario " + o.scenario + " (" + join(scenario_allowed, ", ") + ")";
      o.limiting = Limiting{"weights", std::nullopt, std::nullopt, std::nullopt, o.message};
      return o;
    }
  }

  if (engine_formats_only) {
    std::vector<std::string> runnable;
    for (const auto& row : weight_formats())
      if (row.engine_type) runnable.emplace_back(row.name);
    if (allowed.empty()) allowed = scenario_allowed.empty() ? runnable : scenario_allowed;
    std::erase_if(allowed, [&](const std::string& w) { return std::find(runnable.begin(), runnable.end(), w) == runnable.end(); });
    if (allowed.empty()) {
      o.message = "--verify: none of the allowed weight formats runs in trilemma's engine (" + join(runnable, ", ") + ")";
      o.limiting = Limiting{"weights", std::nullopt, std::nullopt, std::nullopt, o.message};
      return o;
    }
  }

  solver::PlanRequest req;
  req.model = &model;
  req.device = &budget.resolved_device;
  req.profile = budget.profile;
  req.context = budget.context;
  req.prompt = budget.prompt;
  req.budgets.min_decode_tok_s = budget.limits.min_decode_tok_s;
  req.budgets.max_ttft_ms = budget.limits.max_ttft_ms;
  req.budgets.max_memory_gib = budget.limits.max_memory_gib;
  req.budgets.max_loss_points = budget.limits.max_loss_points;
  req.budgets.max_joules_per_token = budget.limits.max_joules_per_token;
  req.budgets.allowed_weights = allowed;
  req.catalog = &catalog;
  if (engine_formats_only) req.pins.imatrix = false;  // the engine's quantizers take no importance matrix
  auto result = solver::plan(req);
  if (!result.ok()) {
    if (result.error().kind != ErrorKind::infeasible) return result.error();
    o.message = result.error().message;  // e.g. the context exceeds the model's trained context
    o.limiting = Limiting{"context", std::nullopt, std::nullopt, std::nullopt, o.message};
    return o;
  }
  const auto& r = *result;

  // The first plan in the planner's order that meets every limit (max_kld is checked here only).
  std::vector<const solver::Candidate*> order;
  if (r.chosen) order.push_back(&*r.chosen);
  for (const auto& c : r.runners_up) order.push_back(&c);
  for (const auto& c : r.front)
    if (c.violations.empty()) order.push_back(&c);
  for (const auto* c : order) {
    if (!all_pass(checks_of(figures_of(*c), budget.limits))) continue;
    o.pass = true;
    set_plan(o, *c, budget.limits);
    o.limiting = limiting_of(*tightest(o.checks));
    o.message = "passes on " + o.plan_summary + "; limiting " + o.limiting->message;
    return o;
  }

  // Fails: report the nearest attempt: the chosen plan, else the plan (a relaxation's, or one
  // on the Pareto front of device-feasible plans) whose worst margin is the largest.
  const solver::Candidate* attempt = r.chosen ? &*r.chosen : nullptr;
  if (!attempt) {
    std::vector<const solver::Candidate*> pool;
    for (const auto& x : r.relaxations)
      if (x.plan) pool.push_back(&*x.plan);
    for (const auto& c : r.front) pool.push_back(&c);
    double best = -std::numeric_limits<double>::infinity();
    for (const auto* c : pool) {
      const auto checks = checks_of(figures_of(*c), budget.limits);
      const double worst = checks.empty() ? 0 : tightest(checks)->margin_pct;
      if (!attempt || worst > best) best = worst, attempt = c;
    }
  }
  std::vector<std::string> why;
  for (const auto& x : r.relaxations) why.push_back(x.message);
  if (attempt) {
    set_plan(o, *attempt, budget.limits);
    const Check* t = tightest(o.checks);
    if (t && !t->pass) o.limiting = limiting_of(*t);
    // It meets the budget's own limits but not the scenario's: the scenario limit it misses by
    // the most, with its margin, as a budget limit's would be shown.
    if (!o.limiting)
      if (const auto miss = solver::worst_miss(budget.profile.constraints, *attempt)) {
        const std::string name(miss->limit->name), unit(miss->limit->unit);
        o.limiting = Limiting{name, miss->bound, miss->value, miss->margin_pct,
                              "scenario " + o.scenario + " " + name + ": " + fixed(miss->value, 2) + " " + unit +
                                  (miss->limit->upper ? " > " : " < ") + fixed(miss->bound, 2) + " " + unit + " (margin " +
                                  fixed(miss->margin_pct, 1) + "%)"};
      }
  }
  if (!o.limiting && !r.relaxations.empty())
    o.limiting = Limiting{r.relaxations.front().constraint, std::nullopt, std::nullopt, std::nullopt, r.relaxations.front().message};
  if (r.chosen) {
    o.message = "the chosen plan " + o.plan_summary + " misses " + (o.limiting ? o.limiting->message : "a limit");
  } else {
    o.message = "no configuration meets the budget under scenario " + o.scenario;
    if (!why.empty()) o.message += ": " + join(why, "; ");
  }
  if (!o.limiting) o.limiting = Limiting{"plan", std::nullopt, std::nullopt, std::nullopt, o.message};
  return o;
}

Status compare_with_baseline(Report& report, const std::string& text, const std::string& file) {
  auto bad = [&](const std::string& where, const std::string& message) {
    return make_error(ErrorKind::input, file, where, message);
  };
  TRILEMMA_TRY(j, io::parse_json(text, file));
  if (!j.is_object() || !j.contains("schema") || j["schema"] != "trilemma.gate")
    return bad("schema", "not a trilemma gate report (expected \"schema\": \"trilemma.gate\", from `gate --json`)");
  if (!j.contains("results") || !j["results"].is_array()) return bad("results", "missing or not a list");
  report.baseline = file;
  const auto& rows = j["results"];
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string at = "results[" + std::to_string(i) + "]";
    const auto& row = rows[i];
    if (!row.is_object() || !row.contains("model") || !row["model"].is_string() || !row.contains("budget") ||
        !row["budget"].is_string())
      return bad(at, "expected an object with \"model\" and \"budget\"");
    if (row.contains("status") && !row["status"].is_string()) return bad(at + ".status", "expected \"pass\" or \"fail\"");
    if (row.contains("figures") && !row["figures"].is_null() && !row["figures"].is_object())
      return bad(at + ".figures", "expected an object or null");
    // Each figure a number in its physical range (a loss may be negative, nothing else may), or
    // null: a baseline of -1e308 tok/s would make an infinite regression (reliability D10).
    for (const auto& fi : k_figures) {
      if (!row.contains("figures") || !row["figures"].is_object() || !row["figures"].contains(fi.name) ||
          row["figures"][std::string(fi.name)].is_null())
        continue;
      const double lo = fi.figure == Figure::loss_points ? -100.0 : 0.0, hi = fi.figure == Figure::loss_points ? 100.0 : 1e12;
      const auto v = io::json_number(row["figures"], std::string(fi.name), lo, hi, file, at + ".figures");
      if (!v.ok()) return v.error();
    }
  }
  for (auto& o : report.outcomes) {
    const json* base = nullptr;
    for (const auto& row : rows)
      if (row["model"] == o.model && row["budget"] == o.budget) base = &row;
    if (!base) continue;
    if (base->value("status", "") == "pass" && !o.pass)
      o.regressions.push_back({"status", 1, 0, 100, "passed in the baseline, fails now"});
    if (!o.has_plan || !base->contains("figures") || !(*base)["figures"].is_object()) continue;
    const auto& bf = (*base)["figures"];
    for (const auto& fi : k_figures) {
      // null: a figure the baseline run could not compute (energy without a power figure).
      if (!bf.contains(fi.name) || bf[std::string(fi.name)].is_null()) continue;
      const double b = bf[std::string(fi.name)].get<double>();
      const double v = o.figures[fi.figure];
      const double worse = fi.higher_is_better ? b - v : v - b;
      if (worse <= fi.noise) continue;
      const double pct = b != 0 ? worse / std::abs(b) * 100.0 : 100.0;
      if (pct <= report.margin_pct) continue;
      o.regressions.push_back({std::string(fi.name), b, v, pct,
                               std::string(fi.name) + " " + with_unit(fi.figure, b) + " -> " + with_unit(fi.figure, v) +
                                   " (" + (std::isfinite(pct) ? fixed(pct, 1) + "% worse" : std::string("now unknown")) +
                                   ", margin " + fixed(report.margin_pct, 1) + "%)"});
    }
  }
  return Ok{};
}

}  // namespace trilemma::gate
