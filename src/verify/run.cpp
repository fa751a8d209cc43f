#include "verify/run.hpp"

#include <algorithm>
#include <ctime>
#include <memory>
#include <optional>
#include <thread>

#include "devices/core_selection.hpp"
#include "devices/device_db.hpp"
#include "devices/device_loader.hpp"
#include "io/atomic_write.hpp"
#include "models/catalog.hpp"
#include "solver/plan_document.hpp"
#include "verify/measurement.hpp"

namespace trilemma::verify {
namespace {

// The model and the points' common configuration: a plan document's, then the request's.
struct Target {
  std::string model_id;
  PointsRequest points;
};

Result<Target> target_of(const Request& q) {
  Target t{q.model, {}};
  auto& r = t.points;
  if (!q.plan.empty()) {
    TRILEMMA_TRY(text, io::read_text_file(q.plan));
    TRILEMMA_TRY(doc, solver::parse_plan_document(text, q.plan));
    r.base = doc.config;
    r.weights = doc.config.weights;
    if (t.model_id.empty()) t.model_id = doc.raw["model"].value("id", "");
  }
  if (t.model_id.empty()) t.model_id = q.grid ? "smollm2-135m" : "";
  if (t.model_id.empty()) return make_error(ErrorKind::usage, "--model", "", "give --plan or --model");
  if (!q.weights.empty()) {
    r.weights = weight_format_from_name(q.weights);
    if (!r.weights)
      return make_error(ErrorKind::usage, "--weights", "",
                        "unknown weight format '" + q.weights + "' (expected one of: " + weight_format_names() + ")");
  }
  if (!q.eval_text.empty() && q.model_file.empty())
    return make_error(ErrorKind::usage, "--eval-text", "", "needs --model-file: synthetic weights say nothing about accuracy");
  r.grid = q.grid, r.contexts = q.contexts, r.prompt_tokens = q.prompt_tokens, r.decode_tokens = q.decode_tokens;
  r.model_file = q.model_file, r.tokenizer = q.tokenizer;
  return t;
}

// Measurements: the engine in a child process per point, or an earlier report replayed.
Result<std::unique_ptr<MeasurementSource>> source_of(const Request& q) {
  if (!q.replay.empty()) {
    TRILEMMA_TRY(text, io::read_text_file(q.replay));
    TRILEMMA_TRY(report, read_verify_report(text, q.replay));
    return std::unique_ptr<MeasurementSource>(std::make_unique<ReplaySource>(std::move(report), q.replay));
  }
  std::optional<std::filesystem::path> eval_text;
  if (!q.eval_text.empty()) {
    // The engine's child process reads the text; reading it here first makes a missing or
    // unreadable file fail before any run, as every other input file does (exit 5).
    if (q.eval_text == "-") return make_error(ErrorKind::usage, "--eval-text", "", "needs a file: the engine reads it in a child process");
    TRILEMMA_TRY(text, io::read_text_file(q.eval_text));
    (void)text;
    eval_text = q.eval_text;
  }
  return std::unique_ptr<MeasurementSource>(std::make_unique<EngineSource>(q.engine_binary, q.runs, eval_text));
}

// Fits the host's derating to the reports, predicts them again with it, and writes the profile.
Result<std::vector<PointReport>> calibrate_host(const Request& q, const models::Model& model, devices::Device& host,
                                                const std::vector<PointReport>& reports, std::string& written) {
  host.calibration = calibrate(model, reports, host, calibration_label(model, reports, std::time(nullptr)));
  std::vector<RunPoint> points;
  std::vector<Measurement> measured;
  for (const auto& r : reports) points.push_back(r.point), measured.push_back(r.measured);
  TRILEMMA_TRY(calibrated, check_points(model, host, points, measured, q.tol));
  const std::string target = q.device == "host" ? devices::host_profile_path() : q.device;
  if (auto w = io::write_file_atomically(target, devices::device_to_yaml(host)); !w.ok()) return w.error();
  written = target;
  return calibrated;
}

}  // namespace

Result<Outcome> run(const Request& q) {
  TRILEMMA_TRY(target, target_of(q));
  TRILEMMA_TRY(model, models::resolve_model(target.model_id));
  if (!q.model_file.empty())
    if (auto s = check_model_file(model, q.model_file); !s.ok()) return s.error();
  TRILEMMA_TRY(host, devices::resolve_device(q.device));
  // Pinned after the host profile is resolved (a first probe measures every core), before the
  // engine runs: its threads, and a child engine's, inherit the mask.
  TRILEMMA_TRY(chosen, devices::apply_core_selection(q.cores));
  const unsigned cores = chosen.empty() ? std::max(1u, std::thread::hardware_concurrency()) : unsigned(chosen.size());
  auto& base = target.points.base;
  base.threads = q.threads ? q.threads : std::min(base.threads ? base.threads : cores, cores);
  TRILEMMA_TRY(points, build_points(model, target.points));
  TRILEMMA_TRY(source, source_of(q));
  MeasurementSource::Progress progress;
  if (q.progress && q.replay.empty())
    progress = [&](std::size_t done, std::size_t total, std::size_t i) { q.progress(done, total, points[i]); };
  TRILEMMA_TRY(measured, source->measure_all(points, progress));
  Outcome out{{model.id, host, host.calibration.has_value(), q.tol, {}, {}, q.calibrate}, {}};
  TRILEMMA_TRY(reports, check_points(model, host, points, measured, q.tol));
  out.report.reports = std::move(reports);
  // Datasheet (or probe) prediction first; after calibration, the same measurements again.
  if (q.calibrate) {
    TRILEMMA_TRY(calibrated, calibrate_host(q, model, host, out.report.reports, out.calibration_written));
    out.report.calibrated = std::move(calibrated);
  }
  return out;
}

}  // namespace trilemma::verify
