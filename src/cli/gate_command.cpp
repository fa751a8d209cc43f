// `trilemma gate --budgets FILE --model M [--model M2 ...] [--baseline PREV.json] [--margin-pct N]
//  [--junit FILE] [--github] [--json] [--out FILE] [--verify]`: CI gating of model releases
// (docs/ci.md, budgets schema docs/budgets.md). Exit 0 all pass, 1 a budget fails or regresses.
#include <iostream>

#include "cli/json_output.hpp"
#include "cli/log.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/report_files.hpp"
#include "cli/self_binary.hpp"
#include "cli/standard_streams.hpp"
#include "gate/report.hpp"
#include "gate/run.hpp"
#include "report/gate_plots.hpp"
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
  std::string budgets, baseline, junit, out, report, svg_dir;
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

// The request from the flags: the budgets file read, the models resolved, the host measured
// with --verify.
Result<gate::Request> gate_request(const GateFlags& f) {
  gate::Request r;
  TRILEMMA_TRY(budgets, gate::load_budgets(f.budgets));
  TRILEMMA_TRY(models, gated_models(f));
  r.budgets = std::move(budgets), r.budgets_file = f.budgets, r.models = std::move(models);
  r.baseline_file = f.baseline, r.margin_pct = f.margin_pct;
  if (f.verify) r.measure_on_host = measure_on_host;
  return r;
}

// --svg DIR: the budgets x models grid; --report FILE.html: the grid with the text report.
Status write_pictures(const GateFlags& f, const gate::Report& report) {
  if (f.report.empty() && f.svg_dir.empty()) return Ok{};
  return write_report_files(f.report, f.svg_dir,
                            {"trilemma gate: " + report.budgets_file, gate::report_to_text(report), {report::gate_grid_plot(report)}, {}});
}

Status write_reports(const GateFlags& f, const gate::Report& report, const std::string& report_text) {
  if (!f.junit.empty())
    if (auto w = io::write_file_atomically(f.junit, gate::report_to_junit(report)); !w.ok()) return w.error();
  if (!f.out.empty())
    if (auto w = io::write_file_atomically(f.out, report_text); !w.ok()) return w.error();
  return write_pictures(f, report);
}

int run_gate(const GateFlags& f) {
  if (!(f.margin_pct >= 0)) return report_error(make_error(ErrorKind::usage, "--margin-pct", "", "must be >= 0"));
  if (auto s = one_standard_output({{"--out", f.out}, {"--junit", f.junit}, {"--report", f.report}}); !s.ok()) return report_error(s.error());
  auto request = gate_request(f);
  if (!request.ok()) return report_error(request.error());
  auto report = gate::run(*request);
  if (!report.ok()) return report_error(report.error());
  const std::string report_text = json_text(gate::report_to_json(*report)) + "\n";
  if (auto w = write_reports(f, *report, report_text); !w.ok()) return report_error(w.error());
  std::ostream& out = report_stream({f.out, f.junit, f.report});
  if (f.as_json) out << report_text;
  else out << gate::report_to_text(*report);
  if (f.github) std::cout << gate::report_to_github(*report);
  return report->pass() ? k_exit_ok : k_exit_check_failed;
}

}  // namespace

void add_gate_command(CLI::App& app, Handler& handler) {
  static GateFlags f;
  auto* cmd = app.add_subcommand("gate", "Check model releases against per-device budgets (CI gate)");
  cmd->add_option("--budgets,-b", f.budgets, std::string("budgets YAML (docs/budgets.md)") + k_stdin_help)->required();
  cmd->add_option("--model,-m", f.models, "model to gate (catalog id, .gguf, config.json); repeat for several")->required();
  cmd->add_option("--measured-kl", f.measured_kl, models::k_measured_kl_help);
  cmd->add_flag("--verify", f.verify, "budgets on `host`: plan with engine-runnable formats and check the limits against the engine's measurement");
  cmd->add_option("--baseline", f.baseline, std::string("previous `gate --json` report: fail on figures that regress") + k_stdin_help);
  cmd->add_option("--margin-pct", f.margin_pct, "regression margin, % of the baseline figure")->capture_default_str();
  cmd->add_option("--junit", f.junit, std::string("write a JUnit XML report (one testcase per model x budget)") + k_stdout_help);
  cmd->add_option("--out", f.out, std::string("write the JSON report to this file (use it as the next --baseline)") + k_stdout_help);
  cmd->add_option("--report", f.report, k_report_help);
  cmd->add_option("--svg", f.svg_dir, std::string(k_svg_help) + " (gate.svg: the budgets x models grid)");
  auto* json = cmd->add_flag("--json", f.as_json, "print the JSON report instead of the summary");
  cmd->add_flag("--github", f.github, "print GitHub Actions annotations (::error / ::notice)")->excludes(json);
  cmd->callback([&] { handler = [] { return run_gate(f); }; });
}

}  // namespace trilemma::cli
