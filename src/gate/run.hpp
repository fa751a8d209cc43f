// The whole gate job: every model against every budget of a budgets file (measured on this
// machine for `host` budgets when asked), then compared with a previous report. The CLI
// resolves the models, parses flags into the request and prints the report.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "gate/budgets.hpp"
#include "gate/gate.hpp"
#include "models/model.hpp"

namespace trilemma::gate {

// Replaces a `host` budget's predicted figures with measured ones (apply_measurement); the
// caller owns the engine, which this module does not reach.
using MeasureOnHost = std::function<Status(Outcome& outcome, const models::Model& model, const Budget& budget)>;

struct Request {
  BudgetFile budgets;
  std::string budgets_file;           // as the report names it
  std::vector<models::Model> models;  // in report order
  std::string baseline_file;          // "": no baseline comparison
  double margin_pct = 5;              // regression margin, % of the baseline figure
  MeasureOnHost measure_on_host;      // null: predictions only
};

Result<Report> run(const Request& request);

}  // namespace trilemma::gate
