// `trilemma verify`: predicted versus measured, figure by figure, on this machine.
//   verify (--plan plan.json | --model M [--weights W] [--threads N]) [--model-file F [--tokenizer T]]
//          [--grid] [--calibrate] [--runs N] [--tol-decode F] [--tol-ttft F] [--tol-memory F] [--json]
//          [--replay REPORT.json] [--out FILE]
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/json_output.hpp"
#include "cli/log.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/engine_weights.hpp"
#include "cli/format.hpp"
#include "cli/validators.hpp"
#include "devices/core_selection.hpp"
#include "devices/device_db.hpp"
#include "devices/device_loader.hpp"
#include "io/atomic_write.hpp"
#include "models/catalog.hpp"
#include "solver/plan_document.hpp"
#include "verify/points.hpp"
#include "verify/report_json.hpp"
#include "verify/verify.hpp"

namespace trilemma::cli {
namespace {

using nlohmann::json;

struct VerifyFlags {
  std::string plan, model, model_file, tokenizer, weights, device = "host", out, replay, eval_text;
  int threads = 0, runs = 3;
  std::string cores = "all";
  std::vector<std::uint32_t> contexts = {512, 2048};
  std::uint32_t prompt_tokens = 64, decode_tokens = 32;
  verify::Tolerances tol;
  bool grid = false, calibrate = false, as_json = false;
};

void print_point(const verify::PointReport& r) {
  std::cout << describe(r.point.config) << "  [" << (r.measured.synthetic ? "synthetic " : "real ")
            << (r.point.model_file ? r.point.model_file->filename().string() : r.point.model_id) << ", "
            << r.measured.prompt_tokens << "-token prompt, " << r.measured.runs << " runs, " << r.measured.kernels << "]\n";
  for (const auto& c : r.checks) {
    const bool bytes = c.figure == "peak_memory_bytes";
    std::cout << "  " << pad(c.figure, 20) << pad(bytes ? gib(c.predicted, 3) : fixed(c.predicted, 2), 14)
              << pad(bytes ? gib(c.measured, 3) : fixed(c.measured, 2), 14) << pad(fixed(100 * c.rel_error, 1) + "%", 10)
              << "+-" << fixed(100 * c.tolerance, 0) << "%  " << (c.pass ? "ok" : "OUT") << "\n";
  }
  if (r.measured.kl_mean)  // accuracy: reported beside the model's estimate, not a pass/fail figure
    std::cout << "  " << pad("kl_divergence", 20) << pad(fixed(r.predicted.accuracy.kld.mid, 4), 14)
              << pad(fixed(*r.measured.kl_mean, 4), 14) << "top-1 " << fixed(100 * r.measured.top1.value_or(0), 1) << "%\n";
}

void print_points(const std::vector<verify::PointReport>& reports) {
  for (const auto& r : reports) print_point(r);
  const auto summary = verify::summarize(reports);
  if (summary.empty() || summary.front().total < 2) return;
  for (const auto& s : summary)
    std::cout << "  " << pad(s.figure, 20) << s.within << "/" << s.total << " within tolerance, median |error| "
              << fixed(100 * s.median_abs_error, 1) << "%, largest " << fixed(100 * s.max_abs_error, 1) << "%\n";
}

void print_report(const verify::ReportInputs& in) {
  std::cout << "verify: " << in.model_id << " on " << in.host.name << "\n"
            << "  figure              predicted     measured      error     tolerance\n";
  if (in.with_calibration) std::cout << "\nbefore calibration (" + in.host.origin + " factors):\n";
  print_points(in.reports);
  if (in.with_calibration) {
    std::cout << "\nafter calibration:\n";
    print_points(in.calibrated);
  }
  std::cout << "\n" << (verify::all_pass(in) ? "all figures within tolerance" : "some figures are out of tolerance") << "\n";
}

// The model and the points' common configuration: a plan document's, then the flags'.
struct Target {
  std::string model_id;
  verify::PointsRequest request;
};

Result<Target> target_of(const VerifyFlags& f) {
  Target t{f.model, {}};
  auto& r = t.request;
  if (!f.plan.empty()) {
    TRILEMMA_TRY(text, io::read_text_file(f.plan));
    TRILEMMA_TRY(doc, solver::parse_plan_document(text, f.plan));
    r.base = doc.config;
    r.weights = doc.config.weights;
    if (t.model_id.empty()) t.model_id = doc.raw["model"].value("id", "");
  }
  if (t.model_id.empty()) t.model_id = f.grid ? "smollm2-135m" : "";
  if (t.model_id.empty()) return make_error(ErrorKind::usage, "--model", "", "give --plan or --model");
  if (!f.weights.empty()) {
    r.weights = weight_format_from_name(f.weights);
    if (!r.weights)
      return make_error(ErrorKind::usage, "--weights", "",
                        "unknown weight format '" + f.weights + "' (expected one of: " + weight_format_names() + ")");
  }
  if (!f.eval_text.empty() && f.model_file.empty())
    return make_error(ErrorKind::usage, "--eval-text", "", "needs --model-file: synthetic weights say nothing about accuracy");
  r.grid = f.grid, r.contexts = f.contexts, r.prompt_tokens = f.prompt_tokens, r.decode_tokens = f.decode_tokens;
  r.model_file = f.model_file, r.tokenizer = f.tokenizer;
  return t;
}

// Measurements: the engine in a child process per point, or an earlier report replayed.
Result<std::unique_ptr<verify::MeasurementSource>> source_of(const VerifyFlags& f) {
  if (!f.replay.empty()) {
    TRILEMMA_TRY(text, io::read_text_file(f.replay));
    TRILEMMA_TRY(report, verify::read_verify_report(text, f.replay));
    return std::unique_ptr<verify::MeasurementSource>(std::make_unique<verify::ReplaySource>(std::move(report), f.replay));
  }
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return make_error(ErrorKind::io, "/proc/self/exe", "", "cannot locate the trilemma binary");
  std::optional<std::filesystem::path> eval_text;
  if (!f.eval_text.empty()) eval_text = f.eval_text;
  return std::unique_ptr<verify::MeasurementSource>(
      std::make_unique<verify::EngineSource>(std::string(exe, std::size_t(n)), f.runs, eval_text));
}

// Progress is shown for engine runs, not a replay, and not under --quiet.
bool shows_progress(const VerifyFlags& f) {
  return f.replay.empty() && spdlog::default_logger_raw()->should_log(spdlog::level::info);
}

// A progress bar on a terminal, a log line per run otherwise, nothing under --quiet or a replay.
// Runs go round the grid (every point once per round), so the label names the run in all.
verify::MeasurementSource::Progress progress_of(const VerifyFlags& f, const std::vector<verify::RunPoint>& points) {
  return [&points, show = shows_progress(f), tty = isatty(STDERR_FILENO) != 0](std::size_t done, std::size_t total, std::size_t i) {
    if (!show) return;
    const auto& p = points[i];
    const std::string label = "run " + std::to_string(done + 1) + "/" + std::to_string(total) + ": " +
                              verify::engine_weights_name(p) + " weights, " + std::string(info(p.config.kv_type).name) +
                              " KV, " + std::to_string(p.prompt_tokens) + "-token prompt" +
                              (p.config.speculative.on() ? ", speculative" : "");
    if (!tty) return spdlog::info("verify: {}", label);
    const int bar = int(20 * done / total);
    std::cerr << "\r[" << std::string(bar, '#') << std::string(20 - bar, '.') << "] " << label << "    " << std::flush;
  };
}

// Fits the host's derating to the reports, predicts them again with it, and writes the profile.
Result<std::vector<verify::PointReport>> calibrate_host(const VerifyFlags& f, const models::Model& model, devices::Device& host,
                                                        const std::vector<verify::PointReport>& reports) {
  host.calibration = verify::calibrate(model, reports, host, verify::calibration_label(model, reports, std::time(nullptr)));
  std::vector<verify::RunPoint> points;
  std::vector<verify::Measurement> measured;
  for (const auto& r : reports) points.push_back(r.point), measured.push_back(r.measured);
  TRILEMMA_TRY(calibrated, verify::check_points(model, host, points, measured, f.tol));
  const std::string target = f.device == "host" ? devices::host_profile_path() : f.device;
  if (auto w = io::write_file_atomically(target, devices::device_to_yaml(host)); !w.ok()) return w.error();
  spdlog::info("calibration written to {}", target);
  return calibrated;
}

Result<verify::ReportInputs> verify_points(const VerifyFlags& f) {
  TRILEMMA_TRY(target, target_of(f));
  TRILEMMA_TRY(model, models::resolve_model(target.model_id));
  if (!f.model_file.empty())
    if (auto s = verify::check_model_file(model, f.model_file); !s.ok()) return s.error();
  TRILEMMA_TRY(host, devices::resolve_device(f.device));
  // Pinned after the host profile is resolved (a first probe measures every core), before the
  // engine runs: its threads, and a child engine's, inherit the mask.
  TRILEMMA_TRY(chosen, devices::apply_core_selection(f.cores));
  const unsigned cores = chosen.empty() ? std::max(1u, std::thread::hardware_concurrency()) : unsigned(chosen.size());
  auto& base = target.request.base;
  base.threads = f.threads ? f.threads : std::min(base.threads ? base.threads : cores, cores);
  TRILEMMA_TRY(points, verify::build_points(model, target.request));
  TRILEMMA_TRY(source, source_of(f));
  TRILEMMA_TRY(measured, source->measure_all(points, progress_of(f, points)));
  if (isatty(STDERR_FILENO) && shows_progress(f))
    std::cerr << "\r" << std::string(120, ' ') << "\r";
  verify::ReportInputs in{model.id, host, host.calibration.has_value(), f.tol, {}, {}, f.calibrate};
  TRILEMMA_TRY(reports, verify::check_points(model, host, points, measured, f.tol));
  in.reports = std::move(reports);
  // Datasheet (or probe) prediction first; after calibration, the same measurements again.
  if (f.calibrate) {
    TRILEMMA_TRY(calibrated, calibrate_host(f, model, host, in.reports));
    in.calibrated = std::move(calibrated);
  }
  return in;
}

int run_verify(const VerifyFlags& f) {
  auto in = verify_points(f);
  if (!in.ok()) return report_error(in.error());
  const auto doc = verify::report_json(*in);
  if (!f.out.empty())
    if (auto w = io::write_file_atomically(f.out, json_text(doc) + "\n"); !w.ok()) return report_error(w.error());
  if (f.as_json) std::cout << json_text(doc) << "\n";
  else print_report(*in);
  return verify::all_pass(*in) ? k_exit_ok : k_exit_check_failed;
}

}  // namespace

void add_verify_command(CLI::App& app, Handler& handler) {
  static VerifyFlags f;
  auto* cmd = app.add_subcommand("verify", "Run a plan's configuration in the engine on this machine and compare with the prediction");
  cmd->add_option("--plan", f.plan, "plan document from `plan --json`");
  cmd->add_option("--model,-m", f.model, "catalog model id (its shape; synthetic weights unless --model-file)");
  cmd->add_option("--model-file", f.model_file, "real weights for the model (GGUF or llama2.c); checked against its shape");
  cmd->add_option("--tokenizer", f.tokenizer, "llama2.c tokenizer.bin (or a GGUF vocabulary) for --model-file");
  cmd->add_option("--weights", f.weights, "weight format to run (engine formats: " + engine_weight_format_names() + "; recipes run tensor by tensor: " + engine_recipe_names() + ")");
  cmd->add_option("--threads", f.threads, "threads (default: the plan's, at most this machine's cores)")->check(CLI::Range(0, 1024));
  cmd->add_option("--cores", f.cores, devices::k_cores_option_help)
      ->capture_default_str();
  cmd->add_option("--device", f.device, "host profile to predict with and calibrate (default: host)")->capture_default_str();
  cmd->add_option("--runs", f.runs, "measured runs per configuration, after one warm-up")->capture_default_str()->check(CLI::Range(1, 1000));
  cmd->add_option("--prompt-tokens", f.prompt_tokens, "prompt length")->capture_default_str()->check(CLI::Range(1u, k_max_context));
  cmd->add_option("--decode-tokens", f.decode_tokens, "tokens generated per run")->capture_default_str()->check(CLI::Range(1u, k_max_context));
  cmd->add_option("--tol-decode", f.tol.decode, "relative tolerance of decode tok/s")->capture_default_str()->check(finite_positive());
  cmd->add_option("--tol-ttft", f.tol.ttft, "relative tolerance of TTFT")->capture_default_str()->check(finite_positive());
  cmd->add_option("--tol-memory", f.tol.memory, "relative tolerance of peak memory")->capture_default_str()->check(finite_positive());
  cmd->add_flag("--grid", f.grid, verify::grid_summary());
  cmd->add_option("--contexts", f.contexts, "grid contexts (prompt + decode tokens)")->delimiter(',')->capture_default_str();
  cmd->add_flag("--calibrate", f.calibrate, "fit the host's derating factors and write them to its profile");
  cmd->add_option("--eval-text", f.eval_text,
                  "with --model-file: also measure KL divergence and top-1 vs full precision on this text, per weights x KV")
      ->check(CLI::ExistingFile);
  cmd->add_option("--replay", f.replay, "measurements from an earlier report (verify --out FILE) instead of running the engine")
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", f.out, "also write the JSON report here");
  cmd->add_flag("--json", f.as_json, "JSON report (docs/json-schemas.md#verify)");
  cmd->callback([&] { handler = [] { return run_verify(f); }; });
}

}  // namespace trilemma::cli
