// `trilemma requirements --model M [--scenario S] [limits] [--json]`: the inverse of plan. What
// a device needs to run the model under the limits (per weight format and KV family), and which
// devices of the database meet them, by margin, with what each near-miss lacks.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/format.hpp"
#include "cli/json_output.hpp"
#include "cli/validators.hpp"
#include "cli/log.hpp"
#include "devices/device_db.hpp"
#include "models/catalog.hpp"
#include "solver/plan_document.hpp"
#include "solver/requirements.hpp"
#include "solver/limits.hpp"

namespace trilemma::cli {
namespace {

struct RequirementsFlags {
  std::string model, scenario = "latency";
  std::uint32_t context = 0, prompt = 0;
  std::optional<double> min_tok_s, max_ttft_ms, max_memory_gib, max_loss_points, max_joules_per_token, max_power_w, sustained;
  bool all = false, as_json = false;
};

// G(FL)OP/s in the largest unit that keeps three digits.
std::string ops(double gops) { return gops >= 1000 ? fixed(gops / 1000, 1) + " T" : fixed(gops, 0) + " G"; }

std::string limits_text(const solver::Constraints& k) {
  std::string s;
  auto add = [&](const std::string& t) { s += (s.empty() ? "" : ", ") + t; };
  if (k.min_decode_tok_s) add(">= " + fixed(*k.min_decode_tok_s) + " tok/s");
  if (k.max_ttft_ms) add("first token <= " + fixed(*k.max_ttft_ms, 0) + " ms");
  if (k.max_memory_gib) add("memory <= " + fixed(*k.max_memory_gib, 2) + " GiB");
  if (k.max_loss_points) add("loss <= " + fixed(*k.max_loss_points) + " points");
  if (k.max_joules_per_token) add("<= " + fixed(*k.max_joules_per_token, 3) + " J/token");
  if (k.max_power_w) add("<= " + fixed(*k.max_power_w) + " W");
  return s.empty() ? "none" : s;
}

// Prefill's FLOPs do not depend on the weight format, so each path's need is one figure: the
// effective rate over that path's mid derating. The formats that can take the path follow.
void print_paths(std::ostream& out, const solver::Requirements& r) {
  if (r.needs.empty() || r.needs.front().prefill_gops <= 0) return;
  out << "\nprefill compute: " << ops(r.needs.front().prefill_gops) << "OP/s effective; the peak each path needs:\n";
  // Per path, the backend that reaches the largest share of it over the formats in the table.
  std::vector<solver::PathNeed> best;
  for (const auto& n : r.needs)
    for (const auto& p : n.paths) {
      auto it = std::find_if(best.begin(), best.end(), [&](const solver::PathNeed& b) { return b.path == p.path; });
      if (it == best.end()) best.push_back(p);
      else if (p.compute_fraction > it->compute_fraction) *it = p;
    }
  for (const auto& p : best) {
    std::string formats;
    for (const auto& m : r.needs)
      if (m.kv == r.needs.front().kv && m.excluded.empty() &&
          std::any_of(m.paths.begin(), m.paths.end(), [&](const solver::PathNeed& q) { return q.path == p.path; }))
        formats += (formats.empty() ? "" : " ") + std::string(info(m.weights).name);
    out << "  " << pad(std::string(info(p.path).name), 17) << pad(ops(p.peak_gops) + "OP/s", 12)
        << pad("(" + std::string(info(p.backend).name) + " x" + fixed(p.compute_fraction, 2) + ")", 16) << formats << "\n";
  }
}

// Device RAM per class for each format the limits leave (f16 KV rows; q8_0 is a little less).
void print_ram(std::ostream& out, const solver::Requirements& r) {
  if (r.needs.empty()) return;
  out << "\ndevice RAM needed (runtime and OS reserve included; kv " << info(r.needs.front().kv).name << "):\n  " << pad("weights", 16);
  for (const auto& [device_class, gib] : r.needs.front().ram_gib_by_class) out << pad(device_class, 9);
  out << "\n";
  for (const auto& n : r.needs) {
    if (n.kv != r.needs.front().kv || !n.excluded.empty()) continue;
    out << "  " << pad(std::string(info(n.weights).name), 16);
    for (const auto& [device_class, gib] : n.ram_gib_by_class) out << pad(fixed(gib, 1), 9);
    out << "\n";
  }
}

void print_needs(std::ostream& out, const solver::Requirements& r) {
  out << "\nwhat a target needs (effective: what the engine must reach; - where no limit asks for it):\n"
      << "  " << pad("weights", 16) << pad("kv", 6) << pad("read/token", 12) << pad("bandwidth", 12) << pad("decode", 10)
      << pad("prefill", 10) << pad("memory", 11) << "loss\n";
  for (const auto& n : r.needs) {
    out << "  " << pad(std::string(info(n.weights).name), 16) << pad(std::string(info(n.kv).name), 6)
        << pad(fixed(n.bytes_per_token / 1e9, 2) + " GB", 12) << pad(n.bandwidth_gbps > 0 ? fixed(n.bandwidth_gbps, 0) + " GB/s" : "-", 12)
        << pad(n.decode_gops > 0 ? ops(n.decode_gops) + "OP/s" : "-", 10) << pad(n.prefill_gops > 0 ? ops(n.prefill_gops) + "OP/s" : "-", 10)
        << pad(fixed(n.memory_gib, 2) + " GiB", 11)
        << "-" << fixed(n.loss_points) << " pts";
    if (!n.excluded.empty()) {
      out << "  (breaks ";
      for (std::size_t i = 0; i < n.excluded.size(); ++i) out << (i ? ", " : "") << n.excluded[i];
      out << ")";
    }
    out << "\n";
  }
  print_paths(out, r);
  print_ram(out, r);
}

void print_devices(std::ostream& out, const solver::Requirements& r, bool all) {
  std::size_t qualify = 0, near = 0;
  for (const auto& v : r.devices) qualify += v.qualifies, near += v.near_miss;
  out << "\ndevices that qualify (" << qualify << " of " << r.devices.size() << "), largest margin first:\n";
  for (const auto& v : r.devices) {
    if (!v.qualifies) continue;
    const auto& c = *v.plan;
    out << "  " << pad(v.device->id, 30) << pad("x" + fixed(v.margin, 2), 8) << pad(fixed(c.tok_s()) + " tok/s", 12)
        << pad(fixed(c.ttft_ms(), 0) + " ms", 9) << pad(fixed(c.memory_gib(), 2) + " GiB", 10) << describe(c.config) << "\n      ";
    for (std::size_t i = 0; i < v.margins.size(); ++i) out << (i ? ", " : "") << v.margins[i];
    out << "\n";
  }
  if (!qualify) out << "  none\n";
  out << "\nnear-misses (" << near << ": one limit short), closest first:\n";
  for (const auto& v : r.devices) {
    if (!v.near_miss) continue;
    out << "  " << pad(v.device->id, 30) << "x" << fixed(v.margin, 2) << " of the limit\n";
    for (const auto& l : v.lacks) out << "      lacks " << l << "\n";
  }
  const std::size_t rest = r.devices.size() - qualify - near;
  out << "\nothers (" << rest << ": two or more limits short" << (all ? ")" : "; --all lists them)") << "\n";
  if (!all) return;
  for (const auto& v : r.devices) {
    if (v.qualifies || v.near_miss) continue;
    out << "  " << v.device->id << ": " << (v.lacks.empty() ? std::string("-") : v.lacks.front()) << "\n";
  }
}

nlohmann::json to_json(const solver::Requirements& r, const models::Model& m, const solver::Profile& p) {
  using nlohmann::json;
  json needs = json::array();
  for (const auto& n : r.needs) {
    json ram = json::object();
    for (const auto& [device_class, gib] : n.ram_gib_by_class) ram[device_class] = gib;
    json paths = json::array();
    for (const auto& x : n.paths)
      paths.push_back({{"path", info(x.path).name}, {"backend", info(x.backend).name}, {"compute_fraction", x.compute_fraction},
                       {"peak_gops", x.peak_gops}});
    needs.push_back({{"weights", info(n.weights).name}, {"kv", info(n.kv).name}, {"bytes_per_token", n.bytes_per_token},
                     {"bandwidth_gbps", n.bandwidth_gbps}, {"decode_gops", n.decode_gops}, {"prefill_gops", n.prefill_gops},
                     {"prefill_paths", paths}, {"memory_gib", n.memory_gib}, {"ram_gib_by_class", ram}, {"loss_points", n.loss_points}, {"excluded", n.excluded}});
  }
  json devices = json::array();
  for (const auto& v : r.devices) {
    json d = {{"id", v.device->id}, {"class", v.device->device_class},
              {"status", v.qualifies ? "qualifies" : v.near_miss ? "near_miss" : "no"},
              {"margin", v.margin}, {"margins", v.margins}, {"lacks", v.lacks}};
    if (v.plan) d["plan"] = solver::candidate_to_json(*v.plan);
    devices.push_back(d);
  }
  auto opt = [](const std::optional<double>& x) { return x ? json(*x) : json(); };
  const auto& k = r.limits;
  return {{"schema", "trilemma.requirements"}, {"schema_version", 1}, {"model", m.id}, {"scenario", p.id},
          {"context", r.context}, {"prompt", r.prompt},
          {"limits", {{"min_decode_tok_s", opt(k.min_decode_tok_s)}, {"max_ttft_ms", opt(k.max_ttft_ms)},
                      {"max_memory_gib", opt(k.max_memory_gib)}, {"max_loss_points", opt(k.max_loss_points)},
                      {"max_joules_per_token", opt(k.max_joules_per_token)}, {"max_power_w", opt(k.max_power_w)}}},
          {"needs", needs}, {"devices", devices}};
}

int run_requirements(const RequirementsFlags& f) {
  auto model = models::resolve_model(f.model);
  if (!model.ok()) return report_error(model.error());
  auto profile = solver::resolve_profile(f.scenario);
  if (!profile.ok()) return report_error(profile.error());
  auto catalog = models::builtin_models();
  if (!catalog.ok()) return report_error(catalog.error());
  auto devices = devices::builtin_devices();
  if (!devices.ok()) return report_error(devices.error());
  solver::RequirementsRequest req;
  req.model = &*model, req.profile = *profile, req.context = f.context, req.prompt = f.prompt;
  req.budgets.min_decode_tok_s = f.min_tok_s, req.budgets.max_ttft_ms = f.max_ttft_ms;
  req.budgets.max_memory_gib = f.max_memory_gib, req.budgets.max_loss_points = f.max_loss_points;
  req.budgets.max_joules_per_token = f.max_joules_per_token, req.budgets.max_power_w = f.max_power_w;
  req.sustained_minutes = f.sustained, req.devices = &*devices, req.catalog = &*catalog;
  for (const auto& n : solver::looser_than_profile(*profile, req.budgets)) warn("{}", n);
  auto r = solver::requirements(req);
  if (!r.ok()) return report_error(r.error());
  if (f.as_json) {
    std::cout << json_text(to_json(*r, *model, *profile)) << "\n";
  } else {
    std::cout << "requirements: " << model->id << ", " << profile->name << ", context " << r->context << ", prompt " << r->prompt
              << "\n  limits: " << limits_text(r->limits) << "\n";
    print_needs(std::cout, *r);
    print_devices(std::cout, *r, f.all);
  }
  const bool any = std::any_of(r->devices.begin(), r->devices.end(), [](const auto& v) { return v.qualifies; });
  return any ? k_exit_ok : k_exit_infeasible;
}

}  // namespace

void add_requirements_command(CLI::App& app, Handler& handler) {
  static RequirementsFlags f;
  auto* cmd = app.add_subcommand("requirements", "What hardware a model needs under a scenario's limits, and which devices have it");
  cmd->add_option("--model,-m", f.model, "catalog id, .gguf file or config.json")->required();
  cmd->add_option("--scenario,-s", f.scenario, "latency | memory | accuracy | battery | profile.yaml")->capture_default_str();
  const auto finite_positive = cli::finite_positive();
  cmd->add_option("--context", f.context, "context length in tokens (default: the scenario's)")->check(CLI::Range(1u, k_max_context));
  cmd->add_option("--prompt", f.prompt, "prompt tokens for TTFT (default: the scenario's)")->check(CLI::Range(1u, k_max_context));
  cmd->add_option("--min-tok-s", f.min_tok_s, "limit: decode tokens per second")->check(finite_positive);
  cmd->add_option("--max-ttft-ms", f.max_ttft_ms, "limit: time to first token")->check(finite_positive);
  cmd->add_option("--max-memory-gib", f.max_memory_gib, "limit: peak memory")->check(finite_positive);
  cmd->add_option("--max-loss-points", f.max_loss_points, "limit: benchmark points lost to quantization")->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--max-joules-per-token", f.max_joules_per_token, "limit: energy per generated token")->check(finite_positive);
  cmd->add_option("--max-power-w", f.max_power_w, "limit: the device's draw")->check(finite_positive);
  cmd->add_option("--sustained", f.sustained, "size for the speed held after this many minutes (throttling)")->check(finite_positive);
  cmd->add_flag("--all", f.all, "also list the devices two or more limits short, with the first reason");
  cmd->add_flag("--json", f.as_json, "print the requirements document (docs/json-schemas.md) instead of the report");
  cmd->callback([&] { handler = [] { return run_requirements(f); }; });
}

}  // namespace trilemma::cli
