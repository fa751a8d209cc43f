// `trilemma fidelity [--data DIR] [--method lodo|priors] [--points] [--fit] [--json]`: how well
// trilemma's predictions hold on the published dataset (data/measurements, docs/fidelity.md).
#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>
#include <numeric>

#include "calibration/observations.hpp"
#include "cli/json_output.hpp"
#include "cli/log.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/format.hpp"
#include "cli/progress.hpp"
#include "devices/device_db.hpp"
#include "accuracy/kv_loss.hpp"
#include "fidelity/accuracy_check.hpp"
#include "fidelity/figure_check.hpp"
#include "fidelity/cross_validation.hpp"
#include "fidelity/run.hpp"
#include "io/atomic_write.hpp"
#include "measurements/loss_rows.hpp"
#include "models/catalog.hpp"

namespace trilemma::cli {
namespace {

using nlohmann::json;
using calibration::Figure;

struct FidelityFlags {
  std::string data, method = "all", hold_out, write;
  unsigned threads = 2;
  std::string loss_data;
  bool points = false, fit = false, as_json = false, skipped = false, accuracy = false;
};

std::string pct(double v) { return fixed(v * 100, 1) + "%"; }

json report_json(const fidelity::Report& r, const calibration::ObservationSet& set, bool points) {
  json figures = json::object();
  for (auto f : fidelity::k_figures) {
    const auto& s = r.figures[static_cast<std::size_t>(f)];
    figures[fidelity::figure_name(f)] = {{"devices", s.devices}, {"points", s.points}, {"median_abs_error", s.median},
                                         {"p90_abs_error", s.p90}, {"bias", s.bias}};
  }
  json devices = json::array();
  for (const auto& d : r.devices) {
    json row = {{"device", d.device}};
    for (auto f : fidelity::k_figures)
      if (!d.errors[static_cast<std::size_t>(f)].empty())
        row[fidelity::figure_name(f)] = {{"points", d.errors[static_cast<std::size_t>(f)].size()}, {"median_abs_error", d.median_abs(f)}};
    devices.push_back(row);
  }
  json out = {{"method", r.method}, {"figures", figures}, {"devices", devices}};
  if (points) {
    json p = json::array();
    for (const auto& x : r.points) {
      const auto& o = set.observations()[x.observation];
      p.push_back({{"id", o.observation.label}, {"device", o.device}, {"figure", fidelity::figure_name(o.figure)},
                   {"predicted", x.predicted}, {"measured", x.measured}, {"error", x.error},
                   {"bytes_per_token", x.bytes_per_token}, {"backend", std::string(info(o.observation.config.backend).name)},
                   {"threads", o.observation.config.threads}, {"model", o.observation.model->model->id},
                   {"weights", std::string(info(o.observation.config.weights).name)},
                   {"kv", std::string(info(o.observation.config.kv_type).name)}, {"context", o.observation.config.context},
                   {"prompt", o.observation.config.prompt}, {"source", o.source}, {"runtime", o.runtime},
                   {"calibrated", x.calibrated}});
    }
    out["points"] = p;
  }
  return out;
}

void print_report(const fidelity::Report& r, const calibration::ObservationSet& set, bool points) {
  std::cout << "fidelity (" << r.method << "): median absolute error per device; each device counts once\n\n";
  std::cout << pad("device", 34) << pad("decode", 16) << pad("prefill", 16) << "memory\n";
  for (const auto& d : r.devices) {
    std::cout << pad(d.device, 34);
    for (auto f : fidelity::k_figures) {
      const auto& e = d.errors[static_cast<std::size_t>(f)];
      std::cout << pad(e.empty() ? "-" : pct(d.median_abs(f)) + " (" + std::to_string(e.size()) + ")", 16);
    }
    std::cout << "\n";
  }
  std::cout << "\n" << pad("figure", 16) << pad("devices", 9) << pad("points", 8) << pad("median", 9) << pad("p90", 9) << "bias\n";
  for (auto f : fidelity::k_figures) {
    const auto& s = r.figures[static_cast<std::size_t>(f)];
    std::cout << pad(fidelity::figure_name(f), 16) << pad(std::to_string(s.devices), 9) << pad(std::to_string(s.points), 8)
              << pad(pct(s.median), 9) << pad(pct(s.p90), 9) << (s.bias >= 0 ? "+" : "") << pct(s.bias) << "\n";
  }
  if (points) {
    std::cout << "\npoints (predicted / measured):\n";
    for (const auto& x : r.points) {
      const auto& o = set.observations()[x.observation];
      std::cout << "  " << pad(fidelity::figure_name(o.figure), 15) << pad(fixed(x.error * 100, 1) + "%", 9)
                << fixed(x.predicted, 1) << " / " << fixed(x.measured, 1) << "  " << o.observation.label << "\n";
    }
  }
}

json summary_json(const fidelity::LossSummary& s) {
  return {{"points", s.points}, {"median_ratio_error", s.median_ratio_error}, {"median_ratio", s.median_ratio},
          {"inside_range", s.inside}};
}

void print_summary(const std::string& name, const fidelity::LossSummary& s) {
  std::cout << "  " << pad(name, 16) << pad(std::to_string(s.points), 8) << pad(fixed(s.median_ratio_error, 2) + "x", 10)
            << pad(fixed(s.median_ratio, 2) + "x", 10) << pct(s.inside) << "\n";
}

json loss_fit_json(const accuracy::LossFit& fit) {
  const auto range = [](const Range& r) { return json::array({r.low, r.mid, r.high}); };
  return {{"points", fit.points}, {"families", fit.families}, {"format_ln_kld", fit.format_ln_kld},
          {"a_size", fit.a_size}, {"a_tokens", fit.a_tokens}, {"a_bits", fit.a_bits}, {"a_imatrix", fit.a_imatrix}, {"a_moe", fit.a_moe}, {"knee", fit.knee}, {"default_tokens", fit.default_tokens},
          {"error", range(fit.error)}, {"kld_error", range(fit.error_of(accuracy::LossMetric::kld))},
          {"ppl_error", range(fit.error_of(accuracy::LossMetric::ppl_delta_pct))}};
}

void print_loss_fit(const accuracy::LossFit& fit) {
  const Range& kld = fit.error_of(accuracy::LossMetric::kld);
  const Range& ppl = fit.error_of(accuracy::LossMetric::ppl_delta_pct);
  std::cout << "\nfitted on every family (" << fit.points << " measurements, " << fit.families.size() << " families):\n"
            << "  ln KLD = c[format] + " << fixed(fit.a_size, 3) << " ln(P/8B) + " << fixed(fit.a_tokens, 3) << " ln(D/15T) + "
            << fixed(fit.a_bits, 3) << " dbits + " << fixed(fit.a_imatrix, 3) << " imatrix + " << fixed(fit.a_moe, 3)
            << " ln(total/active)\n  knee " << fixed(fit.knee, 4) << " nats; tokens when unpublished " << fixed(fit.default_tokens / 1e12, 1)
            << "T\n  measured/predicted 10/50/90%, held-out families: KLD " << fixed(kld.low, 2) << " / "
            << fixed(kld.mid, 2) << " / " << fixed(kld.high, 2) << ", perplexity " << fixed(ppl.low, 2) << " / "
            << fixed(ppl.mid, 2) << " / " << fixed(ppl.high, 2) << "\n  c[format] (KLD at Llama-3-8B's traits):";
  int i = 0;
  for (const auto& [format, c] : fit.format_ln_kld) std::cout << (i++ % 6 ? "  " : "\n    ") << pad(format, 8) << fixed(std::exp(c), 4);
  std::cout << "\n";
}

// `fidelity --accuracy`: the accuracy model against data/measurements/loss.csv.
accuracy::KvLossTable kv_table(const std::vector<measurements::LossRow>& rows, const accuracy::LossFit& fit) {
  return accuracy::kv_loss_table(rows, accuracy::quantized_kv_formats(), fit.knee);
}

json kv_table_json(const accuracy::KvLossTable& t) {
  json out = {{"types", json::array()}, {"skipped", t.skipped}};
  for (const auto& k : t.types)
    out["types"].push_back({{"type", info(k.type).name}, {"kld", {k.kld.low, k.kld.mid, k.kld.high}},
                            {"ppl_delta_pct", {k.ppl_delta_pct.low, k.ppl_delta_pct.mid, k.ppl_delta_pct.high}},
                            {"measurements", k.measurements}, {"mid_models", k.mid_models}});
  return out;
}

void print_kv_table(const accuracy::KvLossTable& t) {
  std::cout << "\nKV cache term (published measurements, not fitted; K and V in one type):\n";
  for (const auto& k : t.types) {
    std::cout << "  " << pad(std::string(info(k.type).name), 6) << "PPL +" << fixed(k.ppl_delta_pct.mid, 3) << "% ("
              << fixed(k.ppl_delta_pct.low, 3) << "-" << fixed(k.ppl_delta_pct.high, 3) << "), KLD " << fixed(k.kld.mid, 4)
              << "; " << k.measurements << " measurements, mid from";
    for (const auto& m : k.mid_models) std::cout << " " << m;
    std::cout << "\n";
  }
  for (const auto& [reason, n] : t.skipped) std::cout << "  left out: " << n << "  " << reason << "\n";
}

json figures_json(const fidelity::PrintedReport& r, bool points) {
  const auto summary = [](const fidelity::PrintedSummary& s, bool ratio) {
    return json{{"points", s.points}, {ratio ? "median_ratio_error" : "median_abs_error_points", s.median_error},
                {ratio ? "median_ratio" : "median_bias_points", s.median_bias}, {"inside_range", s.inside}};
  };
  json out = {{"skipped", r.skipped}};
  for (const auto& [g, s] : r.perplexity_by_format) out["table_formats_ppl_delta_pct"][g] = summary(s, true);
  for (const auto& [g, s] : r.points_by_benchmark) out["benchmark_points_lost"][g] = summary(s, false);
  if (points) {
    out["points"] = json::array();
    for (const auto& p : r.points)
      out["points"].push_back({{"id", p.row->id}, {"metric", p.row->metric}, {"format", std::string(info(p.format).name)},
                               {"measured", p.measured}, {"predicted", {p.predicted.low, p.predicted.mid, p.predicted.high}}});
  }
  return out;
}

void print_figures(const fidelity::PrintedReport& r, bool points) {
  std::cout << "\nfigures the fitted rows do not check (held out by family as above; "
            << std::accumulate(r.skipped.begin(), r.skipped.end(), std::size_t(0), [](std::size_t n, const auto& s) { return n + s.second; })
            << " rows left out, --json lists why)\n";
  std::cout << "\n" << pad("perplexity, table formats", 28) << pad("points", 8) << pad("|ratio|", 10) << pad("ratio", 10) << "inside\n";
  for (const auto& [g, s] : r.perplexity_by_format)
    std::cout << "  " << pad(g, 26) << pad(std::to_string(s.points), 8) << pad(fixed(s.median_error, 2) + "x", 10)
              << pad(fixed(s.median_bias, 2) + "x", 10) << pct(s.inside) << "\n";
  std::cout << "\n" << pad("benchmark points lost", 28) << pad("points", 8) << pad("|error|", 10) << pad("bias", 10) << "inside\n";
  for (const auto& [g, s] : r.points_by_benchmark)
    std::cout << "  " << pad(g, 26) << pad(std::to_string(s.points), 8) << pad(fixed(s.median_error, 2), 10)
              << pad((s.median_bias >= 0 ? "+" : "") + fixed(s.median_bias, 2), 10) << pct(s.inside) << "\n";
  if (!points) return;
  std::cout << "\nfigure points (format: predicted mid / measured, range):\n";
  for (const auto& p : r.points)
    std::cout << "  " << pad(std::string(info(p.format).name), 7) << pad(p.row->metric, 22) << fixed(p.predicted.mid, 2) << " / "
              << fixed(p.measured, 2) << "  [" << fixed(p.predicted.low, 2) << ", " << fixed(p.predicted.high, 2) << "]  "
              << p.row->id << "\n";
}

json accuracy_json(const fidelity::AccuracyReport& report, const fidelity::PrintedReport& figures,
                   const std::vector<measurements::LossRow>& rows, const FidelityFlags& f) {
  json out = {{"method", f.method != "priors" ? "lofo" : "priors"}, {"rows", rows.size()}, {"compared", report.points.size()},
              {"skipped", report.skipped}};
  for (const auto& [m, s] : report.by_metric) {
    out["metrics"][m] = summary_json(s);
    for (const auto& [g, gs] : report.by_family.at(m)) out["metrics"][m]["families"][g] = summary_json(gs);
    for (const auto& [g, gs] : report.by_imatrix.at(m)) out["metrics"][m]["imatrix"][g] = summary_json(gs);
  }
  if (f.method != "priors") out["figures"] = figures_json(figures, f.points);
  if (f.fit) {
    const auto fit = accuracy::fit_loss(report.observations.points);
    out["fit"] = loss_fit_json(fit);
    out["kv"] = kv_table_json(kv_table(rows, fit));
  }
  if (f.points) {
    out["points"] = json::array();
    for (const auto& p : report.points)
      out["points"].push_back({{"id", p.observation->row->id}, {"metric", p.metric}, {"measured", p.measured},
                               {"predicted", {p.predicted.low, p.predicted.mid, p.predicted.high}}, {"ratio", p.ratio()}});
  }
  return out;
}

void print_accuracy(const fidelity::AccuracyReport& report, const fidelity::PrintedReport& figures,
                    const std::vector<measurements::LossRow>& rows, const FidelityFlags& f) {
  std::cout << "accuracy fidelity, "
            << (f.method != "priors" ? "leave one family out (the loss model refitted without each family)"
                                   : "priors (the first model: Llama-3-8B figures scaled by size, not fitted)")
            << "\n";
  std::cout << rows.size() << " published loss rows, " << report.points.size() << " compared; left out:\n";
  for (const auto& [reason, n] : report.skipped) std::cout << "  " << n << "  " << reason << "\n";
  std::cout << "\nratio = predicted / measured; inside = measurements within the predicted low-high range\n";
  for (const auto& [m, s] : report.by_metric) {
    std::cout << "\n" << pad(m, 18) << pad("points", 8) << pad("|ratio|", 10) << pad("ratio", 10) << "inside\n";
    print_summary("all", s);
    for (const auto& [g, gs] : report.by_family.at(m)) print_summary(g, gs);
    for (const auto& [g, gs] : report.by_imatrix.at(m)) print_summary("imatrix " + g, gs);
  }
  if (f.method != "priors") print_figures(figures, f.points);
  if (f.fit) {
    const auto fit = accuracy::fit_loss(report.observations.points);
    print_loss_fit(fit);
    print_kv_table(kv_table(rows, fit));
  }
  if (f.points) {
    std::cout << "\npoints (predicted mid / measured, range):\n";
    for (const auto& p : report.points)
      std::cout << "  " << pad(fixed(p.ratio(), 2) + "x", 9) << fixed(p.predicted.mid, 4) << " / " << fixed(p.measured, 4) << "  ["
                << fixed(p.predicted.low, 4) << ", " << fixed(p.predicted.high, 4) << "]  " << p.observation->row->id << "\n";
  }
}

int run_accuracy_fidelity(const FidelityFlags& f) {
  if (f.method != "all" && f.method != "lodo" && f.method != "priors")
    return report_error(make_error(ErrorKind::usage, "--method", "", "with --accuracy: expected all or lodo (leave one family out) or priors, got '" + f.method + "'"));
  auto rows = measurements::load_loss_rows(f.loss_data);
  if (!rows.ok()) return report_error(rows.error());
  auto tokens = measurements::load_training_tokens();
  if (!tokens.ok()) return report_error(tokens.error());
  const auto report = fidelity::check_accuracy(
      *rows, *tokens, f.method != "priors" ? fidelity::AccuracyMethod::leave_one_family_out : fidelity::AccuracyMethod::priors);
  // The priors method has no points map or fit to hold out: the figures' check is leave-one-family-out only.
  const auto figures = f.method != "priors" ? fidelity::check_printed_figures(*rows, *tokens) : fidelity::PrintedReport{};
  if (f.as_json) std::cout << json_text(accuracy_json(report, figures, *rows, f)) << "\n";
  else print_accuracy(report, figures, *rows, f);
  return k_exit_ok;
}

json speed_json(const FidelityFlags& f, const fidelity::Outcome& out) {
  const auto& set = *out.data->set;
  json reports = json::array();
  for (const auto& r : out.reports) reports.push_back(report_json(r, set, f.points));
  json out_json = reports.size() == 1 ? reports[0] : json{{"method", "all"}, {"reports", reports}};
  if (out.reports.size() > 1) {
    json w = json::object();
    for (auto fig : fidelity::k_figures) {
      const auto s = fidelity::worst(out.reports, fig);
      w[fidelity::figure_name(fig)] = {{"median_abs_error", s.median}, {"p90_abs_error", s.p90}};
    }
    out_json["worst"] = w;
  }
  json cov = json::object();
  for (const auto& [name, c] : out.coverage) cov[name] = {{"points", c.points}, {"inside", c.inside}, {"share", c.share()}};
  if (!out.coverage.empty()) out_json["inside_range"] = cov;
  out_json["rows"] = out.data->rows.size();
  out_json["observations"] = set.observations().size();
  out_json["skipped"] = set.skipped_by_reason();
  if (out.fit) {
    json values = json::array();
    for (const auto& v : out.fit->values) values.push_back({{"name", v.name}, {"value", v.value}, {"devices", v.devices}});
    out_json["fitted"] = values;
  }
  return out_json;
}

void print_summaries(const fidelity::Outcome& out) {
  std::cout << "\nsummary (device-weighted median and p90 of absolute errors; each held-out group refitted without it)\n";
  std::cout << pad("method", 24) << pad("figure", 16) << pad("devices", 9) << pad("points", 8) << pad("median", 9) << "p90\n";
  for (const auto& r : out.reports)
    for (auto f : fidelity::k_figures) {
      const auto& s = r.figures[static_cast<std::size_t>(f)];
      std::cout << pad(r.method, 24) << pad(fidelity::figure_name(f), 16) << pad(std::to_string(s.devices), 9)
                << pad(std::to_string(s.points), 8) << pad(pct(s.median), 9) << pct(s.p90) << "\n";
    }
  for (auto f : fidelity::k_figures) {
    const auto s = fidelity::worst(out.reports, f);
    std::cout << pad("worst of them", 24) << pad(fidelity::figure_name(f), 16) << pad("", 17) << pad(pct(s.median), 9)
              << pct(s.p90) << "\n";
  }
  if (out.coverage.empty()) return;
  std::cout << "\ninside the printed 80% range (leave-one-source-out; each page checked against bands fitted without it):\n";
  for (const auto& [name, c] : out.coverage)
    std::cout << "  " << pad(name, 16) << pad(pct(c.share()), 9) << c.inside << " of " << c.points << "\n";
}

void print_speed(const FidelityFlags& f, const fidelity::Outcome& out) {
  const auto& set = *out.data->set;
  std::cout << out.data->rows.size() << " published rows, " << set.observations().size() << " observations on "
            << set.device_ids().size() << " devices; left out:\n";
  for (const auto& [reason, n] : set.skipped_by_reason()) std::cout << "  " << n << "  " << reason << "\n";
  if (f.skipped)
    for (const auto& s : set.skipped()) std::cout << "    " << s << "\n";
  std::cout << "\n";
  print_report(out.reports.front(), set, f.points);
  if (out.reports.size() > 1 || !out.coverage.empty()) print_summaries(out);
  if (!out.fit) return;
  std::cout << "\nfitted on every device" << (f.hold_out.empty() ? "" : " but " + f.hold_out) << " ("
            << out.fit->values.size() << " values):\n";
  for (const auto& v : out.fit->values)
    std::cout << "  " << pad(v.name, 44) << pad(fixed(v.value, 3), 10) << v.devices << " devices\n";
}

int run_fidelity(const FidelityFlags& f) {
  if (f.accuracy) return run_accuracy_fidelity(f);
  const std::map<std::string, std::vector<fidelity::HoldOut>> methods = {
      {"all", {fidelity::HoldOut::source, fidelity::HoldOut::device, fidelity::HoldOut::runtime}},
      {"lodo", {fidelity::HoldOut::device}}, {"loso", {fidelity::HoldOut::source}}, {"loro", {fidelity::HoldOut::runtime}},
      {"priors", {}}};
  const auto m = methods.find(f.method);
  if (m == methods.end())
    return report_error(make_error(ErrorKind::usage, "--method", "", "expected all, loso, lodo, loro or priors, got '" + f.method + "'"));
  fidelity::Request q;
  q.data = f.data;
  q.methods = m->second;
  if (!f.write.empty() && f.method != "all")
    return report_error(make_error(ErrorKind::usage, "--write", "", "needs --method all (the fit's ranges come from every cross-validation)"));
  q.threads = f.threads;
  q.only = f.hold_out;
  if (f.fit) q.fit_without = f.hold_out;
  q.write = !f.write.empty();
  q.progress = terminal_progress("fidelity", f.as_json);
  auto out = fidelity::run(q);
  if (!out.ok()) return report_error(out.error());
  if (q.write) {
    if (auto w = io::write_file_atomically(f.write, out->fitted_yaml); !w.ok()) return report_error(w.error());
    spdlog::info("fitted tables, ranges and device calibrations written to {}", f.write);
  }
  if (f.as_json) std::cout << json_text(speed_json(f, *out)) << "\n";
  else print_speed(f, *out);
  return k_exit_ok;
}

}  // namespace

void add_fidelity_command(CLI::App& app, Handler& handler) {
  static FidelityFlags f;
  auto* cmd = app.add_subcommand("fidelity", "Check predictions against the published measurements (docs/fidelity.md)");
  cmd->add_option("--data", f.data, "a folder of speed-*.csv files (default: the built-in data/measurements)");
  cmd->add_option("--method", f.method, "all: loso, lodo and loro; loso: leave one page of the dataset out; lodo: one device (with --accuracy: one model family); loro: one runtime; each refitting every constant without it. priors: the tables (the first accuracy model) as they are")
      ->capture_default_str();
  cmd->add_option("--hold-out", f.hold_out, "cross-validate this group only: a device (lodo), a page's URL (loso) or an engine (loro); with --fit: fit without that device");
  cmd->add_option("--threads", f.threads, "cross-validation folds run at once (at most one per CPU)")->capture_default_str();
  cmd->add_flag("--points", f.points, "list every prediction next to its measurement");
  cmd->add_flag("--skipped", f.skipped, "list every row left out, with its reason");
  cmd->add_flag("--fit", f.fit, "also fit the derating tables on every device and print the values");
  cmd->add_option("--write", f.write, "write the fitted tables and device calibrations (devices/fitted.yaml)");
  cmd->add_flag("--accuracy", f.accuracy, "check the accuracy model against the published loss measurements instead");
  cmd->add_option("--loss-data", f.loss_data, "with --accuracy: a loss CSV (default: the built-in data/measurements/loss.csv)");
  cmd->add_flag("--json", f.as_json, "print the report as JSON");
  cmd->callback([&] { handler = [] { return run_fidelity(f); }; });
}

}  // namespace trilemma::cli
