// `trilemma gate --budgets FILE --model M [--model M2 ...] [--baseline PREV.json] [--margin-pct N]
//  [--junit FILE] [--github] [--json] [--out FILE] [--verify]`: CI gating of model releases
// (docs/ci.md, budgets schema docs/budgets.md). Exit 0 all pass, 1 a budget fails or regresses.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "gate/report.hpp"
#include "io/atomic_write.hpp"
#include "models/catalog.hpp"

namespace trilemma::cli {
namespace {

struct GateFlags {
  std::string budgets, baseline, junit, out;
  std::vector<std::string> models;
  double margin_pct = 5;
  bool verify = false, github = false, as_json = false;
};

int run_gate(const GateFlags& f) {
  if (f.verify)
    return report_error(make_error(ErrorKind::usage, "--verify", "",
                                   "not available yet: gating on measured figures needs `trilemma verify`, which is "
                                   "not built yet (docs/ci.md); gate checks predicted figures only"));
  if (!(f.margin_pct >= 0)) return report_error(make_error(ErrorKind::usage, "--margin-pct", "", "must be >= 0"));
  auto budgets = gate::load_budgets(f.budgets);
  if (!budgets.ok()) return report_error(budgets.error());
  std::vector<models::Model> models;
  for (const auto& m : f.models) {
    auto model = models::resolve_model(m);
    if (!model.ok()) return report_error(model.error());
    models.push_back(std::move(*model));
  }
  auto catalog = models::builtin_models();
  if (!catalog.ok()) return report_error(catalog.error());

  gate::Report report;
  report.budgets_file = f.budgets;
  report.margin_pct = f.margin_pct;
  for (const auto& m : models) {
    report.models.push_back(m.id);
    for (const auto& b : budgets->budgets) {
      auto outcome = gate::evaluate(m, b, *catalog);
      if (!outcome.ok()) return report_error(outcome.error());
      report.outcomes.push_back(std::move(*outcome));
    }
  }
  if (!f.baseline.empty()) {
    auto text = io::read_text_file(f.baseline);
    if (!text.ok()) return report_error(text.error());
    if (auto s = gate::compare_with_baseline(report, *text, f.baseline); !s.ok()) return report_error(s.error());
  }
  const std::string json_text = gate::report_to_json(report).dump(2) + "\n";
  if (!f.junit.empty())
    if (auto w = io::write_file_atomically(f.junit, gate::report_to_junit(report)); !w.ok()) return report_error(w.error());
  if (!f.out.empty())
    if (auto w = io::write_file_atomically(f.out, json_text); !w.ok()) return report_error(w.error());
  if (f.as_json) std::cout << json_text;
  else std::cout << gate::report_to_text(report);
  if (f.github) std::cout << gate::report_to_github(report);
  return report.pass() ? k_exit_ok : k_exit_check_failed;
}

}  // namespace

void add_gate_command(CLI::App& app, Handler& handler) {
  static GateFlags f;
  auto* cmd = app.add_subcommand("gate", "Check model releases against per-device budgets (CI gate)");
  cmd->add_option("--budgets,-b", f.budgets, "budgets YAML (docs/budgets.md)")->required();
  cmd->add_option("--model,-m", f.models, "model to gate (catalog id, .gguf, config.json); repeat for several")->required();
  cmd->add_flag("--verify", f.verify, "also measure on the host (not available yet: exits 2)");
  cmd->add_option("--baseline", f.baseline, "previous `gate --json` report: fail on figures that regress");
  cmd->add_option("--margin-pct", f.margin_pct, "regression margin, % of the baseline figure")->capture_default_str();
  cmd->add_option("--junit", f.junit, "write a JUnit XML report (one testcase per model x budget)");
  cmd->add_option("--out", f.out, "write the JSON report to this file (use it as the next --baseline)");
  auto* json = cmd->add_flag("--json", f.as_json, "print the JSON report instead of the summary");
  cmd->add_flag("--github", f.github, "print GitHub Actions annotations (::error / ::notice)")->excludes(json);
  cmd->callback([&] { handler = [] { return run_gate(f); }; });
}

}  // namespace trilemma::cli
