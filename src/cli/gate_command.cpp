// `trilemma gate --budgets FILE --model M [--model M2 ...] [--baseline PREV.json] [--margin-pct N]
//  [--junit FILE] [--github] [--json] [--out FILE] [--verify]`: CI gating of model releases
// (docs/ci.md, budgets schema docs/budgets.md). Exit 0 all pass, 1 a budget fails or regresses.
#include <iostream>

#include "cli/json_output.hpp"
#include "cli/log.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/self_binary.hpp"
#include "gate/report.hpp"
#include "io/atomic_write.hpp"
#include "models/catalog.hpp"
#include "models/measured_loss.hpp"
#include "solver/plan_document.hpp"
#include "verify/measurement.hpp"
#include "verify/points.hpp"

namespace trilemma::cli {
namespace {

// gate --verify: run the plan of a `host` budget in the engine (synthetic weights of the model's
// shape unless it is a file) and check the limits against the measurement.
Status measure_on_host(gate::Outcome& o, const models::Model& m, const gate::Budget& b) {
  TRILEMMA_TRY(config, solver::config_from_json(o.config, "gate", "plan"));
  TRILEMMA_TRY(p, verify::plan_point(config, m, 32));
  TRILEMMA_TRY(binary, self_binary());
  spdlog::info("gate --verify: measuring {} for budget {} ({})", m.id, b.name, o.plan_summary);
  verify::EngineSource source(binary, 3);
  TRILEMMA_TRY(measured, source.measure(p));
  gate::apply_measurement(o, b.limits, measured.decode_tok_s.median, measured.ttft_ms.median,
                          measured.peak_rss_bytes / 1073741824.0,
                          std::string(measured.synthetic ? "synthetic" : "real") + " weights, median of 3 runs, " +
                              std::to_string(measured.prompt_tokens) + "-token prompt");
  return Ok{};
}

struct GateFlags {
  std::string budgets, baseline, junit, out;
  std::vector<std::string> models, measured_kl;
  double margin_pct = 5;
  bool verify = false, github = false, as_json = false;
};

// The models to gate, the one given with --measured-kl carrying its measurements.
Result<std::vector<models::Model>> gated_models(const GateFlags& f) {
  std::vector<models::Model> models;
  for (const auto& m : f.models) {
    TRILEMMA_TRY(model, models::resolve_model(m));
    models.push_back(std::move(model));
  }
  if (!f.measured_kl.empty() && models.size() != 1)
    return make_error(ErrorKind::usage, "--measured-kl", "", "calibrates one model: gate one --model at a time with it");
  for (const auto& spec : f.measured_kl) {
    TRILEMMA_TRY(measured, models::parse_measured_kl(spec));
    models.front().measured_loss.push_back(std::move(measured));
  }
  return models;
}

// Every model against every budget (measured on this machine for `host` budgets with --verify),
// then compared with --baseline.
Result<gate::Report> gate_report(const GateFlags& f, const std::vector<models::Model>& models, const gate::BudgetFile& budgets) {
  TRILEMMA_TRY(catalog, models::builtin_models());
  gate::Report report;
  report.budgets_file = f.budgets;
  report.margin_pct = f.margin_pct;
  for (const auto& m : models) {
    report.models.push_back(m.id);
    for (const auto& b : budgets.budgets) {
      const bool measure = f.verify && b.device == "host";
      TRILEMMA_TRY(outcome, gate::evaluate(m, b, catalog, measure));
      if (measure && outcome.has_plan)
        if (auto s = measure_on_host(outcome, m, b); !s.ok()) return s.error();
      report.outcomes.push_back(std::move(outcome));
    }
  }
  if (!f.baseline.empty()) {
    TRILEMMA_TRY(text, io::read_text_file(f.baseline));
    if (auto s = gate::compare_with_baseline(report, text, f.baseline); !s.ok()) return s.error();
  }
  return report;
}

int run_gate(const GateFlags& f) {
  if (!(f.margin_pct >= 0)) return report_error(make_error(ErrorKind::usage, "--margin-pct", "", "must be >= 0"));
  auto budgets = gate::load_budgets(f.budgets);
  if (!budgets.ok()) return report_error(budgets.error());
  auto models = gated_models(f);
  if (!models.ok()) return report_error(models.error());
  auto report = gate_report(f, *models, *budgets);
  if (!report.ok()) return report_error(report.error());
  const std::string report_text = json_text(gate::report_to_json(*report)) + "\n";
  if (!f.junit.empty())
    if (auto w = io::write_file_atomically(f.junit, gate::report_to_junit(*report)); !w.ok()) return report_error(w.error());
  if (!f.out.empty())
    if (auto w = io::write_file_atomically(f.out, report_text); !w.ok()) return report_error(w.error());
  if (f.as_json) std::cout << report_text;
  else std::cout << gate::report_to_text(*report);
  if (f.github) std::cout << gate::report_to_github(*report);
  return report->pass() ? k_exit_ok : k_exit_check_failed;
}

}  // namespace

void add_gate_command(CLI::App& app, Handler& handler) {
  static GateFlags f;
  auto* cmd = app.add_subcommand("gate", "Check model releases against per-device budgets (CI gate)");
  cmd->add_option("--budgets,-b", f.budgets, "budgets YAML (docs/budgets.md)")->required();
  cmd->add_option("--model,-m", f.models, "model to gate (catalog id, .gguf, config.json); repeat for several")->required();
  cmd->add_option("--measured-kl", f.measured_kl, models::k_measured_kl_help);
  cmd->add_flag("--verify", f.verify, "budgets on `host`: plan with engine-runnable formats and check the limits against the engine's measurement");
  cmd->add_option("--baseline", f.baseline, "previous `gate --json` report: fail on figures that regress");
  cmd->add_option("--margin-pct", f.margin_pct, "regression margin, % of the baseline figure")->capture_default_str();
  cmd->add_option("--junit", f.junit, "write a JUnit XML report (one testcase per model x budget)");
  cmd->add_option("--out", f.out, "write the JSON report to this file (use it as the next --baseline)");
  auto* json = cmd->add_flag("--json", f.as_json, "print the JSON report instead of the summary");
  cmd->add_flag("--github", f.github, "print GitHub Actions annotations (::error / ::notice)")->excludes(json);
  cmd->callback([&] { handler = [] { return run_gate(f); }; });
}

}  // namespace trilemma::cli
