// `trilemma verify`: predicted versus measured, figure by figure, on this machine.
//   verify (--plan plan.json | --model M [--weights W] [--threads N]) [--model-file F [--tokenizer T]]
//          [--grid] [--calibrate] [--runs N] [--tol-decode F] [--tol-ttft F] [--tol-memory F] [--json]
//          [--replay REPORT.json] [--out FILE]
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <sstream>

#include <iostream>

#include "cli/json_output.hpp"
#include "cli/log.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/report_files.hpp"
#include "cli/self_binary.hpp"
#include "cli/engine_weights.hpp"
#include "cli/format.hpp"
#include "cli/validators.hpp"
#include "cli/standard_streams.hpp"
#include "devices/core_selection.hpp"
#include "io/atomic_write.hpp"
#include "verify/points.hpp"
#include "report/verify_plots.hpp"
#include "verify/report_json.hpp"
#include "verify/run.hpp"
#include "verify/verify.hpp"

namespace trilemma::cli {
namespace {

using nlohmann::json;

struct VerifyFlags {
  verify::Request request;
  std::string out, report, svg_dir;
  bool as_json = false;
};

void print_point(std::ostream& out, const verify::PointReport& r) {
  out << describe(r.point.config) << "  [" << (r.measured.synthetic ? "synthetic " : "real ")
            << (r.point.model_file ? r.point.model_file->filename().string() : r.point.model_id) << ", "
            << r.measured.prompt_tokens << "-token prompt, " << r.measured.runs << " runs, " << r.measured.kernels << "]\n";
  for (const auto& c : r.checks) {
    const bool bytes = c.figure == "peak_memory_bytes";
    out << "  " << pad(c.figure, 20) << pad(bytes ? gib(c.predicted, 3) : fixed(c.predicted, 2), 14)
              << pad(bytes ? gib(c.measured, 3) : fixed(c.measured, 2), 14) << pad(fixed(100 * c.rel_error, 1) + "%", 10)
              << "+-" << fixed(100 * c.tolerance, 0) << "%  " << (c.pass ? "ok" : "OUT") << "\n";
  }
  if (r.measured.kl_mean)  // accuracy: reported beside the model's estimate, not a pass/fail figure
    out << "  " << pad("kl_divergence", 20) << pad(fixed(r.predicted.accuracy.kld.mid, 4), 14)
              << pad(fixed(*r.measured.kl_mean, 4), 14) << "top-1 " << fixed(100 * r.measured.top1.value_or(0), 1) << "%\n";
}

void print_points(std::ostream& out, const std::vector<verify::PointReport>& reports) {
  for (const auto& r : reports) print_point(out, r);
  const auto summary = verify::summarize(reports);
  if (summary.empty() || summary.front().total < 2) return;
  for (const auto& s : summary)
    out << "  " << pad(s.figure, 20) << s.within << "/" << s.total << " within tolerance, median |error| "
              << fixed(100 * s.median_abs_error, 1) << "%, largest " << fixed(100 * s.max_abs_error, 1) << "%\n";
}

void print_report(std::ostream& out, const verify::ReportInputs& in) {
  out << "verify: " << in.model_id << " on " << in.host.name << "\n"
            << "  figure              predicted     measured      error     tolerance\n";
  if (in.with_calibration) out << "\nbefore calibration (" + in.host.origin + " factors):\n";
  print_points(out, in.reports);
  if (in.with_calibration) {
    out << "\nafter calibration:\n";
    print_points(out, in.calibrated);
  }
  out << "\n" << (verify::all_pass(in) ? "all figures within tolerance" : "some figures are out of tolerance") << "\n";
}

// --svg DIR and --report FILE.html: predicted against measured per figure, and the page that
// holds the plots with the text report.
Status write_pictures(const VerifyFlags& f, const verify::ReportInputs& in) {
  if (f.report.empty() && f.svg_dir.empty()) return Ok{};
  std::ostringstream text;
  print_report(text, in);
  return write_report_files(f.report, f.svg_dir, {"trilemma verify: " + in.model_id + " on " + in.host.name, text.str(), report::verify_plots(in), {}});
}

// Progress is shown for engine runs, not a replay, and not under --quiet.
bool shows_progress(const VerifyFlags& f) {
  return f.request.replay.empty() && spdlog::default_logger_raw()->should_log(spdlog::level::info);
}

// A progress bar on a terminal, a log line per run otherwise, nothing under --quiet.
// Runs go round the grid (every point once per round), so the label names the run in all.
void show_progress(bool tty, std::size_t done, std::size_t total, const verify::RunPoint& p) {
  const std::string label = "run " + std::to_string(done + 1) + "/" + std::to_string(total) + ": " + verify::engine_weights_name(p) +
                            " weights, " + std::string(info(p.config.kv_type).name) + " KV, " + std::to_string(p.prompt_tokens) +
                            "-token prompt" + (p.config.speculative.on() ? ", speculative" : "");
  if (!tty) return spdlog::info("verify: {}", label);
  const int bar = int(20 * done / total);
  std::cerr << "\r[" << std::string(bar, '#') << std::string(20 - bar, '.') << "] " << label << "    " << std::flush;
}

int run_verify(VerifyFlags& f) {
  if (auto s = one_standard_output({{"--out", f.out}, {"--report", f.report}}); !s.ok()) return report_error(s.error());
  if (f.request.replay.empty()) {
    auto binary = self_binary();
    if (!binary.ok()) return report_error(binary.error());
    f.request.engine_binary = *binary;
  }
  const bool progress = shows_progress(f), tty = isatty(STDERR_FILENO) != 0;
  if (progress)
    f.request.progress = [tty](std::size_t done, std::size_t total, const verify::RunPoint& p) { show_progress(tty, done, total, p); };
  auto outcome = verify::run(f.request);
  if (progress && tty) std::cerr << "\r" << std::string(120, ' ') << "\r";
  if (!outcome.ok()) return report_error(outcome.error());
  if (!outcome->calibration_written.empty()) spdlog::info("calibration written to {}", outcome->calibration_written);
  const verify::ReportInputs& in = outcome->report;
  const auto doc = verify::report_json(in);
  if (!f.out.empty())
    if (auto w = io::write_file_atomically(f.out, json_text(doc) + "\n"); !w.ok()) return report_error(w.error());
  std::ostream& out = report_stream({f.out, f.report});
  if (f.as_json) out << json_text(doc) << "\n";
  else print_report(out, in);
  if (auto w = write_pictures(f, in); !w.ok()) return report_error(w.error());
  return verify::all_pass(in) ? k_exit_ok : k_exit_check_failed;
}

}  // namespace

void add_verify_command(CLI::App& app, Handler& handler) {
  static VerifyFlags f;
  auto* cmd = app.add_subcommand("verify", "Run a plan's configuration in the engine on this machine and compare with the prediction");
  cmd->add_option("--plan", f.request.plan, std::string("plan document from `plan --json`") + k_stdin_help);
  cmd->add_option("--model,-m", f.request.model, "catalog model id (its shape; synthetic weights unless --model-file)");
  cmd->add_option("--model-file", f.request.model_file, "real weights for the model (GGUF or llama2.c); checked against its shape");
  cmd->add_option("--tokenizer", f.request.tokenizer, "llama2.c tokenizer.bin (or a GGUF vocabulary) for --model-file");
  cmd->add_option("--weights", f.request.weights, "weight format to run (engine formats: " + engine_weight_format_names() + "; recipes run tensor by tensor: " + engine_recipe_names() + ")");
  cmd->add_option("--threads", f.request.threads, "threads (default: the plan's, at most this machine's cores)")->check(CLI::Range(0, 1024));
  cmd->add_option("--cores", f.request.cores, devices::k_cores_option_help)
      ->capture_default_str();
  cmd->add_option("--device", f.request.device, "host profile to predict with and calibrate (default: host)")->capture_default_str();
  cmd->add_option("--runs", f.request.runs, "measured runs per configuration, after one warm-up")->capture_default_str()->check(CLI::Range(1, 1000));
  cmd->add_option("--prompt-tokens", f.request.prompt_tokens, "prompt length")->capture_default_str()->check(CLI::Range(1u, k_max_context));
  cmd->add_option("--decode-tokens", f.request.decode_tokens, "tokens generated per run")->capture_default_str()->check(CLI::Range(1u, k_max_context));
  cmd->add_option("--tol-decode", f.request.tol.decode, "relative tolerance of decode tok/s")->capture_default_str()->check(finite_positive());
  cmd->add_option("--tol-ttft", f.request.tol.ttft, "relative tolerance of TTFT")->capture_default_str()->check(finite_positive());
  cmd->add_option("--tol-memory", f.request.tol.memory, "relative tolerance of peak memory")->capture_default_str()->check(finite_positive());
  cmd->add_flag("--grid", f.request.grid, verify::grid_summary());
  cmd->add_option("--contexts", f.request.contexts, "grid contexts (prompt + decode tokens)")->delimiter(',')->capture_default_str();
  cmd->add_flag("--calibrate", f.request.calibrate, "fit the host's derating factors and write them to its profile");
  cmd->add_option("--eval-text", f.request.eval_text,
                  "with --model-file: also measure KL divergence and top-1 vs full precision on this text, per weights x KV");
  cmd->add_option("--replay", f.request.replay, std::string("measurements from an earlier report (verify --out FILE) instead of running the engine") + k_stdin_help);
  cmd->add_option("--out", f.out, std::string("also write the JSON report here") + k_stdout_help);
  cmd->add_option("--report", f.report, k_report_help);
  cmd->add_option("--svg", f.svg_dir, std::string(k_svg_help) + " (predicted against measured, one per figure)");
  cmd->add_flag("--json", f.as_json, "JSON report (docs/json-schemas.md#verify)");
  cmd->callback([&] { handler = [] { return run_verify(f); }; });
}

}  // namespace trilemma::cli
