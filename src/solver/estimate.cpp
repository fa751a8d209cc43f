#include "solver/estimate.hpp"

#include <algorithm>
#include <cmath>

#include "accuracy/accuracy_model.hpp"
#include "memory/memory_model.hpp"
#include "power/energy.hpp"
#include "types/number_text.hpp"

namespace trilemma::solver {
namespace {

// FLOPs of one token: 2 per weight multiply-add (matmul), and QK^T and AV over the positions
// attended (2 x 2 x q_dim per position per layer).
double matmul_flops(double active_params) { return 2.0 * active_params; }
double attention_flops(const ModelShape& s, double attended_positions) {
  return 4.0 * s.layers * double(s.q_dim()) * attended_positions;
}

// One token's forward pass, or a batch of `tokens` over the same weights (prefill, a
// speculative verify pass): weights are read once, FLOPs scale with the tokens.
roofline::StepCost pass_cost(const ModelShape& s, double weight_bytes, double active_params, double kv_bytes,
                             double attended_positions, double tokens) {
  return {weight_bytes, tokens * matmul_flops(active_params), kv_bytes, tokens * attention_flops(s, attended_positions)};
}

double resident_share(const DeploymentConfig& c) { return info(c.kv_strategy).resident_share(c); }

double attended_positions(const DeploymentConfig& c) { return info(c.kv_strategy).attended(c, c.context); }

Result<const roofline::Efficiency*> efficiency_of(const PreparedDevice& pd, Backend backend, WeightFormat weights) {
  if (const auto* e = pd.efficiency(backend, weights)) return e;
  return make_error(ErrorKind::input, pd.device->origin, "backends",
                    "device " + pd.device->id + " cannot run " + std::string(info(weights).name) + " weights on its '" +
                        std::string(info(backend).name) + "' backend (no compute path with a published peak, or a format the backend does not run)");
}


}  // namespace

Range Machines::ordered(double a, double b, double c) {
  const double lo = std::min({a, b, c}), hi = std::max({a, b, c});
  return {lo, std::clamp(b, lo, hi), hi};
}

Machines machines(const PreparedDevice& pd, const roofline::Efficiency& e, Backend backend, TensorType kv,
                  std::uint32_t threads, std::uint32_t layers, roofline::AttentionPhase phase) {
  const auto& d = *pd.device;
  const bool decode = phase == roofline::AttentionPhase::decode;
  const double peak = d.peak_gops(decode ? e.decode_path : e.path, threads).value_or(0);
  const Range& compute = decode ? e.decode_compute_fraction : e.compute_fraction;
  const auto att_path = roofline::attention_path(d, backend);
  const double att_peak = att_path ? d.peak_gops(*att_path, threads).value_or(peak) : peak;
  const Range att = pd.attention_fraction(backend, kv, phase);
  const double overhead = e.pass_overhead_ms(layers);
  auto at = [&](double bw, double comp, double a) {
    return roofline::Machine{e.bandwidth_gbps * bw, peak * comp, overhead, att_peak * a};
  };
  return {at(e.bandwidth_fraction.low, compute.low, att.low), at(e.bandwidth_fraction.mid, compute.mid, att.mid),
          at(e.bandwidth_fraction.high, compute.high, att.high)};
}

namespace {
// Prompt tokens per prefill pass: the runtime's own where the tables name it (the reference
// engine prefills 64 at a time, llama.cpp 512), else the backend's.
std::uint32_t prefill_chunk(const PreparedDevice& pd, const DeploymentConfig& c, const roofline::Efficiency& e) {
  if (!c.runtime.empty())
    if (const auto* row = pd.tables->find(c.backend))
      if (auto n = row->prefill_chunk_of(c.runtime)) return *n;
  return e.prefill_chunk;
}
}  // namespace

MemoryEstimate memory_estimate(const PreparedModel& pm, const PreparedDevice& pd, const DeploymentConfig& c,
                               const roofline::Efficiency& e) {
  const auto& s = pm.model->shape;
  MemoryEstimate m;
  m.weights_bytes = pm.bytes(c.weights).total;
  const double kv_all = memory::kv_bytes(s, c, c.context);
  m.kv_bytes = kv_all * resident_share(c);
  m.kv_spilled_bytes = kv_all - m.kv_bytes;
  const bool flash_attention = true;  // every backend planned for has it; needed for a quantized V cache
  const std::uint32_t ubatch = std::min(prefill_chunk(pd, c, e), std::max(c.prompt, 1u));
  m.scratch_bytes = e.scratch_fraction * memory::scratch_bytes(s, ubatch, c.context, flash_attention);
  m.runtime_bytes = e.runtime_bytes;
  if (!c.runtime.empty() && c.runtime != info(c.backend).engine)
    if (const auto* row = pd.tables->find(c.backend))
      if (auto mib = row->runtime_of(c.runtime)) m.runtime_bytes = *mib * 1048576.0;
  m.usable_bytes = pd.usable_bytes;
  return m;
}

roofline::StepCost decode_cost(const PreparedModel& pm, const DeploymentConfig& c) {
  const double kv_fast = memory::kv_read_bytes(pm.model->shape, c, c.context) * resident_share(c);
  return pass_cost(pm.model->shape, pm.bytes(c.weights).per_token, pm.active_params, kv_fast, attended_positions(c), 1);
}

roofline::StepCost prefill_cost(const PreparedModel& pm, const DeploymentConfig& c, double passes, double weight_bytes,
                                double kv_fraction) {
  const auto& s = pm.model->shape;
  const double prompt = std::min(c.prompt, c.context);
  const double depth = std::min<double>(c.prompt_depth, c.context - prompt);
  // The prompt's attention covers what the cache held before it and on average half of the
  // prompt; its KV is written once, the earlier KV read by every chunk.
  const double attended = info(c.kv_strategy).attended(c, depth + prompt / 2);
  const double kv_traffic = memory::kv_bytes(s, c, c.prompt) + passes * memory::kv_bytes(s, c, std::uint32_t(depth));
  return pass_cost(s, passes * weight_bytes, pm.active_params, kv_traffic * kv_fraction, attended, prompt);
}

DecodeStep decode_step(const PreparedModel& pm, const PreparedDevice& pd, const DeploymentConfig& c, const Machines& m) {
  const double kv_read = memory::kv_read_bytes(pm.model->shape, c, c.context);
  DecodeStep step;
  step.cost = decode_cost(pm, c);
  step.slow_tier_bytes = kv_read - step.cost.attention_bytes;
  step.slow_tier_ms = step.slow_tier_bytes / (pd.offload.read_gbps * 1e9) * 1e3;
  step.ms = m.time([&](const roofline::Machine& mc) { return roofline::step_ms(step.cost, mc) + step.slow_tier_ms; });
  roofline::step_ms(step.cost, m.mid, &step.bound);
  return step;
}

Prefill prefill(const PreparedModel& pm, const DeploymentConfig& c, const Machines& m, std::uint32_t chunk,
                double weight_bytes, double kv_fraction) {
  const double prompt = std::min(c.prompt, c.context);
  Prefill p;
  p.passes = std::max(1.0, std::ceil(prompt / chunk));
  p.cost = prefill_cost(pm, c, p.passes, weight_bytes, kv_fraction);
  p.ms = m.time([&](const roofline::Machine& mc) { return roofline::step_ms(p.cost, mc) + (p.passes - 1) * mc.overhead_ms; });
  return p;
}

AcceptancePrior acceptance_prior(const DeploymentConfig& c) {
  switch (c.speculative.kind) {
    case DraftKind::model:
      return {{0.55, 0.70, 0.80},
              "draft model: llama.cpp Llama-3.2-1B drafting Llama-3.1-8B accepted 72%; Leviathan et al. Table 3 "
              "0.61-0.82 for 10-100x smaller drafts"};
    case DraftKind::self: {
      // A lower-bit copy agrees with the target about as often as its top-1 token matches.
      const double kld = accuracy::weight_loss_figure(c.speculative.draft_weights).kld.mid;
      const double mid = std::clamp(1.0 - 1.1 * std::sqrt(kld), 0.3, 0.98);
      return {{mid - 0.08, mid, std::min(mid + 0.04, 0.99)},
              "self-speculation: top-1 agreement of the draft format with full precision (llama.cpp LLaMA-3-8B: "
              "Q8_0 97.7%, Q6_K 96.0%, Q4_K_M 91.9%, Q2_K 71%), interpolated by KLD"};
    }
    case DraftKind::layers:
      return {{0.25, 0.40, 0.60},
              "layer-skip without early-exit training: assumption; LayerSkip (arXiv 2404.16710) reaches 1.8-2.2x "
              "only after training for early exit. verify measures the real rate"};
    case DraftKind::none: break;
  }
  return {{0, 0, 0}, ""};
}

Result<Speculation> speculate(const PreparedModel& pm, const PreparedDevice& pd, const DeploymentConfig& c,
                              const Machines& target, const DecodeStep& plain, const MemoryEstimate& memory,
                              const PreparedModel* draft) {
  const auto& s = pm.model->shape;
  const auto& spec = c.speculative;
  Speculation out;
  out.acceptance = acceptance_prior(c);
  const bool measured = spec.measured_acceptance > 0;
  if (measured) out.acceptance = {Range::exact(spec.measured_acceptance), "measured by verify (accepted / drafted)"};
  const unsigned g = spec.draft_len;
  const double kv_fast = plain.cost.attention_bytes, attended = attended_positions(c);

  // The draft's step, its prefill and its memory, on the machines of its own format.
  DeploymentConfig draft_cfg = c;
  draft_cfg.speculative = {};
  Machines draft_m = target, draft_prefill_m = target;
  roofline::StepCost draft_step;
  Range draft_prefill_ms{0, 0, 0};
  TRILEMMA_TRY(eff, efficiency_of(pd, c.backend, c.weights));
  if (spec.kind == DraftKind::model || spec.kind == DraftKind::self) {
    const PreparedModel& dm = spec.kind == DraftKind::model && draft ? *draft : pm;
    if (spec.kind == DraftKind::model && !draft)
      return make_error(ErrorKind::internal, "", "", "speculate: draft model '" + spec.draft_model + "' not prepared");
    TRILEMMA_TRY(deff, efficiency_of(pd, c.backend, spec.draft_weights));
    const auto& ds = dm.model->shape;
    draft_m = machines(pd, *deff, c.backend, c.kv_type, c.threads, ds.layers, roofline::AttentionPhase::decode);
    draft_prefill_m = machines(pd, *deff, c.backend, c.kv_type, c.threads, ds.layers, roofline::AttentionPhase::prefill);
    const auto& dw = dm.bytes(spec.draft_weights);
    const double draft_kv = spec.kind == DraftKind::model ? memory::kv_read_bytes(ds, draft_cfg, c.context) : kv_fast;
    draft_step = pass_cost(ds, dw.per_token, dm.active_params, draft_kv, attended, 1);
    draft_prefill_ms =
        prefill(dm, draft_cfg, draft_prefill_m, prefill_chunk(pd, c, *deff), dw.total, spec.kind == DraftKind::self ? resident_share(c) : 1.0).ms;
    if (spec.kind == DraftKind::model)
      out.draft_bytes = dw.total + memory::kv_bytes(ds, draft_cfg, c.context) +
                        memory::scratch_bytes(ds, std::min(prefill_chunk(pd, c, *deff), std::max(c.prompt, 1u)), c.context, true);
    else
      out.draft_bytes = dw.total + memory.kv_bytes;  // its own KV: its keys and values differ from the target's
  } else if (spec.kind == DraftKind::layers) {
    // The first layers and the classifier; shares the target's weights and its first layers' KV.
    const double share = double(spec.draft_layers) / s.layers;
    const double head = double(s.vocab) * s.hidden * bits_per_element(info(c.weights).output) / 8.0;
    const double per_token = pm.bytes(c.weights).per_token;
    draft_step = {(per_token - head) * share + head, plain.cost.flops * share, kv_fast * share,
                  plain.cost.attention_flops * share};
  }

  const roofline::StepCost verify_pass = pass_cost(s, pm.bytes(c.weights).per_token, pm.active_params, kv_fast, attended, g + 1);
  auto tokens_per_pass = [&](double a) {
    return measured ? roofline::tokens_per_pass_measured(a, g) : roofline::tokens_per_pass(a, g);
  };
  // Besides its passes a round compares drafts and rolls the KV back: a fitted constant.
  auto round_ms = [&](const roofline::Machine& draft_mc, const roofline::Machine& mc) {
    return g * roofline::step_ms(draft_step, draft_mc) + roofline::step_ms(verify_pass, mc) + plain.slow_tier_ms +
           eff->speculative_round_ms;
  };
  const auto& a = out.acceptance.rate;
  out.tokens_per_pass = tokens_per_pass(a.mid);
  out.acceptance_spread = {tokens_per_pass(a.low) / out.tokens_per_pass, 1, tokens_per_pass(a.high) / out.tokens_per_pass};
  out.ms_per_token = Machines::ordered(round_ms(draft_m.fast, target.fast) / tokens_per_pass(a.high),
                                       round_ms(draft_m.mid, target.mid) / tokens_per_pass(a.mid),
                                       round_ms(draft_m.slow, target.slow) / tokens_per_pass(a.low));
  out.draft_cost_ratio = roofline::step_ms(draft_step, draft_m.mid) / (plain.ms.mid - plain.slow_tier_ms);
  const Range first_round = Machines::ordered(round_ms(draft_m.fast, target.fast), round_ms(draft_m.mid, target.mid),
                                              round_ms(draft_m.slow, target.slow));
  out.ttft_extra_ms = {draft_prefill_ms.low + first_round.low, draft_prefill_ms.mid + first_round.mid,
                       draft_prefill_ms.high + first_round.high};
  return out;
}

namespace {
Result<Estimate> speed_and_memory(const PreparedModel& pm, const PreparedDevice& pd, const DeploymentConfig& c,
                                  const PreparedModel* draft, bool with_basis) {
  const auto& s = pm.model->shape;
  TRILEMMA_TRY(eff, efficiency_of(pd, c.backend, c.weights));
  Estimate e;
  e.memory = memory_estimate(pm, pd, c, *eff);

  using roofline::AttentionPhase;
  const Machines decode_m = machines(pd, *eff, c.backend, c.kv_type, c.threads, s.layers, AttentionPhase::decode);
  const Machines prefill_m = machines(pd, *eff, c.backend, c.kv_type, c.threads, s.layers, AttentionPhase::prefill);
  const DecodeStep step = decode_step(pm, pd, c, decode_m);
  const Prefill pre = prefill(pm, c, prefill_m, prefill_chunk(pd, c, *eff), pm.bytes(c.weights).total, resident_share(c));

  auto& l = e.latency;
  l.bytes_per_token = step.cost.bytes + step.cost.attention_bytes + step.slow_tier_bytes;
  l.flops_per_token = step.cost.flops + step.cost.attention_flops;
  l.bound = step.bound;
  l.effective_bandwidth_gbps = decode_m.mid.bandwidth_gbps;
  l.effective_compute_gflops = prefill_m.mid.compute_gflops;
  l.compute_path = std::string(info(eff->path).name);
  l.path_peak_gops = pd.device->peak_gops(eff->path, c.threads).value_or(0);
  l.prefill_flops = pre.cost.flops + pre.cost.attention_flops;
  Range decode_ms = step.ms;
  Range acceptance_spread = Range::exact(1);
  l.ttft_ms = pre.ms;

  if (c.speculative.on()) {
    TRILEMMA_TRY(spec, speculate(pm, pd, c, decode_m, step, e.memory, draft));
    l.acceptance = spec.acceptance.rate.mid;
    l.tokens_per_pass = spec.tokens_per_pass;
    l.draft_cost_ratio = spec.draft_cost_ratio;
    l.speedup = step.ms.mid / spec.ms_per_token.mid;
    decode_ms = spec.ms_per_token;
    acceptance_spread = spec.acceptance_spread;
    l.ttft_ms = {l.ttft_ms.low + spec.ttft_extra_ms.low, l.ttft_ms.mid + spec.ttft_extra_ms.mid,
                 l.ttft_ms.high + spec.ttft_extra_ms.high};
    e.memory.draft_bytes = spec.draft_bytes;
    if (with_basis) e.basis.push_back("acceptance prior " + fixed(spec.acceptance.rate.mid, 2) + ": " + spec.acceptance.basis);
  }
  const double prompt = std::min(c.prompt, c.context);
  l.decode_tok_s = {1000.0 / decode_ms.high, 1000.0 / decode_ms.mid, 1000.0 / decode_ms.low};
  l.prefill_tok_s = {prompt / l.ttft_ms.high * 1000.0, prompt / l.ttft_ms.mid * 1000.0, prompt / l.ttft_ms.low * 1000.0};
  // Where the fit measured how far held-out measurements fall from predictions like this one,
  // that is the range (the machines' spread of fitted fractions knows nothing of the model's
  // own error); a speculative plan's also spans its acceptance's.
  const auto kind = info(c.backend).kind;
  if (const auto* band = pd.tables->error_band(kind, roofline::Phase::decode)) {
    const Range spread = c.speculative.on() ? acceptance_spread : Range::exact(1);
    l.decode_tok_s = {l.decode_tok_s.mid * band->low * spread.low, l.decode_tok_s.mid, l.decode_tok_s.mid * band->high * spread.high};
  }
  if (const auto* band = pd.tables->error_band(kind, roofline::Phase::prefill)) {
    l.prefill_tok_s = {l.prefill_tok_s.mid * band->low, l.prefill_tok_s.mid, l.prefill_tok_s.mid * band->high};
    l.ttft_ms = {l.ttft_ms.mid / band->high, l.ttft_ms.mid, l.ttft_ms.mid / band->low};
  }
  e.memory.total_bytes = e.memory.weights_bytes + e.memory.kv_bytes + e.memory.scratch_bytes + e.memory.runtime_bytes +
                         e.memory.draft_bytes;
  if (with_basis) {
    e.basis.insert(e.basis.begin(), eff->basis);
    e.basis.insert(e.basis.begin() + 1, "prefill compute: " + l.compute_path + " peak " + fixed(l.path_peak_gops, 0) +
                                            " GOP/s x " + fixed(eff->compute_fraction.mid, 2) + " (" +
                                            std::string(info(c.backend).name) + ", " +
                                            std::string(info(c.weights).name) + " weights)");
  }
  return e;
}
}  // namespace

Result<Estimate> estimate_speed(const PreparedModel& pm, const PreparedDevice& pd, const DeploymentConfig& c,
                                const PreparedModel* draft) {
  return speed_and_memory(pm, pd, c, draft, false);
}

Result<Estimate> estimate(const PreparedModel& pm, const PreparedDevice& pd, const DeploymentConfig& c,
                          const PreparedModel* draft, bool with_basis) {
  TRILEMMA_TRY(e, speed_and_memory(pm, pd, c, draft, with_basis));
  if (const auto* draw = pd.power(c.backend)) e.energy = power::energy(*draw, e.latency, pd.device->battery_wh);
  else e.energy.basis = pd.power_gap(c.backend);
  if (with_basis) e.basis.push_back("power: " + e.energy.basis);
  auto traits = pm.loss_traits(c.weights);
  traits.imatrix = c.imatrix;
  e.accuracy = accuracy::estimate_accuracy(traits, c, with_basis ? &e.basis : nullptr, pm.family);
  return e;
}

}  // namespace trilemma::solver
