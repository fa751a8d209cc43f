#include "gate/run.hpp"

#include "io/atomic_write.hpp"
#include "models/catalog.hpp"

namespace trilemma::gate {

Result<Report> run(const Request& request) {
  if (!(request.margin_pct >= 0)) return make_error(ErrorKind::usage, "--margin-pct", "", "must be >= 0");
  TRILEMMA_TRY(catalog, models::builtin_models());
  Report report;
  report.budgets_file = request.budgets_file;
  report.margin_pct = request.margin_pct;
  for (const auto& m : request.models) {
    report.models.push_back(m.id);
    for (const auto& b : request.budgets.budgets) {
      // Only a `host` budget runs where it is checked; its plan keeps to what the engine runs.
      const bool measure = request.measure_on_host && b.device == "host";
      TRILEMMA_TRY(outcome, evaluate(m, b, catalog, measure));
      if (measure && outcome.has_plan)
        if (auto s = request.measure_on_host(outcome, m, b); !s.ok()) return s.error();
      report.outcomes.push_back(std::move(outcome));
    }
  }
  if (!request.baseline_file.empty()) {
    TRILEMMA_TRY(text, io::read_text_file(request.baseline_file));
    if (auto s = compare_with_baseline(report, text, request.baseline_file); !s.ok()) return s.error();
  }
  return report;
}

}  // namespace trilemma::gate
