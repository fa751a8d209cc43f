#include "solver/requirements.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "accuracy/accuracy_model.hpp"
#include "devices/device_db.hpp"
#include "memory/memory_model.hpp"
#include "roofline/derating_tables.hpp"
#include "solver/limits.hpp"
#include "types/number_text.hpp"

namespace trilemma::solver {
namespace {

constexpr std::uint32_t k_ubatch = 512;  // llama.cpp's default micro-batch: prefill's scratch


// The KV families a target is sized for: a full-precision cache and an 8-bit one, both kept
// whole (contiguous); the device verdicts search every strategy.
constexpr TensorType k_kv_families[] = {TensorType::f16, TensorType::q8_0};

// Each compute path some backend runs `weights` on, at the mid derating of the backend that
// reaches the largest share of it.
std::vector<PathNeed> path_needs(WeightFormat weights, double effective_gops, const roofline::DeratingTables& tables) {
  std::vector<PathNeed> out;
  for (const auto& b : backends()) {
    const auto* row = tables.find(b.backend);
    if (!row || !runs(b, weights)) continue;
    for (auto path : paths_for(b, weights)) {
      const double f = row->compute(path).mid;
      const PathNeed need{path, b.backend, f, f > 0 ? effective_gops / f : 0};
      auto it = std::find_if(out.begin(), out.end(), [&](const PathNeed& n) { return n.path == path; });
      if (it == out.end()) out.push_back(need);
      else if (f > it->compute_fraction) *it = need;  // the backend that gets the most out of the path
    }
  }
  return out;
}

// Device RAM per class for `memory_gib` of weights, KV and scratch.
std::vector<std::pair<std::string, double>> ram_by_class(double memory_gib, const roofline::DeratingTables& tables,
                                                         const std::vector<devices::ClassDefaults>& classes) {
  std::vector<std::pair<std::string, double>> out;
  const auto* cpu = tables.find(Backend::cpu);
  for (const auto& c : classes) {
    const double runtime_gib = cpu ? cpu->runtime(c.device_class) / 1024.0 : 0;
    out.emplace_back(c.device_class, (memory_gib + runtime_gib) / (1.0 - c.os_reserve_fraction));
  }
  return out;
}

// What a near-miss plan lacks, in the hardware's terms: for speed, the effective bandwidth or
// compute the limit needs against what the device reaches; for memory, the gap.
std::string lack_of(const std::string& constraint, const Candidate& c, const Constraints& k) {
  const auto& l = c.estimate.latency;
  const std::string with = " (with " + describe(c.config) + ")";
  if (constraint == "min_decode_tok_s" && k.min_decode_tok_s) {
    const double need = *k.min_decode_tok_s / c.tok_s();
    if (l.bound == "memory")
      return "bandwidth: " + fixed(l.effective_bandwidth_gbps * need, 0) + " GB/s effective for " + fixed(*k.min_decode_tok_s) +
             " tok/s, reaches " + fixed(l.effective_bandwidth_gbps, 0) + " (" + fixed(c.tok_s()) + " tok/s)" + with;
    return "compute: x" + fixed(need, 2) + " the decode rate it reaches (" + fixed(c.tok_s()) + " tok/s)" + with;
  }
  if (constraint == "max_ttft_ms" && k.max_ttft_ms)
    return "prefill compute: " + fixed(l.effective_compute_gflops * c.ttft_ms() / *k.max_ttft_ms, 0) + " GOP/s effective on " +
           l.compute_path + " for a " + fixed(*k.max_ttft_ms, 0) + " ms first token here (its fixed costs included), reaches " +
           fixed(l.effective_compute_gflops, 0) + " (" + fixed(c.ttft_ms(), 0) + " ms)" + with;
  if (constraint == "device_memory")
    return "memory: needs " + fixed(c.memory_gib(), 2) + " GiB, " + fixed(c.estimate.memory.usable_bytes / k_gib, 2) + " GiB usable" + with;
  if (constraint == "max_memory_gib" && k.max_memory_gib)
    return "memory: the smallest plan needs " + fixed(c.memory_gib(), 2) + " GiB > " + fixed(*k.max_memory_gib, 2) + with;
  return c.violations.empty() ? constraint : c.violations.front().text();
}

// Headroom of a feasible plan against each limit the request sets: ratios >= 1, the smallest first.
void margins_of(DeviceVerdict& v, const Constraints& k) {
  const Candidate& c = *v.plan;
  std::vector<std::pair<double, std::string>> m;
  const double usable = c.estimate.memory.usable_bytes / k_gib;
  auto add = [&](double ratio, const std::string& what, const std::string& detail = "") {
    m.push_back({ratio, what + " x" + fixed(ratio, 2) + detail});
  };
  add(usable / c.memory_gib(), "memory", " (" + fixed(usable - c.memory_gib(), 2) + " GiB free)");
  for (const LimitInfo& l : limits())
    if (const auto& bound = k.*l.field) add(headroom(l, *bound, l.value(c)), std::string(l.short_name));
  std::sort(m.begin(), m.end());
  v.margin = m.front().first;
  for (const auto& [ratio, text] : m) v.margins.push_back(text);
  if (c.estimate.energy.known) v.margins.push_back(fixed(c.joules_per_token(), 3) + " J/token at " + fixed(c.estimate.energy.decode_w.mid) + " W");
}

// How far a relaxation's plan is from its limit: the ratio (< 1) of what it reaches to what is asked.
double shortfall(const Relaxation& r, const Constraints& k) {
  if (!r.plan) return 0;
  const Candidate& c = *r.plan;
  if (r.constraint == "device_memory") return c.estimate.memory.usable_bytes / k_gib / c.memory_gib();
  for (const LimitInfo& l : limits())
    if (l.name == r.constraint && k.*l.field) return headroom(l, *(k.*l.field), l.value(c));
  return 0;
}

DeviceVerdict verdict(const PlanResult& r, const devices::Device& d, const Constraints& k) {
  DeviceVerdict v;
  v.device = &d;
  if (r.chosen) {
    v.qualifies = true;
    v.plan = r.chosen;
    margins_of(v, k);
    return v;
  }
  // A near-miss: some single constraint's relaxation makes a plan feasible; report the closest.
  const Relaxation* best = nullptr;
  for (const auto& x : r.relaxations)
    if (x.plan && (!best || shortfall(x, k) > shortfall(*best, k))) best = &x;
  if (best) {
    v.near_miss = true;
    v.plan = best->plan;
    v.margin = shortfall(*best, k);
    for (const auto& x : r.relaxations)
      if (x.plan) v.lacks.push_back(lack_of(x.constraint, *x.plan, k));
  } else {
    for (const auto& x : r.relaxations) v.lacks.push_back(x.message);
  }
  return v;
}

// Qualifying devices by margin (largest first), then near-misses by shortfall (closest first),
// then the rest by id.
bool before(const DeviceVerdict& a, const DeviceVerdict& b) {
  auto rank = [](const DeviceVerdict& v) { return v.qualifies ? 0 : v.near_miss ? 1 : 2; };
  if (rank(a) != rank(b)) return rank(a) < rank(b);
  if (rank(a) < 2 && a.margin != b.margin) return a.margin > b.margin;
  return a.device->id < b.device->id;
}

}  // namespace

FormatNeed format_need(const PreparedModel& pm, const DeploymentConfig& c, double tok_s, double ttft_ms) {
  FormatNeed n;
  n.weights = c.weights;
  n.kv = c.kv_type;
  const auto decode = decode_cost(pm, c);
  n.bytes_per_token = decode.bytes + decode.attention_bytes;
  n.bandwidth_gbps = tok_s * n.bytes_per_token / 1e9;
  n.decode_gops = tok_s * (decode.flops + decode.attention_flops) / 1e9;
  // The whole prompt in one pass: the compute it needs does not depend on how it is chunked.
  const auto prefill = prefill_cost(pm, c, 1, pm.bytes(c.weights).total, 1);
  if (ttft_ms > 0) n.prefill_gops = (prefill.flops + prefill.attention_flops) / (ttft_ms / 1000) / 1e9;
  const auto& s = pm.model->shape;
  const double scratch = memory::scratch_bytes(s, std::min(k_ubatch, std::max(c.prompt, 1u)), c.context, true);
  n.memory_gib = (pm.bytes(c.weights).total + memory::kv_bytes(s, c, c.context) + scratch) / k_gib;
  auto traits = pm.loss_traits(c.weights);
  traits.imatrix = c.imatrix;
  n.loss_points = accuracy::estimate_accuracy(traits, c, nullptr, pm.family).points.mid;
  return n;
}

Result<Requirements> requirements(const RequirementsRequest& req) {
  if (!req.model || !req.devices) return make_error(ErrorKind::internal, "", "", "requirements: model and devices are required");
  const auto& model = *req.model;
  Requirements out;
  out.limits = merge_constraints(req.profile.constraints, req.budgets);
  TRILEMMA_TRY(window, context_window(req.profile, model, req.context, req.prompt));
  out.context = window.context;
  out.prompt = window.prompt;
  TRILEMMA_TRY(tables, roofline::derating_tables());
  TRILEMMA_TRY(classes, devices::class_table());
  const PreparedModel pm = PreparedModel::prepare(model);
  const auto& k = out.limits;
  auto listed = [](const std::vector<std::string>& list, std::string_view name) {
    return list.empty() || std::find(list.begin(), list.end(), name) != list.end();
  };
  for (const auto& row : weight_formats()) {
    if (row.pinned_only) continue;
    for (auto kv : k_kv_families) {
      DeploymentConfig c;
      c.weights = row.format;
      c.kv_type = kv;
      c.context = out.context;
      c.prompt = out.prompt;
      c.imatrix = accuracy::imatrix_required(row.format) || (accuracy::imatrix_helps(row.format) && accuracy::imatrix_applies(row.format));
      FormatNeed n = format_need(pm, c, k.min_decode_tok_s.value_or(0), k.max_ttft_ms.value_or(0));
      n.paths = path_needs(row.format, n.prefill_gops, *tables);
      n.ram_gib_by_class = ram_by_class(n.memory_gib, *tables, *classes);
      if (k.max_loss_points && n.loss_points > *k.max_loss_points) n.excluded.push_back("max_loss_points");
      if (k.max_memory_gib && n.memory_gib > *k.max_memory_gib) n.excluded.push_back("max_memory_gib");
      if (!listed(k.allowed_weights, row.name)) n.excluded.push_back("allowed_weights");
      if (!listed(k.allowed_kv, info(kv).name)) n.excluded.push_back("allowed_kv");
      out.needs.push_back(std::move(n));
    }
  }
  for (const auto& d : *req.devices) {
    PlanRequest p;
    p.model = &model, p.device = &d, p.profile = req.profile, p.context = out.context, p.prompt = out.prompt;
    p.budgets = req.budgets, p.sustained_minutes = req.sustained_minutes, p.catalog = req.catalog;
    auto r = plan(p);
    if (!r.ok()) {
      // No configuration runs there at all (no backend runs the model's formats, a context limit).
      DeviceVerdict v;
      v.device = &d;
      v.lacks.push_back(r.error().message);
      out.devices.push_back(std::move(v));
      continue;
    }
    out.devices.push_back(verdict(*r, d, k));
  }
  std::stable_sort(out.devices.begin(), out.devices.end(), before);
  return out;
}

}  // namespace trilemma::solver
