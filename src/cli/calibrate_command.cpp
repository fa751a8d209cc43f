// `trilemma calibrate`: a device's efficiencies fitted to benchmark results measured on it.
//   calibrate --device D --from FILE... [--model ID] [--out DEVICE.yaml] [--skip-unmatched]
//             [--tol-decode F] [--tol-ttft F] [--tol-memory F] [--json]
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <ctime>
#include <iostream>
#include <sstream>

#include "cli/json_output.hpp"
#include "cli/log.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/format.hpp"
#include "cli/progress.hpp"
#include "cli/report_files.hpp"
#include "cli/validators.hpp"
#include "cli/standard_streams.hpp"
#include "report/verify_plots.hpp"
#include "devices/device_db.hpp"
#include "devices/device_loader.hpp"
#include "io/atomic_write.hpp"
#include "calibration/bench_rows.hpp"
#include "verify/device_calibration.hpp"

namespace trilemma::cli {
namespace {

using nlohmann::json;

struct CalibrateFlags {
  std::string device, model, out, report, svg_dir;
  std::vector<std::string> from;
  verify::Tolerances tol;
  bool skip_unmatched = false, as_json = false;
};

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string value_text(const std::string& figure, double v) {
  return figure == "peak_memory_bytes" ? gib(v, 3) : fixed(v, 2);
}

std::string error_text(double e) {
  if (!std::isfinite(e)) return "inf";
  return (e >= 0 ? "+" : "") + fixed(100 * e, 1) + "%";
}

json check_json(const verify::FigureCheck& c) {
  return {{"predicted", c.predicted}, {"rel_error", std::isfinite(c.rel_error) ? json(c.rel_error) : json()}, {"pass", c.pass}};
}

// Per figure: points within tolerance and the median |error|, before and after.
struct Summary {
  std::string figure;
  int total = 0, within_before = 0, within_after = 0;
  double median_before = 0, median_after = 0;
};

std::vector<Summary> summarize(const std::vector<verify::PointCheck>& checks) {
  std::vector<Summary> out;
  std::vector<std::pair<std::vector<double>, std::vector<double>>> errors;
  for (const auto& c : checks) {
    auto it = std::find_if(out.begin(), out.end(), [&](const Summary& s) { return s.figure == c.point->figure; });
    if (it == out.end()) out.push_back({c.point->figure}), errors.emplace_back(), it = std::prev(out.end());
    auto& e = errors[std::size_t(it - out.begin())];
    it->total += 1;
    it->within_before += c.before.pass;
    it->within_after += c.after.pass;
    e.first.push_back(std::isfinite(c.before.rel_error) ? std::abs(c.before.rel_error) : INFINITY);
    e.second.push_back(std::isfinite(c.after.rel_error) ? std::abs(c.after.rel_error) : INFINITY);
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (auto* v : {&errors[i].first, &errors[i].second}) std::sort(v->begin(), v->end());
    out[i].median_before = errors[i].first[errors[i].first.size() / 2];
    out[i].median_after = errors[i].second[errors[i].second.size() / 2];
  }
  return out;
}

std::string fitted_text(const calibration::FitOptions& o) {
  std::string s = o.bandwidth_per_format ? "bandwidth per format" : "bandwidth (one for every format)";
  s += o.compute_per_format ? ", compute per format" : ", compute per compute path";
  if (o.decode_compute) s += ", decode compute";
  if (o.attention) s += o.attention_per_kv ? ", attention per KV format" : ", attention (one for every KV format)";
  s += o.overhead_per_layer ? ", overhead per layer" : ", overhead per pass";
  return s;
}

// Results a calibration cannot use as they are: unmatched ones (unless skipped), or several runtimes.
Status check_results(const verify::ResultFiles& r, bool skip_unmatched) {
  if (!r.unmatched().empty() && !skip_unmatched)
    return make_error(ErrorKind::input, r.files().front(), "",
                      std::to_string(r.unmatched().size()) +
                          " result(s) unmatched (listed above): name the model with --model, or leave them "
                          "out with --skip-unmatched");
  const auto runtimes = r.runtimes();
  if (runtimes.size() > 1)
    return make_error(ErrorKind::usage, "--from", "",
                      "results from " + runtimes[0] + " and " + runtimes[1] +
                          ": a device's calibration describes one runtime per backend; calibrate from one at a time");
  return Ok{};
}

// A device id (lowercase, hyphenated: io::is_id) from a file's stem: "My Device" -> "my-device"
// (a profile with the stem as its id could not be read back: reliability D20).
std::string device_id_from(const std::string& stem) {
  std::string id;
  for (char c : stem) {
    const char l = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
    const bool alnum = (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9');
    if (alnum) id += l;
    else if (!id.empty() && id.back() != '-' && id.back() != '.') id += (l == '.' ? '.' : '-');
  }
  while (!id.empty() && (id.back() == '-' || id.back() == '.')) id.pop_back();
  if (id.size() > 128) id.resize(128);
  while (!id.empty() && (id.back() == '-' || id.back() == '.')) id.pop_back();
  return id.empty() ? "calibrated-device" : id;
}

// What a calibration ran on, for the report and the profile: the point count has its own field
// (calibration.points); this says what and when.
std::string fitted_on(const verify::ResultFiles& r) {
  const auto runtimes = r.runtimes();
  return "calibrate: " + (runtimes.empty() ? std::string("results") : runtimes[0] + " results") + " from " +
         std::to_string(r.files().size()) + " file" + (r.files().size() == 1 ? "" : "s") + ", " + today_utc();
}

// Everything a calibration's report shows.
struct CalibrateOutcome {
  const devices::Device& device;
  const verify::ResultFiles& results;
  const verify::DeviceCalibration& fitted;
  std::string out, on;
};

json calibrate_json(const CalibrateOutcome& c, const verify::Tolerances& tol) {
  json points = json::array();
  for (const auto& k : c.fitted.checks) {
    // The configuration the point was predicted in: `plan` pinned to it predicts `after`.
    const auto& cfg = k.point->observation.config;
    const json config = {{"model", k.point->observation.model->model->id}, {"weights", std::string(info(cfg.weights).name)},
                         {"backend", std::string(info(cfg.backend).name)}, {"threads", cfg.threads},
                         {"kv", std::string(info(cfg.kv_type).name)}, {"context", cfg.context}, {"prompt", cfg.prompt},
                         {"prompt_depth", cfg.prompt_depth}};
    points.push_back({{"label", k.point->label}, {"figure", k.point->figure}, {"measured", k.point->measured},
                      {"config", config}, {"tolerance", k.before.tolerance}, {"before", check_json(k.before)},
                      {"after", check_json(k.after)}});
  }
  json sums = json::array();
  for (const auto& s : summarize(c.fitted.checks))
    sums.push_back({{"figure", s.figure}, {"total", s.total}, {"within_before", s.within_before},
                    {"within_after", s.within_after},
                    {"median_abs_error_before", std::isfinite(s.median_before) ? json(s.median_before) : json()},
                    {"median_abs_error_after", std::isfinite(s.median_after) ? json(s.median_after) : json()}});
  const auto& o = c.fitted.options;
  const auto runtimes = c.results.runtimes();
  return {{"schema", "trilemma.calibrate"}, {"schema_version", 1}, {"device", c.device.id}, {"out", c.out},
          {"files", c.results.files()}, {"runtime", runtimes.empty() ? "" : runtimes[0]}, {"fitted_on", c.on},
          {"fit", {{"bandwidth_per_format", o.bandwidth_per_format}, {"compute_per_format", o.compute_per_format},
                   {"decode_compute", o.decode_compute},
                   {"attention", o.attention}, {"attention_per_kv", o.attention_per_kv}, {"overhead_per_layer", o.overhead_per_layer}}},
          {"tolerances", {{"decode", tol.decode}, {"ttft", tol.ttft}, {"memory", tol.memory}}},
          {"points", points}, {"summary", sums}, {"unmatched", c.results.unmatched()}, {"notes", c.results.notes()},
          {"noisy", c.results.noisy()}, {"worsened", c.fitted.worsened()},
          {"pass", c.fitted.pass()}};
}

void print_calibrate(std::ostream& out, const CalibrateOutcome& c) {
  const auto runtimes = c.results.runtimes();
  out << "calibrate: " << c.device.name << " from " << c.results.points().size() << " measured figures ("
            << (runtimes.empty() ? "" : runtimes[0]) << ")\n"
            << "  fitted: " << fitted_text(c.fitted.options) << "\n\n"
            << "  " << pad("figure", 16) << pad("measured", 12) << pad("before", 12) << pad("error", 10) << pad("after", 12)
            << pad("error", 10) << "tolerance\n";
  for (const auto& k : c.fitted.checks) {
    const auto& p = *k.point;
    out << p.label << "\n  " << pad(p.figure, 16) << pad(value_text(p.figure, p.measured), 12)
              << pad(value_text(p.figure, k.before.predicted), 12) << pad(error_text(k.before.rel_error), 10)
              << pad(value_text(p.figure, k.after.predicted), 12) << pad(error_text(k.after.rel_error), 10) << "+-"
              << fixed(100 * k.after.tolerance, 0) << "%  " << (k.after.pass ? "ok" : "OUT") << "\n";
  }
  out << "\n";
  for (const auto& s : summarize(c.fitted.checks))
    out << "  " << pad(s.figure, 16) << "before: " << s.within_before << "/" << s.total << " within, median |error| "
              << fixed(100 * s.median_before, 1) << "%;  after: " << s.within_after << "/" << s.total
              << " within, median |error| " << fixed(100 * s.median_after, 1) << "%\n";
  out << "\nprofile written to " << c.out << " (use it as --device " << c.out << ")\n"
            << (c.fitted.pass() ? "all figures within tolerance after the fit" : "some figures stay out of tolerance after the fit")
            << "\n";
}

// --svg DIR and --report FILE.html: every result predicted against measured, before and after
// the fit, per figure, and the page with the text report.
Status write_pictures(const CalibrateFlags& f, const CalibrateOutcome& c) {
  if (f.report.empty() && f.svg_dir.empty()) return Ok{};
  std::ostringstream text;
  print_calibrate(text, c);
  return write_report_files(f.report, f.svg_dir,
                            {"trilemma calibrate: " + c.device.name, text.str(), report::calibrate_plots(c.fitted, c.device.name), {}});
}

int run_calibrate(const CalibrateFlags& f) {
  if (auto s = one_standard_output({{"--out", f.out}, {"--report", f.report}}); !s.ok()) return report_error(s.error());
  if (f.from.empty()) return report_error(make_error(ErrorKind::usage, "--from", "", "give at least one result file"));
  auto device = devices::resolve_device(f.device);
  if (!device.ok()) return report_error(device.error());
  auto results = verify::ResultFiles::read(f.from, *device, f.model);
  if (!results.ok()) return report_error(results.error());
  const auto& r = **results;
  for (const auto& n : r.notes()) spdlog::info("note: {}", n);
  for (const auto& u : r.unmatched()) warn("unmatched: {}", u);
  for (const auto& n : r.noisy())
    warn("noisy: {}: its runs spread more than {:.0f}% of their mean; the fit follows it like the others (rerun it on a quiet "
         "machine, with more repetitions: llama-bench -r)", n, 100 * calibration::k_noisy_spread);
  if (auto s = check_results(r, f.skip_unmatched); !s.ok()) return report_error(s.error());
  const std::string on = fitted_on(r);
  if (auto progress = terminal_progress("calibrate", f.as_json))
    progress("fitting " + device->id + " to " + std::to_string(r.points().size()) + " measured figures");
  auto fitted = verify::calibrate_device(*device, r, f.tol, on);
  if (!fitted.ok()) return report_error(fitted.error());
  for (const auto& w : fitted->worsened())
    warn("the fit moved {}: the points disagree (noisy runs, or a configuration the fitted factors cannot express); check "
         "those runs before using the profile", w);
  const std::string out = !f.out.empty() ? f.out : f.device == "host" ? devices::host_profile_path() : device->id + "-calibrated.yaml";
  // A profile file is named after its id (devices validate checks it): the calibrated copy of
  // raspberry-pi-5 in raspberry-pi-5-calibrated.yaml is device raspberry-pi-5-calibrated.
  fitted->device.id = device_id_from(std::filesystem::path(out).stem().string());
  if (fitted->device.id != std::filesystem::path(out).stem().string())
    warn("the profile's id is '{}' (ids are lowercase, hyphenated); name the file {}.yaml for `devices validate`", fitted->device.id,
         fitted->device.id);
  if (auto w = io::write_file_atomically(out, devices::device_to_yaml(fitted->device)); !w.ok()) return report_error(w.error());
  const CalibrateOutcome outcome{*device, r, *fitted, out, on};
  std::ostream& report = report_stream({f.out, f.report});
  if (f.as_json) report << json_text(calibrate_json(outcome, f.tol)) << "\n";
  else print_calibrate(report, outcome);
  if (auto w = write_pictures(f, outcome); !w.ok()) return report_error(w.error());
  return fitted->pass() ? k_exit_ok : k_exit_check_failed;
}

}  // namespace

void add_calibrate_command(CLI::App& app, Handler& handler) {
  static CalibrateFlags f;
  auto* cmd = app.add_subcommand("calibrate", "Fit a device's efficiencies to benchmark results measured on it");
  cmd->add_option("--device,-d", f.device, "the device the results were measured on (id, YAML file or host)")->required();
  cmd->add_option("--from", f.from, std::string("result files: llama-bench output (-o json|jsonl|csv|md), trilemma verify/run --json") + k_stdin_help)
      ->required();
  cmd->add_option("--model,-m", f.model, "catalog model every result is of (when the results do not say unambiguously)");
  cmd->add_option("--out,-o", f.out, "calibrated device profile to write (default: the host profile for host, else ID-calibrated.yaml)");
  cmd->add_flag("--skip-unmatched", f.skip_unmatched, "fit the matched results and list the others, instead of failing");
  cmd->add_option("--tol-decode", f.tol.decode, "relative tolerance of decode tok/s")->capture_default_str()->check(finite_positive());
  cmd->add_option("--tol-ttft", f.tol.ttft, "relative tolerance of TTFT and prefill tok/s")->capture_default_str()->check(finite_positive());
  cmd->add_option("--tol-memory", f.tol.memory, "relative tolerance of peak memory")->capture_default_str()->check(finite_positive());
  cmd->add_option("--report", f.report, k_report_help);
  cmd->add_option("--svg", f.svg_dir, std::string(k_svg_help) + " (predicted against measured, before and after the fit)");
  cmd->add_flag("--json", f.as_json, "JSON report (docs/json-schemas.md#calibrate)");
  cmd->callback([&] { handler = [] { return run_calibrate(f); }; });
}

}  // namespace trilemma::cli
