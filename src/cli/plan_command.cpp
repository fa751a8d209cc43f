// `trilemma plan --model M --device D [--scenario S] [--context N] [budgets] [pins] [--json]`
#include <nlohmann/json.hpp>

#include <algorithm>
#include <deque>
#include <iostream>
#include <sstream>

#include "cli/json_output.hpp"
#include "cli/log.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/format.hpp"
#include "cli/report_files.hpp"
#include "cli/validators.hpp"
#include "cli/standard_streams.hpp"
#include "devices/device_db.hpp"
#include "emitters/emitter.hpp"
#include "io/atomic_write.hpp"
#include "models/catalog.hpp"
#include "models/measured_loss.hpp"
#include "report/html_report.hpp"
#include "report/plan_plots.hpp"
#include "solver/plan_document.hpp"
#include "solver/limits.hpp"

namespace trilemma::cli {
namespace {

// A KV strategy's parameter as plan pins it (the row's flag): a whole number or a share.
struct KvParamFlag {
  const KvStrategyInfo* strategy;
  const KvStrategyParam* param;
  std::optional<std::uint32_t> whole;
  std::optional<double> share;
};

struct PlanFlags {
  std::string model, device, scenario = "latency", out, emit, report, svg_dir;
  std::uint32_t context = 0, prompt = 0;
  std::optional<double> max_memory_gib, min_tok_s, max_ttft_ms, max_loss_points, ram_gib;
  std::optional<double> max_joules_per_token, max_power_w, sustained_minutes;
  std::string weights, kv, kv_strategy, backend, draft, draft_model;
  std::vector<std::string> measured_kl;
  std::string imatrix;
  std::optional<std::uint32_t> threads, draft_len;
  std::deque<KvParamFlag> kv_params;  // one per parameter of kv_strategies(), bound to its flag
  bool no_speculative = false, speculative = false, as_json = false;
  std::size_t front = 8;
};

// --kv, --kv-strategy and each strategy's parameters (--window, --sinks, --kv-resident): a
// parameter that pins its strategy does so unless a strategy is named (the first one given, in
// table order).
Status set_kv_pins(solver::Pins& p, const PlanFlags& f) {
  if (!f.kv.empty()) {
    auto t = tensor_type_from_name(f.kv);
    if (!t || !is_kv_format(*t)) return make_error(ErrorKind::usage, "--kv", "", "unknown KV format '" + f.kv + "' (" + kv_format_names() + ")");
    p.kv = t;
  }
  if (!f.kv_strategy.empty()) {
    p.strategy = kv_strategy_from_name(f.kv_strategy);
    if (!p.strategy)
      return make_error(ErrorKind::usage, "--kv-strategy", "",
                        "unknown KV strategy '" + f.kv_strategy + "' (expected one of: " + kv_strategy_names() + ")");
  }
  for (const KvParamFlag& k : f.kv_params) {
    if (!k.whole && !k.share) continue;
    if (k.share && !(*k.share > 0 && *k.share <= 1)) return make_error(ErrorKind::usage, std::string(k.param->flag), "", "must be in (0, 1]");
    p.kv_params[std::string(k.param->key)] = k.whole ? double(*k.whole) : *k.share;
    if (k.param->pins_strategy && !p.strategy) p.strategy = k.strategy->strategy;
  }
  return Ok{};
}

// --speculative, --no-speculative, --draft, --draft-model, --draft-len.
Status set_draft_pins(solver::Pins& p, const PlanFlags& f) {
  if (f.no_speculative) p.speculative = false;
  if (f.speculative || !f.draft.empty() || !f.draft_model.empty()) p.speculative = true;
  if (!f.draft.empty()) {
    p.draft_kind = draft_kind_from_name(f.draft);
    if (!p.draft_kind || *p.draft_kind == DraftKind::none)
      return make_error(ErrorKind::usage, "--draft", "", "expected one of: " + draft_kind_names(false) + " (got '" + f.draft + "')");
  }
  if (!f.draft_model.empty()) p.draft_model = f.draft_model, p.draft_kind = DraftKind::model;
  p.draft_len = f.draft_len;
  return Ok{};
}

Result<solver::Pins> pins_from(const PlanFlags& f) {
  solver::Pins p;
  if (!f.weights.empty()) {
    p.weights = weight_format_from_name(f.weights);
    if (!p.weights)
      return make_error(ErrorKind::usage, "--weights", "",
                        "unknown weight format '" + f.weights + "' (expected one of: " + weight_format_names() + ")");
  }
  if (!f.imatrix.empty()) {
    if (f.imatrix != "yes" && f.imatrix != "no")
      return make_error(ErrorKind::usage, "--imatrix", "", "expected yes or no, got '" + f.imatrix + "'");
    p.imatrix = f.imatrix == "yes";
  }
  if (auto s = set_kv_pins(p, f); !s.ok()) return s.error();
  if (!f.backend.empty()) {
    p.backend = backend_from_name(f.backend);
    if (!p.backend)
      return make_error(ErrorKind::usage, "--backend", "", "unknown backend '" + f.backend + "' (expected one of: " + backend_names() + ")");
  }
  p.threads = f.threads;
  if (auto s = set_draft_pins(p, f); !s.ok()) return s.error();
  return p;
}

void print_candidate_line(std::ostream& out, const solver::Candidate& c) {
  out << "    " << pad(fixed(c.tok_s(), 1) + " tok/s", 13) << pad(fixed(c.ttft_ms(), 0) + " ms", 10)
            << pad(fixed(c.memory_gib(), 2) + " GiB", 11) << pad("-" + fixed(c.loss_points(), 1) + " pts", 11)
            << pad(c.estimate.energy.known ? fixed(c.joules_per_token(), 3) + " J/t" : "- J/t", 11) << describe(c.config) << "\n";
}

// Energy per generated and prompt token, the draw behind it, and the battery share where known.
void print_energy(std::ostream& out, const EnergyEstimate& e) {
  if (!e.known) {
    out << "  energy     unknown: " << e.basis << "\n";
    return;
  }
  out << "  energy     " << fixed(e.joules_per_token.mid, 3) << " J/token (" << fixed(e.joules_per_token.low, 3) << "-"
      << fixed(e.joules_per_token.high, 3) << ") at " << fixed(e.decode_w.mid, 1) << " W; prompt "
      << fixed(e.joules_per_prompt_token.mid, 4) << " J/token at " << fixed(e.prefill_w.mid, 1) << " W";
  if (e.battery_pct_per_1k_tokens)
    out << "; " << fixed(e.battery_pct_per_1k_tokens->mid, 2) << "% of the battery per 1,000 tokens ("
        << fixed(e.battery_pct_per_1k_tokens->low, 2) << "-" << fixed(e.battery_pct_per_1k_tokens->high, 2) << ")";
  out << "\n";
}

// The share of peak speed the plan is computed at (the mid of the device's or class's range).
void print_sustained(std::ostream& out, const power::Sustained& s) {
  const auto& f = s.fraction;
  out << "  sustained  x" << fixed(f.mid, 2) << " of peak speed"
      << (f.low < f.high ? " (the mid of " + fixed(f.low, 2) + "-" + fixed(f.high, 2) + ")" : std::string()) << ": " << s.basis << "\n";
}

// The chosen plan: each predicted figure with its range, what it gives up, its basis, the runners-up.
void print_chosen(std::ostream& out, const solver::PlanResult& r, const solver::Profile& p) {
  const auto& c = *r.chosen;
  const auto& e = c.estimate;
  out << "\nchosen: " << describe(c.config) << "\n"
            << "  decode     " << fixed(e.latency.decode_tok_s.mid) << " tok/s  (" << fixed(e.latency.decode_tok_s.low)
            << "-" << fixed(e.latency.decode_tok_s.high) << ", " << e.latency.bound << "-bound, "
            << fixed(e.latency.bytes_per_token / 1e6, 0) << " MB read per token at "
            << fixed(e.latency.effective_bandwidth_gbps, 1) << " GB/s effective)\n"
            << "  TTFT       " << fixed(e.latency.ttft_ms.mid, 0) << " ms  (" << fixed(e.latency.ttft_ms.low, 0) << "-"
            << fixed(e.latency.ttft_ms.high, 0) << ") for a " << r.prompt << "-token prompt\n"
            << "  memory     " << gib(e.memory.total_bytes) << " of " << gib(e.memory.usable_bytes) << " usable: weights "
            << gib(e.memory.weights_bytes) << ", KV " << gib(e.memory.kv_bytes)
            << (e.memory.kv_spilled_bytes > 0 ? " (+" + gib(e.memory.kv_spilled_bytes) + " offloaded)" : "")
            << ", scratch " << gib(e.memory.scratch_bytes) << ", runtime " << gib(e.memory.runtime_bytes)
            << (e.memory.draft_bytes > 0 ? ", draft " + gib(e.memory.draft_bytes) : "") << "\n"
            << "  accuracy   -" << fixed(e.accuracy.points.mid) << " points (" << fixed(e.accuracy.points.low) << "-"
            << fixed(e.accuracy.points.high) << "), KLD " << fixed(e.accuracy.kld.mid, 4) << ", PPL +"
            << fixed(e.accuracy.ppl_delta_pct.mid, 2) << "%\n";
  print_energy(out, e.energy);
  if (r.sustained) print_sustained(out, *r.sustained);
  if (c.config.speculative.on())
    out << "  speculative acceptance " << fixed(e.latency.acceptance, 2) << " (prior), "
              << fixed(e.latency.tokens_per_pass, 2) << " tokens per target pass, speed-up x"
              << fixed(e.latency.speedup, 2) << ", draft cost ratio " << fixed(e.latency.draft_cost_ratio, 3) << "\n";
  out << "  gives up   " << r.gives_up << "  (keeps " << p.keeps << ")\n"
            << "  binding    " << (r.binding.empty() ? "none: no constraint kept a better-ranked plan out" : r.binding) << "\n"
            << "  basis\n";
  for (const auto& b : e.basis) out << "    - " << b << "\n";
  if (!r.runners_up.empty()) {
    out << "\nrunners-up:\n";
    for (const auto& x : r.runners_up) print_candidate_line(out, x);
  }
}

// No plan: the smallest relaxation per constraint, and smaller models of the family.
void print_infeasible(std::ostream& out, const solver::PlanResult& r) {
  out << "\nno feasible plan. What would make one feasible (smallest relaxation per constraint):\n";
  for (const auto& x : r.relaxations) out << "  - " << x.message << "\n";
  if (!r.smaller_models.empty()) {
    out << "  or a smaller model of the same family:\n";
    for (const auto& s : r.smaller_models) out << "    " << s << "\n";
  }
}

// The Pareto front's rows, spread from the fastest to the most accurate.
void print_front(std::ostream& out, const solver::PlanResult& r, std::size_t front_rows) {
  out << "\nPareto front (decode tok/s, memory, quality loss; J per token shown; " << r.front.size() << " plans";
  if (r.front.size() > front_rows) out << ", " << front_rows << " shown, --front N for more";
  out << "):\n";
  for (std::size_t i = 0; i < std::min(front_rows, r.front.size()); ++i) {
    const std::size_t k = front_rows >= r.front.size() ? i : i * (r.front.size() - 1) / std::max<std::size_t>(1, front_rows - 1);
    print_candidate_line(out, r.front[k]);
  }
}

void print_report(std::ostream& out, const solver::PlanResult& r, const models::Model& m, const devices::Device& d,
                  const solver::Profile& p, std::size_t front_rows) {
  out << "plan: " << m.id << " on " << d.id << " (" << d.name << "), " << p.name << ", context " << r.context
            << ", prompt " << r.prompt << "\n"
            << "  searched " << r.evaluated << " configurations, " << r.feasible << " feasible\n";
  if (r.chosen) print_chosen(out, r, p);
  else print_infeasible(out, r);
  print_front(out, r, front_rows);
}

// --emit's emitter (nullptr without --emit).
Result<const emitters::EmitterInfo*> emitter_of(const PlanFlags& f) {
  if (f.emit.empty()) return static_cast<const emitters::EmitterInfo*>(nullptr);
  const auto* emitter = emitters::find_emitter(f.emit);
  if (!emitter)
    return make_error(ErrorKind::usage, "--emit", "", "unknown format '" + f.emit + "' (expected one of: " + emitters::emitter_names() + ")");
  if (f.out.empty()) return make_error(ErrorKind::usage, "--emit", "", "needs --out PATH");
  return emitter;
}

// The model, with the KL divergences the user measured (--measured-kl).
Result<models::Model> model_of(const PlanFlags& f) {
  TRILEMMA_TRY(model, models::resolve_model(f.model));
  for (const auto& spec : f.measured_kl) {
    TRILEMMA_TRY(measured, models::parse_measured_kl(spec));
    model.measured_loss.push_back(std::move(measured));
  }
  return model;
}

// The device, with --ram-gib in place of its memory.
Result<devices::Device> device_of(const PlanFlags& f) {
  TRILEMMA_TRY(device, devices::resolve_device(f.device));
  if (f.ram_gib) {
    if (!(*f.ram_gib > 0)) return make_error(ErrorKind::usage, "--ram-gib", "", "must be > 0");
    device.ram_gib = *f.ram_gib;
  }
  return device;
}

// --out: the emitted deployment config (read back from the plan document, exactly as `emit
// --plan` does), or the plan document itself without --emit.
Status write_outputs(const PlanFlags& f, const emitters::EmitterInfo* emitter, const nlohmann::json& doc, bool chosen) {
  if (emitter && chosen) {
    TRILEMMA_TRY(parsed, solver::parse_plan_document(json_text(doc, -1), "plan"));
    TRILEMMA_TRY(emission, emitter->emit(parsed));
    if (auto w = emitters::write_emission(emission, f.out); !w.ok()) return w.error();
    for (const auto& n : emission.not_expressed) warn("{}", emitters::describe(n));
  } else if (!f.out.empty() && !emitter) {
    if (auto w = io::write_file_atomically(f.out, json_text(doc) + "\n"); !w.ok()) return w.error();
  }
  return Ok{};
}

// --svg DIR and --report FILE.html: the chosen plan's plots, and the page that holds them with
// the text report and the basis of its figures. Without a plan the page has the text alone.
Status write_pictures(const PlanFlags& f, const solver::PlanResult& r, const solver::PlanRequest& req) {
  if (f.report.empty() && f.svg_dir.empty()) return Ok{};
  std::ostringstream text;
  print_report(text, r, *req.model, *req.device, req.profile, f.front);
  const report::HtmlReport page{"trilemma plan: " + req.model->id + " on " + req.device->id + ", " + req.profile.name, text.str(),
                                report::plan_plots(r, *req.device, report::effective_limits(req.profile.constraints, req.budgets)),
                                r.chosen ? r.chosen->estimate.basis : std::vector<std::string>{}};
  return write_report_files(f.report, f.svg_dir, page);
}

int run_plan(const PlanFlags& f) {
  if (auto s = one_standard_output({{"--out", f.out}, {"--report", f.report}}); !s.ok()) return report_error(s.error());
  auto emitter = emitter_of(f);
  if (!emitter.ok()) return report_error(emitter.error());
  auto pins = pins_from(f);
  if (!pins.ok()) return report_error(pins.error());
  auto model = model_of(f);
  if (!model.ok()) return report_error(model.error());
  auto device = device_of(f);
  if (!device.ok()) return report_error(device.error());
  auto profile = solver::resolve_profile(f.scenario);
  if (!profile.ok()) return report_error(profile.error());
  auto catalog = models::builtin_models();
  if (!catalog.ok()) return report_error(catalog.error());
  if (pins->backend && !device->has_backend(*pins->backend))
    return report_error(make_error(ErrorKind::usage, "--backend", "", "device " + device->id + " has no '" + std::string(info(*pins->backend).name) + "' backend"));
  solver::PlanRequest req;
  req.model = &*model, req.device = &*device, req.profile = *profile, req.context = f.context, req.prompt = f.prompt;
  req.budgets.max_memory_gib = f.max_memory_gib, req.budgets.min_decode_tok_s = f.min_tok_s;
  req.budgets.max_ttft_ms = f.max_ttft_ms, req.budgets.max_loss_points = f.max_loss_points;
  req.budgets.max_joules_per_token = f.max_joules_per_token, req.budgets.max_power_w = f.max_power_w;
  req.sustained_minutes = f.sustained_minutes;
  for (const auto& n : solver::looser_than_profile(*profile, req.budgets)) warn("{}", n);
  req.pins = *pins, req.catalog = &*catalog;
  auto result = solver::plan(req);
  if (!result.ok()) return report_error(result.error());
  const bool ranks_energy = std::any_of(profile->objective.begin(), profile->objective.end(),
                                        [](const solver::Objective& o) { return o.metric == solver::Metric::joules_per_token; });
  if (ranks_energy && result->chosen && !result->chosen->estimate.energy.known)
    warn("the {} scenario ranks by energy, and no power figure covers {}: {}", profile->id, device->id,
         result->chosen->estimate.energy.basis);
  const auto doc = solver::plan_to_json(*result, *model, *device, *profile);
  if (auto w = write_outputs(f, *emitter, doc, result->chosen.has_value()); !w.ok()) return report_error(w.error());
  if (auto w = write_pictures(f, *result, req); !w.ok()) return report_error(w.error());
  std::ostream& out = report_stream({f.out, f.report});
  if (f.as_json) out << json_text(doc) << "\n";
  else print_report(out, *result, *model, *device, *profile, f.front);
  return result->chosen ? k_exit_ok : k_exit_infeasible;
}

// Each KV strategy's parameters as plan's pins, in table order, from the strategy rows.
void add_kv_param_flags(CLI::App* cmd, PlanFlags& f) {
  f.kv_params.clear();
  for (const KvStrategyInfo& row : kv_strategies())
    for (const KvStrategyParam& param : row.params) {
      auto& k = f.kv_params.emplace_back(KvParamFlag{&row, &param, {}, {}});
      const std::string flag(param.flag), help(param.help);
      if (param.whole) cmd->add_option(flag, k.whole, help)->check(CLI::Range(param.min_whole, k_max_context));
      else cmd->add_option(flag, k.share, help);
    }
}

}  // namespace

void add_plan_command(CLI::App& app, Handler& handler) {
  static PlanFlags f;
  auto* cmd = app.add_subcommand("plan", "Choose a deployment configuration and predict its latency, memory and accuracy");
  cmd->add_option("--model,-m", f.model, "catalog id, .gguf file or config.json")->required();
  cmd->add_option("--device,-d", f.device, "device id, device YAML, or host")->required();
  cmd->add_option("--scenario,-s", f.scenario, "latency | memory | accuracy | battery | profile.yaml")->capture_default_str();
  const auto finite_positive = cli::finite_positive();
  cmd->add_option("--context", f.context, "context length in tokens (default: the scenario's)")
      ->check(CLI::Range(1u, k_max_context));
  cmd->add_option("--prompt", f.prompt, "prompt tokens for TTFT (default: the scenario's)")->check(CLI::Range(1u, k_max_context));
  cmd->add_option("--ram-gib", f.ram_gib, "plan for this RAM size of the device (default: its default_ram_gib)")->check(finite_positive);
  cmd->add_option("--max-memory-gib", f.max_memory_gib, "budget: peak memory")->check(finite_positive);
  cmd->add_option("--min-tok-s", f.min_tok_s, "budget: decode tokens per second")->check(finite_positive);
  cmd->add_option("--max-ttft-ms", f.max_ttft_ms, "budget: time to first token")->check(finite_positive);
  cmd->add_option("--max-loss-points", f.max_loss_points, "budget: benchmark points lost to quantization")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--max-joules-per-token", f.max_joules_per_token, "budget: energy per generated token (docs/power.md)")
      ->check(finite_positive);
  cmd->add_option("--max-power-w", f.max_power_w, "budget: the device's draw while decoding or prefilling")->check(finite_positive);
  cmd->add_option("--sustained", f.sustained_minutes,
                  "plan for the speed held after this many minutes of continuous generation (throttling; default: the scenario's, else peak)")
      ->check(finite_positive);
  cmd->add_option("--weights", f.weights, "pin the weight format (" + weight_format_names() + ")");
  cmd->add_option("--measured-kl", f.measured_kl, models::k_measured_kl_help);
  cmd->add_option("--imatrix", f.imatrix,
                  "yes | no: llama.cpp weights quantized with an importance matrix or not (default: wherever the loss model says it lowers the loss)");
  cmd->add_option("--kv", f.kv, "pin the KV format (" + kv_format_names() + ")");
  cmd->add_option("--kv-strategy", f.kv_strategy, "pin the KV strategy (" + kv_strategy_names() + ")");
  add_kv_param_flags(cmd, f);
  cmd->add_option("--backend", f.backend, "pin the backend (" + backend_names() + ")");
  cmd->add_option("--threads", f.threads, "pin the CPU thread count")->check(CLI::Range(0u, k_max_threads));
  cmd->add_flag("--no-speculative", f.no_speculative, "plain decoding only");
  cmd->add_flag("--speculative", f.speculative, "speculative decoding only");
  cmd->add_option("--draft", f.draft, "pin the draft source: " + draft_kind_names(false));
  cmd->add_option("--draft-model", f.draft_model, "pin the draft model (catalog id, same tokenizer)");
  cmd->add_option("--draft-len", f.draft_len, "pin the draft length g")->check(CLI::Range(1u, k_max_draft_len));
  cmd->add_option("--front", f.front, "Pareto-front rows to print")->capture_default_str();
  cmd->add_option("--out", f.out, std::string("also write the plan document (JSON) to this file, or the --emit config") + k_stdout_help);
  cmd->add_option("--emit", f.emit, "write --out in this format instead: " + emitters::emitter_names());
  cmd->add_option("--report", f.report, std::string(k_report_help) + k_stdout_help);
  cmd->add_option("--svg", f.svg_dir, std::string(k_svg_help) + " (roofline, triangle, tradeoff, memory)");
  cmd->add_flag("--json", f.as_json, "print the plan document (docs/plan-schema.md) instead of the report");
  cmd->callback([&] { handler = [] { return run_plan(f); }; });
}

}  // namespace trilemma::cli
