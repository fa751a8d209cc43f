#include "solver/planner.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "accuracy/accuracy_model.hpp"
#include "devices/device_db.hpp"
#include "solver/limits.hpp"
#include "types/number_text.hpp"

namespace trilemma::solver {
namespace {

constexpr std::uint32_t k_draft_lens[] = {3, 5};


bool allowed(const std::vector<std::string>& list, std::string_view name) {
  return list.empty() || std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace

Result<ContextWindow> context_window(const Profile& profile, const models::Model& model, std::uint32_t context,
                                     std::uint32_t prompt) {
  ContextWindow w;
  // The profile's default context, unless the model was trained for less.
  w.context = context ? context : std::min(profile.default_context, model.shape.context);
  w.prompt = std::min(prompt ? prompt : profile.default_prompt, w.context);
  if (w.context > model.shape.context)
    return make_error(ErrorKind::infeasible, "--context", "",
                      "context " + std::to_string(w.context) + " exceeds the model's trained context " +
                          std::to_string(model.shape.context));
  return w;
}

Constraints merge_constraints(const Constraints& a, const Constraints& b) {
  Constraints c = a;
  for (const LimitInfo& l : limits()) c.*l.field = tighter(l, a.*l.field, b.*l.field);
  if (!b.allowed_weights.empty()) c.allowed_weights = b.allowed_weights;
  if (!b.allowed_kv.empty()) c.allowed_kv = b.allowed_kv;
  return c;
}

namespace {

// The constraints `c` violates: "name: message" with `text`, the bare name without (the search
// checks thousands of plans and reports a few, so it formats only those).
std::vector<Violation> violations(const Candidate& c, const Constraints& k, double usable_gib, bool text) {
  std::vector<Violation> v;
  auto add = [&](const char* name, auto&& message) { v.push_back({name, text ? message() : std::string()}); };
  if (c.memory_gib() > usable_gib)
    add("device_memory", [&] { return "needs " + fixed(c.memory_gib(), 2) + " GiB; the device offers " + fixed(usable_gib, 2) + " GiB"; });
  if (k.max_memory_gib && c.memory_gib() > *k.max_memory_gib)
    add("max_memory_gib", [&] { return "needs " + fixed(c.memory_gib(), 2) + " GiB > " + fixed(*k.max_memory_gib, 2); });
  if (k.min_decode_tok_s && c.tok_s() < *k.min_decode_tok_s)
    add("min_decode_tok_s", [&] { return fixed(c.tok_s()) + " tok/s < " + fixed(*k.min_decode_tok_s); });
  if (k.max_ttft_ms && c.ttft_ms() > *k.max_ttft_ms)
    add("max_ttft_ms", [&] { return fixed(c.ttft_ms(), 0) + " ms > " + fixed(*k.max_ttft_ms, 0); });
  if (k.max_loss_points && c.loss_points() > *k.max_loss_points)
    add("max_loss_points", [&] { return "loses " + fixed(c.loss_points()) + " points > " + fixed(*k.max_loss_points); });
  const auto& energy = c.estimate.energy;
  if (k.max_joules_per_token && c.joules_per_token() > *k.max_joules_per_token)
    add("max_joules_per_token", [&] {
      return energy.known ? fixed(c.joules_per_token(), 3) + " J/token > " + fixed(*k.max_joules_per_token, 3) : energy.basis;
    });
  if (k.max_power_w && c.power_w() > *k.max_power_w)
    add("max_power_w", [&] { return energy.known ? "draws " + fixed(c.power_w()) + " W > " + fixed(*k.max_power_w) : energy.basis; });
  if (!allowed(k.allowed_weights, info(c.config.weights).name))
    add("allowed_weights", [&] { return std::string(info(c.config.weights).name) + " is not allowed"; });
  if (!allowed(k.allowed_kv, info(c.config.kv_type).name))
    add("allowed_kv", [&] { return std::string(info(c.config.kv_type).name) + " is not allowed"; });
  return v;
}


// Strict lexicographic order over the objective's metrics (a strict weak ordering, for sorting).
bool better(const Candidate& a, const Candidate& b, const std::vector<Objective>& objective) {
  for (const auto& o : objective) {
    const double x = a.metric(o.metric), y = b.metric(o.metric);
    if (x == y) continue;
    return o.maximize ? x > y : x < y;
  }
  return false;
}

// Lexicographic choice with slack: keep the plans within each metric's tolerance of the best
// value, then move to the next metric, so a negligible gain in the first metric does not
// outweigh a large one in the next. Tolerances are measured from the best, which keeps the
// choice well defined (pairwise tolerant comparison is not transitive).
const Candidate* choose(std::vector<const Candidate*> pool, const std::vector<Objective>& objective) {
  for (const auto& o : objective) {
    if (pool.size() <= 1) break;
    double best = pool.front()->metric(o.metric);
    for (const auto* c : pool) best = o.maximize ? std::max(best, c->metric(o.metric)) : std::min(best, c->metric(o.metric));
    const double tol = std::max(o.tolerance, o.tolerance_pct / 100.0 * std::abs(best));
    std::erase_if(pool, [&](const Candidate* c) { return std::abs(c->metric(o.metric) - best) > tol; });
  }
  return *std::min_element(pool.begin(), pool.end(), [&](auto* a, auto* b) { return better(*a, *b, objective); });
}

// Pareto dominance over (tok/s max, memory min, loss min).
bool dominates(const Candidate& a, const Candidate& b) {
  const bool no_worse = a.tok_s() >= b.tok_s() && a.memory_gib() <= b.memory_gib() && a.loss_points() <= b.loss_points();
  const bool better_somewhere = a.tok_s() > b.tok_s() || a.memory_gib() < b.memory_gib() || a.loss_points() < b.loss_points();
  return no_worse && better_somewhere;
}

// The device's backends that run at least one weight format on it; a pinned backend must be one.
Result<std::vector<Backend>> backends_of(const PreparedDevice& pd, const Pins& pins) {
  const auto& d = *pd.device;
  auto plannable = [&](Backend b) {
    for (const auto& w : weight_formats())
      if (pd.efficiency(b, w.format)) return true;
    return false;
  };
  if (pins.backend) {
    if (!plannable(*pins.backend))
      return make_error(ErrorKind::input, d.origin, "backends",
                        "device " + d.id + " lists backend '" + std::string(info(*pins.backend).name) +
                            "', but the planner cannot cost it there: no compute path of that backend has a peak in the device file (" +
                            "see devices/README.md, compute paths), or the backend has no efficiency row in devices/derating.yaml");
    return std::vector<Backend>{*pins.backend};
  }
  std::vector<Backend> out;
  for (const auto& b : backends())
    if (d.has_backend(b.backend) && plannable(b.backend)) out.push_back(b.backend);
  if (out.empty()) out.push_back(Backend::cpu);
  return out;
}

std::vector<std::uint32_t> threads_of(const devices::Device& d, Backend backend, const Pins& pins) {
  if (pins.threads) return {*pins.threads};
  if (backend != Backend::cpu) return {d.total_cores()};
  std::vector<std::uint32_t> out = {d.total_cores()};
  std::uint32_t big = 0;
  for (const auto& c : d.clusters)
    if (c.kind != "efficiency") big += c.cores;
  if (big > 0 && big < d.total_cores()) out.push_back(big);
  return out;
}

// One strategy's configurations: every combination of its parameters' values (the pinned one,
// else the row's grid, else its fixed value), the grid's only where the row finds them worth it.
void add_kv_choices(const KvStrategyInfo& row, std::uint32_t context, const Pins& pins, std::vector<DeploymentConfig>& out) {
  DeploymentConfig base;
  base.kv_strategy = row.strategy;
  base.context = context;
  std::vector<DeploymentConfig> configs = {base};
  bool searched = false;
  for (const KvStrategyParam& param : row.params) {
    const auto pinned = pins.kv_params.find(param.key);
    std::vector<double> values;
    if (pinned != pins.kv_params.end()) values = {pinned->second};
    else if (param.searched.empty()) values = {param.unsearched};
    else values.assign(param.searched.begin(), param.searched.end()), searched = true;
    std::vector<DeploymentConfig> next;
    for (const auto& c : configs)
      for (double v : values) param.set(next.emplace_back(c), v);
    configs = std::move(next);
  }
  for (const auto& c : configs)
    if (!searched || !row.worth_searching || row.worth_searching(c)) out.push_back(c);
}

// The KV strategy and its parameters of every configuration the solver tries (the other fields
// are the defaults'); fixed-shape backends take only the strategies that allocate nothing.
std::vector<DeploymentConfig> kv_choices(std::uint32_t context, const Pins& pins, bool fixed_shapes) {
  std::vector<DeploymentConfig> out;
  for (const KvStrategyInfo& row : kv_strategies())
    if ((!pins.strategy || *pins.strategy == row.strategy) && (!fixed_shapes || row.fixed_shapes)) add_kv_choices(row, context, pins, out);
  return out;
}

std::vector<SpeculativeConfig> spec_choices(const models::Model& target, WeightFormat weights,
                                            const std::vector<models::Model>* catalog, const Pins& pins) {
  std::vector<SpeculativeConfig> out;
  if (!pins.speculative || !*pins.speculative) out.push_back({});
  if (pins.speculative && !*pins.speculative) return out;
  auto want = [&](DraftKind k) { return !pins.draft_kind || *pins.draft_kind == k; };
  std::vector<std::uint32_t> lens(std::begin(k_draft_lens), std::end(k_draft_lens));
  if (pins.draft_len) lens = {*pins.draft_len};
  const double target_params = count_parameters(target.shape).total();
  if (want(DraftKind::model) && catalog) {
    for (const auto& m : *catalog) {
      if (pins.draft_model && m.id != *pins.draft_model) continue;
      if (m.id == target.id || m.tokenizer_family != target.tokenizer_family) continue;
      if (!pins.draft_model && count_parameters(m.shape).total() * 4 > target_params) continue;
      for (auto g : lens) out.push_back({DraftKind::model, m.id, WeightFormat::q8_0, 0, g});
    }
  }
  if (want(DraftKind::self)) {
    for (auto f : {WeightFormat::q4_0, WeightFormat::q2_k}) {
      if (bits_per_element(info(f).bulk) >= bits_per_element(info(weights).bulk)) continue;
      for (auto g : lens) out.push_back({DraftKind::self, "", f, 0, g});
    }
  }
  if (want(DraftKind::layers) && target.shape.layers >= 4)
    for (auto g : lens) out.push_back({DraftKind::layers, "", weights, target.shape.layers / 4, g});
  return out;
}

// The formats a backend runs on the device; pinned-only ones (int3, int2) when pinned.
std::vector<WeightFormat> weight_choices(const PreparedDevice& pd, Backend backend, const Pins& pins) {
  if (pins.weights) return pd.efficiency(backend, *pins.weights) ? std::vector{*pins.weights} : std::vector<WeightFormat>{};
  std::vector<WeightFormat> out;
  for (const auto& row : weight_formats())
    if (!row.pinned_only && pd.efficiency(backend, row.format))
      out.push_back(row.format);
  return out;
}

std::vector<TensorType> kv_type_choices(Backend backend, const Pins& pins) {
  const auto& allowed = info(backend).kv;
  auto runs_kv = [&](TensorType t) { return allowed.empty() || std::find(allowed.begin(), allowed.end(), t) != allowed.end(); };
  if (pins.kv) return runs_kv(*pins.kv) ? std::vector{*pins.kv} : std::vector<TensorType>{};
  std::vector<TensorType> out;
  for (auto t : {TensorType::f16, TensorType::q8_0, TensorType::q4_0})
    if (runs_kv(t)) out.push_back(t);
  return out;
}

}  // namespace

double Candidate::metric(Metric m) const {
  switch (m) {
    case Metric::decode_tok_s: return tok_s();
    case Metric::ttft_ms: return ttft_ms();
    case Metric::memory_gib: return memory_gib();
    case Metric::loss_points: return loss_points();
    case Metric::joules_per_token: return joules_per_token();
  }
  return 0;
}

double Candidate::joules_per_token() const {
  return estimate.energy.known ? estimate.energy.joules_per_token.mid : std::numeric_limits<double>::infinity();
}

double Candidate::power_w() const {
  const auto& e = estimate.energy;
  return e.known ? std::max(e.decode_w.mid, e.prefill_w.mid) : std::numeric_limits<double>::infinity();
}

std::string corner_given_up(const Candidate& c) {
  const bool fast = c.ttft_ms() < 100 && c.tok_s() > 20;
  const bool small = c.memory_gib() <= 4.0;
  const bool accurate = c.loss_points() <= 1.0;
  std::vector<std::string> lost;
  if (!fast) lost.push_back("latency");
  if (!small) lost.push_back("memory");
  if (!accurate) lost.push_back("accuracy");
  if (lost.empty()) return "none";
  std::string s;
  for (const auto& l : lost) s += (s.empty() ? "" : "+") + l;
  return s;
}

Result<PlanResult> plan(const PlanRequest& req) {
  if (!req.model || !req.device) return make_error(ErrorKind::internal, "", "", "plan: model and device are required");
  const auto& model = *req.model;
  const auto& device = *req.device;
  PlanResult result;
  TRILEMMA_TRY(window, context_window(req.profile, model, req.context, req.prompt));
  result.context = window.context;
  result.prompt = window.prompt;
  const Constraints constraints = merge_constraints(req.profile.constraints, req.budgets);

  const PreparedModel target = PreparedModel::prepare(model);
  // Sustained load: the device as it runs after that long. Its draw stays: the power figures
  // are what devices draw under sustained load (a throttled SoC sits at its thermal envelope).
  const auto minutes = req.sustained_minutes ? req.sustained_minutes : req.profile.sustained_minutes;
  std::optional<devices::Device> throttled;
  if (minutes) {
    TRILEMMA_TRY(power_tables, power::power_tables());
    result.sustained = power::sustained_fraction(device, *minutes, *power_tables);
    throttled = power::throttled(device, result.sustained->fraction.mid);
  }
  TRILEMMA_TRY(prepared_device, PreparedDevice::prepare(throttled ? *throttled : device));
  std::map<std::string, PreparedModel> drafts;
  if (req.catalog)
    for (const auto& m : *req.catalog)
      if (m.tokenizer_family == model.tokenizer_family && m.id != model.id) drafts.emplace(m.id, PreparedModel::prepare(m));
  if (req.pins.draft_model && !drafts.count(*req.pins.draft_model))
    return make_error(ErrorKind::input, "--draft-model", "",
                      "'" + *req.pins.draft_model + "' is not a catalog model with " + model.id + "'s tokenizer (" +
                          model.tokenizer_family + ")");
  TRILEMMA_TRY(backends, backends_of(prepared_device, req.pins));

  const double usable_gib = prepared_device.usable_bytes / k_gib;
  std::vector<Candidate> all;
  for (const auto backend : backends) {
    const auto& row = info(backend);
    if (row.max_context && result.context > *row.max_context) {
      result.skipped.push_back(std::string(row.name) + ": graphs compiled for at most " + std::to_string(*row.max_context) +
                               " tokens of context (" + std::string(row.source) + ")");
      continue;
    }
    Pins pins = req.pins;
    if (row.fixed_graph) {
      if (pins.speculative && *pins.speculative) continue;
      pins.speculative = false;
    }
    for (auto weights : weight_choices(prepared_device, backend, pins))
      for (auto kv : kv_type_choices(backend, pins))
        for (const auto& kvc : kv_choices(result.context, pins, row.fixed_graph))
          for (const auto& spec : spec_choices(model, weights, req.catalog, pins))
            for (auto threads : threads_of(device, backend, pins)) {
              Candidate c;
              auto& cfg = c.config;
              cfg = kvc;  // the strategy and its parameters
              cfg.weights = weights;
              cfg.imatrix = accuracy::imatrix_required(weights) ||
                            (pins.imatrix.value_or(accuracy::imatrix_helps(weights)) && accuracy::imatrix_applies(weights));
              cfg.kv_type = kv;
              cfg.context = result.context;
              cfg.prompt = result.prompt;
              cfg.backend = backend;
              cfg.threads = threads;
              cfg.speculative = spec;
              const PreparedModel* draft = nullptr;
              if (spec.kind == DraftKind::model) draft = &drafts.at(spec.draft_model);
              // A draft format the backend cannot run on this device is no candidate.
              if (spec.has_draft_weights() && !prepared_device.efficiency(backend, spec.draft_weights)) continue;
              TRILEMMA_TRY(e, estimate(target, prepared_device, cfg, draft, false));
              c.estimate = std::move(e);
              c.violations = violations(c, constraints, usable_gib, false);
              all.push_back(std::move(c));
            }
  }
  if (all.empty())
    return make_error(ErrorKind::infeasible, "", "",
                      "no configuration of " + model.id + " runs on " + device.id + " with these pins" +
                          (result.skipped.empty() ? std::string() : " (" + result.skipped.front() + ")"));
  result.evaluated = all.size();

  std::vector<const Candidate*> feasible, device_feasible;
  for (const auto& c : all) {
    if (c.violations.empty()) feasible.push_back(&c);
    const bool fits = std::none_of(c.violations.begin(), c.violations.end(), [](const Violation& v) { return v.constraint == "device_memory"; });
    if (fits) device_feasible.push_back(&c);
  }
  result.feasible = feasible.size();
  auto by_objective = [&](const Candidate* a, const Candidate* b) { return better(*a, *b, req.profile.objective); };

  // Pareto front over the device-feasible plans, sorted by speed. Candidates are kept against
  // the running front only (O(n x front), not O(n^2)).
  std::vector<const Candidate*> front;
  for (const auto* c : device_feasible) {
    if (std::any_of(front.begin(), front.end(), [&](const Candidate* o) { return dominates(*o, *c); })) continue;
    std::erase_if(front, [&](const Candidate* o) { return dominates(*c, *o); });
    front.push_back(c);
  }
  for (const auto* c : front) result.front.push_back(*c);
  std::sort(result.front.begin(), result.front.end(), [](auto& a, auto& b) { return a.tok_s() > b.tok_s(); });

  // The plans the report shows get their basis and violation texts.
  // Explaining re-runs an estimate that already succeeded for the same configuration.
  auto explain = [&](Candidate& c) {
    const PreparedModel* draft = c.config.speculative.kind == DraftKind::model ? &drafts.at(c.config.speculative.draft_model) : nullptr;
    if (auto e = estimate(target, prepared_device, c.config, draft, true); e.ok()) c.estimate = std::move(*e);
    c.violations = violations(c, constraints, usable_gib, true);
  };
  if (!feasible.empty()) {
    result.chosen = *choose(feasible, req.profile.objective);
    std::stable_sort(feasible.begin(), feasible.end(), by_objective);
    for (std::size_t i = 0; i < feasible.size() && result.runners_up.size() < 3; ++i) {
      // Skip near-copies of plans already listed (same weights and KV choices).
      const auto& cfg = feasible[i]->config;
      bool seen = cfg.weights == result.chosen->config.weights && cfg.kv_type == result.chosen->config.kv_type &&
                  cfg.kv_strategy == result.chosen->config.kv_strategy;
      for (const auto& r : result.runners_up)
        seen = seen || (r.config.weights == cfg.weights && r.config.kv_type == cfg.kv_type &&
                        r.config.kv_strategy == cfg.kv_strategy);
      if (!seen) result.runners_up.push_back(*feasible[i]);
    }
    result.gives_up = corner_given_up(*result.chosen);
    explain(*result.chosen);
    for (auto& r : result.runners_up) explain(r);
    // Binding: the constraint most often violated by plans that would rank better.
    std::map<std::string, int> counts;
    for (const auto& c : all)
      if (!c.violations.empty() && better(c, *result.chosen, req.profile.objective))
        for (const auto& v : c.violations) ++counts[std::string(v.constraint)];
    int most = 0;
    for (const auto& [name, n] : counts)
      if (n > most) most = n, result.binding = name;
    return result;
  }

  // Nothing feasible: per violated constraint, the best plan that violates only it, and how far
  // the limit would have to move.
  std::map<std::string, const Candidate*> best_violating_only;
  for (const auto& c : all) {
    std::set<std::string> names;
    for (const auto& v : c.violations) names.insert(std::string(v.constraint));
    if (names.size() != 1) continue;
    const std::string& name = *names.begin();
    auto it = best_violating_only.find(name);
    // The smallest relaxation: for each constraint, the plan that violates it least.
    auto excess = [&](const Candidate& x) {
      if (name == "device_memory") return x.memory_gib();
      for (const LimitInfo& l : limits())
        if (l.name == name) return l.upper ? l.value(x) : -l.value(x);
      return 0.0;  // allowed_weights, allowed_kv: a choice, not an amount
    };
    if (it == best_violating_only.end() || excess(c) < excess(*it->second) ||
        (excess(c) == excess(*it->second) && better(c, *it->second, req.profile.objective)))
      best_violating_only[name] = &c;
  }
  for (const auto& [name, c] : best_violating_only) {
    Relaxation r;
    r.constraint = name;
    r.plan = *c;
    explain(*r.plan);
    r.message = r.plan->violations.front().text();
    r.message += " (with " + describe(c->config) + ", losing about " + fixed(c->loss_points()) + " points)";
    result.relaxations.push_back(std::move(r));
  }
  if (result.relaxations.empty()) {
    Relaxation r;
    r.constraint = "several";
    r.message = "no single constraint's relaxation suffices: every configuration violates two or more";
    result.relaxations.push_back(r);
  }
  // Smaller catalog models of the same tokenizer family whose smallest plan fits the device.
  if (req.catalog) {
    for (const auto& m : *req.catalog) {
      if (m.id == model.id || m.tokenizer_family != model.tokenizer_family) continue;
      if (count_parameters(m.shape).total() >= count_parameters(model.shape).total()) continue;
      const auto pm = PreparedModel::prepare(m);
      DeploymentConfig cfg;
      cfg.weights = WeightFormat::q4_k_m;
      cfg.kv_type = TensorType::q8_0;
      cfg.context = std::min(result.context, m.shape.context);
      cfg.prompt = std::min(result.prompt, cfg.context);
      const auto e = estimate(pm, prepared_device, cfg);
      if (e.ok() && e->memory.total_bytes <= prepared_device.usable_bytes)
        result.smaller_models.push_back(m.id + " (" + fixed(e->memory.total_bytes / k_gib, 2) + " GiB at q4_k_m, " +
                                        fixed(e->latency.decode_tok_s.mid) + " tok/s)");
    }
  }
  return result;
}

}  // namespace trilemma::solver
