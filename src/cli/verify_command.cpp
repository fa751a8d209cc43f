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
#include "cli/format.hpp"
#include "cli/validators.hpp"
#include "devices/core_selection.hpp"
#include "devices/device_db.hpp"
#include "devices/device_loader.hpp"
#include "io/atomic_write.hpp"
#include "models/catalog.hpp"
#include "solver/plan_document.hpp"
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

// The shape stored in a llama2.c checkpoint header: 7 int32 (dim, hidden, layers, heads,
// kv_heads, vocab (negative = untied), seq_len).
std::optional<std::array<std::int32_t, 7>> llama2c_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<std::int32_t, 7> h{};
  if (!in.read(reinterpret_cast<char*>(h.data()), sizeof h)) return std::nullopt;
  return h;
}

Status check_file_matches(const models::Model& m, const std::string& file) {
  const auto& s = m.shape;
  auto mismatch = [&](const std::string& what, std::uint64_t want, std::uint64_t got) -> Status {
    return make_error(ErrorKind::input, file, what,
                      "the file's " + what + " is " + std::to_string(got) + " but " + m.id + " has " + std::to_string(want));
  };
  if (file.ends_with(".gguf")) {
    TRILEMMA_TRY(f, models::resolve_model(file));
    if (f.shape.layers != s.layers) return mismatch("layers", s.layers, f.shape.layers);
    if (f.shape.hidden != s.hidden) return mismatch("hidden", s.hidden, f.shape.hidden);
    if (f.shape.kv_heads != s.kv_heads) return mismatch("kv_heads", s.kv_heads, f.shape.kv_heads);
    if (f.shape.vocab != s.vocab) return mismatch("vocab", s.vocab, f.shape.vocab);
    return Ok{};
  }
  const auto h = llama2c_header(file);
  if (!h) return make_error(ErrorKind::input, file, "header", "not a GGUF file and too short for a llama2.c header");
  if (std::uint32_t((*h)[0]) != s.hidden) return mismatch("hidden", s.hidden, std::uint32_t((*h)[0]));
  if (std::uint32_t((*h)[2]) != s.layers) return mismatch("layers", s.layers, std::uint32_t((*h)[2]));
  if (std::uint32_t((*h)[4]) != s.kv_heads) return mismatch("kv_heads", s.kv_heads, std::uint32_t((*h)[4]));
  if (std::uint32_t(std::abs((*h)[5])) != s.vocab) return mismatch("vocab", s.vocab, std::uint32_t(std::abs((*h)[5])));
  return Ok{};
}

Result<TensorType> engine_type_of(WeightFormat f) {
  if (info(f).engine_type) return *info(f).engine_type;
  return make_error(ErrorKind::input, "weights", "",
                    std::string(info(f).name) + " is not a format the engine runs (" + engine_weight_format_names() +
                        "); plan with --weights q4_0 (or another) to verify");
}

json spread_json(const verify::Spread& s) {
  return {{"median", s.median}, {"min", s.min}, {"max", s.max}, {"runs", s.runs}};
}

json point_json(const verify::PointReport& r) {
  json checks = json::array();
  for (const auto& c : r.checks)
    checks.push_back({{"figure", c.figure}, {"predicted", c.predicted}, {"measured", c.measured},
                      {"rel_error", c.rel_error}, {"tolerance", c.tolerance}, {"pass", c.pass}});
  const auto& m = r.measured;
  return {{"config", solver::config_to_json(r.point.config)},
          {"engine_weights", std::string(info(r.point.engine_weights).name)},
          {"model", r.point.model_file ? r.point.model_file->string() : r.point.model_id},
          {"synthetic", m.synthetic}, {"kernels", m.kernels}, {"runs", m.runs},
          {"prompt_tokens", m.prompt_tokens}, {"decode_tokens", m.decode_tokens},
          {"draft_engine_weights", r.point.config.speculative.has_draft_weights()
                                       ? json(std::string(info(r.point.draft_engine_weights).name)) : json()},
          {"measured", {{"decode_tok_s", spread_json(m.decode_tok_s)}, {"ttft_ms", spread_json(m.ttft_ms)},
                        {"prefill_tok_s", spread_json(m.prefill_tok_s)}, {"peak_rss_bytes", m.peak_rss_bytes},
                        {"weight_bytes", m.weight_bytes}, {"kv_bytes", m.kv_bytes}, {"acceptance", m.acceptance},
                        {"weights", m.weights}}},
          {"accuracy", {{"kl_predicted", r.predicted.accuracy.kld.mid},
                        {"kl_measured", m.kl_mean ? json(*m.kl_mean) : json()},
                        {"top1_measured", m.top1 ? json(*m.top1) : json()}}},
          {"checks", checks}, {"pass", r.pass()}};
}

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

// A grid's figures at a glance: within tolerance, median and largest error, per figure.
json summary_json(const std::vector<verify::FigureSummary>& summary) {
  json out = json::array();
  for (const auto& s : summary)
    out.push_back({{"figure", s.figure}, {"within", s.within}, {"total", s.total},
                   {"median_abs_error", std::isfinite(s.median_abs_error) ? json(s.median_abs_error) : json()},
                   {"max_abs_error", std::isfinite(s.max_abs_error) ? json(s.max_abs_error) : json()}});
  return out;
}

void print_summary(const std::vector<verify::FigureSummary>& summary) {
  if (summary.empty() || summary.front().total < 2) return;
  for (const auto& s : summary)
    std::cout << "  " << pad(s.figure, 20) << s.within << "/" << s.total << " within tolerance, median |error| "
              << fixed(100 * s.median_abs_error, 1) << "%, largest " << fixed(100 * s.max_abs_error, 1) << "%\n";
}

int run_verify(VerifyFlags f) {
  if (f.runs < 1) return report_error(make_error(ErrorKind::usage, "--runs", "", "must be >= 1"));
  // What to run: a plan document, or a model and pins.
  DeploymentConfig base;
  std::string model_id = f.model;
  std::optional<WeightFormat> weights;
  if (!f.plan.empty()) {
    auto text = io::read_text_file(f.plan);
    if (!text.ok()) return report_error(text.error());
    auto doc = solver::parse_plan_document(*text, f.plan);
    if (!doc.ok()) return report_error(doc.error());
    base = doc->config;
    weights = doc->config.weights;
    if (model_id.empty()) model_id = doc->raw["model"].value("id", "");
  }
  if (model_id.empty()) model_id = f.grid ? "smollm2-135m" : "";
  if (model_id.empty()) return report_error(make_error(ErrorKind::usage, "--model", "", "give --plan or --model"));
  if (!f.weights.empty()) {
    weights = weight_format_from_name(f.weights);
    if (!weights) return report_error(make_error(ErrorKind::usage, "--weights", "", "unknown weight format '" + f.weights + "'"));
  }
  if (!f.eval_text.empty() && f.model_file.empty())
    return report_error(make_error(ErrorKind::usage, "--eval-text", "",
                                   "needs --model-file: synthetic weights say nothing about accuracy"));
  auto model = models::resolve_model(model_id);
  if (!model.ok()) return report_error(model.error());
  if (!f.model_file.empty()) {
    if (auto s = check_file_matches(*model, f.model_file); !s.ok()) return report_error(s.error());
  }
  auto host = devices::resolve_device(f.device);
  if (!host.ok()) return report_error(host.error());
  // Pinned after the host profile is resolved (a first probe measures every core), before the
  // engine runs: its threads, and a child engine's, inherit the mask.
  auto chosen = devices::apply_core_selection(f.cores);
  if (!chosen.ok()) return report_error(chosen.error());
  const unsigned cores = chosen->empty() ? std::max(1u, std::thread::hardware_concurrency()) : unsigned(chosen->size());
  base.threads = f.threads ? f.threads : std::min(base.threads ? base.threads : cores, cores);

  std::vector<verify::RunPoint> points;
  auto add_point = [&](WeightFormat w, std::uint32_t prompt, DeploymentConfig config) -> Status {
    TRILEMMA_TRY(engine_weights, engine_type_of(w));
    verify::RunPoint p;
    p.config = config;
    p.config.weights = w;
    p.config.backend = Backend::cpu;
    p.config.prompt = prompt;
    p.config.context = prompt + f.decode_tokens + (config.speculative.on() ? config.speculative.draft_len : 0);
    if (config.speculative.has_draft_weights()) {
      TRILEMMA_TRY(draft_weights, engine_type_of(config.speculative.draft_weights));
      p.draft_engine_weights = draft_weights;
    }
    if (config.kv_strategy == KvStrategy::offload) {
      // The plan's resident share of the KV the run allocates (the engine's cache: every layer
      // holds every position).
      const double kv_bytes = 2.0 * model->shape.layers * model->shape.kv_dim() * bits_per_element(config.kv_type) / 8.0 *
                              (prompt + f.decode_tokens);
      p.kv_resident_mib = kv_bytes * config.kv_resident_fraction / 1048576.0;
    }
    p.model_id = model->id;
    if (!f.model_file.empty()) p.model_file = f.model_file;
    if (!f.tokenizer.empty()) p.tokenizer_file = f.tokenizer;
    p.engine_weights = engine_weights;
    p.prompt_tokens = prompt;
    p.decode_tokens = f.decode_tokens;
    points.push_back(p);
    return Ok{};
  };
  if (f.grid) {
    // Weights x KV format x contexts (prompt + decode, capped by the trained context) x
    // speculative off / self-speculation from a lower-bit copy (g = 4).
    for (auto w : {WeightFormat::f16, WeightFormat::q8_0, WeightFormat::q4_0})
      for (auto kv : {TensorType::f16, TensorType::q8_0, TensorType::q4_0})
        for (std::uint32_t ctx : f.contexts)
          for (bool spec : {false, true}) {
            DeploymentConfig c = base;
            c.kv_type = kv;
            c.kv_strategy = KvStrategy::contiguous;
            if (spec) c.speculative = {DraftKind::self, "", w == WeightFormat::q4_0 ? WeightFormat::int3 : WeightFormat::q4_0, 0, 4};
            const std::uint32_t total = std::min(ctx, model->shape.context);
            if (total <= f.decode_tokens + 8) return report_error(make_error(ErrorKind::usage, "--contexts", "", "too small"));
            if (auto s = add_point(w, total - f.decode_tokens - (spec ? 4 : 0), c); !s.ok()) return report_error(s.error());
          }
  } else {
    if (auto s = add_point(weights.value_or(WeightFormat::q4_0), f.prompt_tokens, base); !s.ok()) return report_error(s.error());
  }

  // Measurements: the engine in a child process per point, or an earlier report replayed.
  std::unique_ptr<verify::MeasurementSource> source;
  if (!f.replay.empty()) {
    auto text = io::read_text_file(f.replay);
    if (!text.ok()) return report_error(text.error());
    auto report = verify::read_verify_report(*text, f.replay);
    if (!report.ok()) return report_error(report.error());
    source = std::make_unique<verify::ReplaySource>(std::move(report).value(), f.replay);
  } else {
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return report_error(make_error(ErrorKind::io, "/proc/self/exe", "", "cannot locate the trilemma binary"));
    std::optional<std::filesystem::path> eval_text;
    if (!f.eval_text.empty()) eval_text = f.eval_text;
    source = std::make_unique<verify::EngineSource>(std::string(exe, std::size_t(n)), f.runs, eval_text);
  }
  const bool tty = isatty(STDERR_FILENO);
  const bool show_progress = spdlog::default_logger_raw()->should_log(spdlog::level::info);  // not under --quiet
  // Runs go round the grid (every point once per round), so the label names the run in all.
  auto progress = [&](std::size_t done, std::size_t total, std::size_t i) {
    if (!f.replay.empty()) return;
    const auto& p = points[i];
    const std::string label = "run " + std::to_string(done + 1) + "/" + std::to_string(total) + ": " +
                              std::string(info(p.engine_weights).name) + " weights, " + std::string(info(p.config.kv_type).name) +
                              " KV, " + std::to_string(p.prompt_tokens) + "-token prompt" +
                              (p.config.speculative.on() ? ", speculative" : "");
    if (!show_progress) return;
    if (tty) {
      const int bar = int(20 * done / total);
      std::cerr << "\r[" << std::string(bar, '#') << std::string(20 - bar, '.') << "] " << label << "    " << std::flush;
    } else {
      spdlog::info("verify: {}", label);
    }
  };
  auto measured = source->measure_all(points, progress);
  if (!measured.ok()) return report_error(measured.error());
  std::vector<verify::PointReport> reports;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& m = (*measured)[i];
    verify::PointReport r;
    r.point = points[i];
    r.measured = m;
    auto predicted = verify::predict(*model, *host, r.point, m.prompt_tokens, m.acceptance);
    if (!predicted.ok()) return report_error(predicted.error());
    r.predicted = std::move(*predicted);
    r.checks = verify::compare(r.predicted, r.measured, f.tol);
    reports.push_back(std::move(r));
  }
  if (tty && show_progress) std::cerr << "\r" << std::string(120, ' ') << "\r";

  // Datasheet (or probe) prediction first; after calibration, the same measurements again.
  std::vector<verify::PointReport> calibrated;
  const bool profile_was_calibrated = host->calibration.has_value();
  if (f.calibrate) {
    const std::string when = std::to_string(std::time(nullptr));
    std::string on = model->id + " (" + (reports.front().measured.synthetic ? "synthetic" : "real") + " weights), " +
                     std::to_string(reports.size()) + " points, formats:";
    std::vector<std::string> formats;
    for (const auto& r : reports)
      if (std::string name(info(r.point.engine_weights).name); std::find(formats.begin(), formats.end(), name) == formats.end())
        formats.push_back(name);
    for (const auto& name : formats) on += " " + name;
    on += ", unix time " + when;
    host->calibration = verify::calibrate(*model, reports, *host, on);
    for (auto r : reports) {
      auto predicted = verify::predict(*model, *host, r.point, r.measured.prompt_tokens, r.measured.acceptance);
      if (!predicted.ok()) return report_error(predicted.error());
      r.predicted = std::move(*predicted);
      r.checks = verify::compare(r.predicted, r.measured, f.tol);
      calibrated.push_back(std::move(r));
    }
    const std::string target = f.device == "host" ? devices::host_profile_path() : f.device;
    if (auto w = io::write_file_atomically(target, devices::device_to_yaml(*host)); !w.ok()) return report_error(w.error());
    spdlog::info("calibration written to {}", target);
  }
  const auto& final_reports = f.calibrate ? calibrated : reports;
  const bool pass = std::all_of(final_reports.begin(), final_reports.end(), [](auto& r) { return r.pass(); });

  json doc = {{"schema", "trilemma.verify"}, {"schema_version", 1}, {"model", model->id}, {"device", host->id},
              {"tolerances", {{"decode", f.tol.decode}, {"ttft", f.tol.ttft}, {"memory", f.tol.memory}}},
              {"points", json::array()}, {"pass", pass}};
  // The profile the first predictions used: a replay against another profile predicts differently.
  doc["host_profile"] = {{"peak_bandwidth_gbps", host->peak_bandwidth_gbps},
                         {"measured_compute_gflops", host->measured_compute_gflops.value_or(0)},
                         {"measured_int8_gflops", host->measured_int8_gflops.value_or(0)},
                         {"calibrated", profile_was_calibrated}};
  for (const auto& r : reports) doc["points"].push_back(point_json(r));
  const auto summary = verify::summarize(reports);
  const auto calibrated_summary = verify::summarize(calibrated);
  doc["summary"] = summary_json(summary);
  if (f.calibrate) {
    doc["calibrated_points"] = json::array();
    for (const auto& r : calibrated) doc["calibrated_points"].push_back(point_json(r));
    doc["calibrated_summary"] = summary_json(calibrated_summary);
  }
  if (!f.out.empty())
    if (auto w = io::write_file_atomically(f.out, json_text(doc) + "\n"); !w.ok()) return report_error(w.error());
  if (f.as_json) {
    std::cout << json_text(doc) << "\n";
  } else {
    std::cout << "verify: " << model->id << " on " << host->name << "\n"
              << "  figure              predicted     measured      error     tolerance\n";
    std::cout << (f.calibrate ? "\nbefore calibration (" + host->origin + " factors):\n" : "");
    for (const auto& r : reports) print_point(r);
    print_summary(summary);
    if (f.calibrate) {
      std::cout << "\nafter calibration:\n";
      for (const auto& r : calibrated) print_point(r);
      print_summary(calibrated_summary);
    }
    std::cout << "\n" << (pass ? "all figures within tolerance" : "some figures are out of tolerance") << "\n";
  }
  return pass ? k_exit_ok : k_exit_check_failed;
}

}  // namespace

void add_verify_command(CLI::App& app, Handler& handler) {
  static VerifyFlags f;
  auto* cmd = app.add_subcommand("verify", "Run a plan's configuration in the engine on this machine and compare with the prediction");
  cmd->add_option("--plan", f.plan, "plan document from `plan --json`");
  cmd->add_option("--model,-m", f.model, "catalog model id (its shape; synthetic weights unless --model-file)");
  cmd->add_option("--model-file", f.model_file, "real weights for the model (GGUF or llama2.c); checked against its shape");
  cmd->add_option("--tokenizer", f.tokenizer, "llama2.c tokenizer for --model-file");
  cmd->add_option("--weights", f.weights, "weight format to run (engine formats: f32 f16 bf16 q8_0 q4_0 int3 int2)");
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
  cmd->add_flag("--grid", f.grid, "weights f16/q8_0/q4_0 x KV f16/q8_0/q4_0 x contexts x speculative off/self");
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
