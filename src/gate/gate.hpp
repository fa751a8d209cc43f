// The release gate: for every model x budget, plan with the budget's limits as constraints and
// check the chosen plan against every limit. A budget passes only on a plan that meets all of
// them; the outcome names the limiting figure (smallest margin) and its margin. With a baseline
// (a previous `gate --json` report) each figure is compared point by point and a change for the
// worse beyond the margin is a regression. Schema of the report: docs/ci.md.
#pragma once
#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gate/budgets.hpp"
#include "models/model.hpp"
#include "solver/plan_document.hpp"

namespace trilemma::gate {

// The figures a budget limits. Append at the end: names are persisted in gate reports.
enum class Figure : std::uint8_t { decode_tok_s, ttft_ms, memory_gib, loss_points, kld, joules_per_token, count };

struct FigureInfo {
  Figure figure;
  std::string_view name;   // "decode_tok_s"
  std::string_view unit;   // "tok/s"
  std::string_view limit;  // the budget key that limits it: "min_decode_tok_s"
  bool higher_is_better;
  int digits;              // decimals in reports
  double noise;            // absolute change below which a baseline comparison is not a regression
};
std::span<const FigureInfo> figures();
const FigureInfo& info(Figure figure);

struct Figures {
  std::array<double, static_cast<std::size_t>(Figure::count)> values{};  // indexed by Figure
  double operator[](Figure f) const { return values[static_cast<std::size_t>(f)]; }
  double& operator[](Figure f) { return values[static_cast<std::size_t>(f)]; }
};

struct Check {
  Figure figure;
  double limit = 0, value = 0;
  double margin_pct = 0;  // slack relative to the limit: > 0 passes, < 0 fails by that share
  bool pass = false;
};

// What stopped (or most nearly stops) a budget: a checked figure, or a constraint of the
// scenario or device that has no limit in the budget ("device_memory").
struct Limiting {
  std::string figure;
  std::optional<double> limit, value, margin_pct;
  std::string message;
};

struct Regression {
  std::string figure;  // a figure name, or "status" when a passing budget now fails
  double baseline = 0, value = 0;
  double change_pct = 0;  // > 0 is worse
  std::string message;
};

struct Outcome {
  std::string model, budget, device, scenario;
  std::uint32_t context = 0;
  int line = 0;  // the budget's line in the budgets file
  bool pass = false;
  bool has_plan = false;     // figures and config describe a plan (the passing one, or the nearest attempt)
  std::string plan_summary;
  nlohmann::json config;     // config_to_json of that plan, or null
  std::string weights;       // its weight format
  Figures figures;
  std::vector<Check> checks;
  std::optional<Limiting> limiting;
  std::string message;       // one line: why it fails, or which plan passes
  std::vector<Regression> regressions;
};

struct Report {
  std::string budgets_file;
  std::vector<std::string> models;
  std::vector<Outcome> outcomes;  // models in argument order, budgets in file order
  std::string baseline;           // file, or "" without --baseline
  double margin_pct = 0;
  std::size_t failed() const;
  std::size_t regressions() const;
  bool pass() const { return failed() == 0 && regressions() == 0; }
};

// Plans `model` under `budget` and checks the limits. Errors only for broken inputs; a model
// that cannot meet the budget is an Outcome with pass = false.
// `engine_formats_only` restricts the search to weight formats trilemma's engine runs, so the
// plan can be measured (gate --verify on `host`).
Result<Outcome> evaluate(const models::Model& model, const Budget& budget, const std::vector<models::Model>& catalog,
                         bool engine_formats_only = false);

// Replaces an outcome's predicted speed, TTFT and memory with measured ones and re-checks the
// limits (gate --verify). `note` says what was measured.
void apply_measurement(Outcome& outcome, const Limits& limits, double decode_tok_s, double ttft_ms, double memory_gib,
                       const std::string& note);

// Compares the report's figures with a previous report (its JSON) and records regressions.
Status compare_with_baseline(Report& report, const std::string& baseline_text, const std::string& baseline_file);

}  // namespace trilemma::gate
