#include "solver/estimate.hpp"

#include <algorithm>
#include <cmath>

#include "accuracy/accuracy_model.hpp"
#include "devices/device_db.hpp"
#include "memory/memory_model.hpp"
#include "roofline/roofline.hpp"

namespace trilemma::solver {
namespace {

constexpr double k_gib = 1073741824.0;
constexpr std::uint32_t k_ubatch = 512;  // llama.cpp's default n_ubatch

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

// Quantized weights take the int8 dot path on CPUs (activations quantized to 8-bit blocks).
bool int8_path(WeightFormat f) {
  const TensorType t = info(f).bulk;
  return t != TensorType::f32 && t != TensorType::f16 && t != TensorType::bf16;
}

double compute_gflops(const devices::Device& d, const std::string& backend, std::uint32_t threads, WeightFormat weights) {
  if (backend == "cpu") {
    // A probed host: what the engine's kernels achieved, all threads.
    if (d.measured_int8_gflops && int8_path(weights)) return *d.measured_int8_gflops;
    if (d.measured_compute_gflops) return *d.measured_compute_gflops;
    // Fastest cores first, up to `threads` of them.
    double g = 0;
    std::uint32_t left = threads ? threads : d.total_cores();
    for (const auto& c : d.clusters) {
      const std::uint32_t use = std::min(left, c.cores);
      g += use * c.clock_ghz * c.fp32_flops_per_cycle;
      left -= use;
    }
    return g;
  }
  const double tflops = std::max({d.gpu_fp16_tensor_tflops.value_or(0), d.gpu_fp16_tflops.value_or(0),
                                  d.gpu_fp32_tflops.value_or(0)});
  // No published GPU throughput: bound compute by the CPU's rather than invent a figure.
  if (tflops <= 0) return compute_gflops(d, "cpu", threads, weights);
  return tflops * 1000.0;
}

}  // namespace

PreparedModel PreparedModel::prepare(const models::Model& m) {
  PreparedModel p;
  p.model = &m;
  for (const auto& row : weight_formats())
    p.weights[static_cast<std::size_t>(row.format)] = memory::weight_bytes(m.shape, row.format);
  if (!m.stored_tensors.empty()) {
    memory::WeightBytes w;
    double elems = 0;
    for (const auto& t : m.stored_tensors) {
      w.total += double(t.bytes);
      elems += double(t.elems);
      const bool experts = t.name.find("_exps") != std::string::npos && m.shape.is_moe();
      w.per_token += experts ? double(t.bytes) * (m.shape.moe.experts_per_token + m.shape.moe.shared_experts) /
                                   double(m.shape.moe.experts)
                             : double(t.bytes);
    }
    w.bits_per_weight = elems > 0 ? 8.0 * w.total / elems : 0;
    p.stored = w;
  }
  p.active_params = count_parameters(m.shape).active_per_token;
  return p;
}

const memory::WeightBytes& PreparedModel::bytes(WeightFormat f) const {
  // A GGUF file's real bytes stand for the format its bulk tensors are stored in.
  if (stored && model && info(f).bulk == tensor_type_from_name(model->stored_format)) return *stored;
  return weights[static_cast<std::size_t>(f)];
}

Range PreparedDevice::attention_fraction(const std::string& backend, TensorType kv, roofline::AttentionPhase phase) const {
  const AttentionKey key{backend, kv, phase};
  for (const auto& [k, value] : m_attention)
    if (k == key) return value;
  m_attention.push_back({key, roofline::attention_fraction_for(*device, backend, std::string(info(kv).name), phase)});
  return m_attention.back().second;
}

PreparedDevice PreparedDevice::prepare(const devices::Device& d) {
  PreparedDevice p;
  p.device = &d;
  p.usable_bytes = devices::usable_memory_gib(d) * k_gib;
  p.offload = roofline::offload_tier_for(d);
  return p;
}

const roofline::Derating& PreparedDevice::derating(const std::string& backend, WeightFormat weights) const {
  for (const auto& [key, value] : m_derating)
    if (key.first == backend && key.second == weights) return value;
  m_derating.push_back({{backend, weights}, roofline::derating_for(*device, backend, std::string(info(weights).name))});
  return m_derating.back().second;
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

Estimate estimate(const PreparedModel& pm, const PreparedDevice& pd, const DeploymentConfig& c,
                  const PreparedModel* draft, bool with_basis) {
  const auto& s = pm.model->shape;
  const auto& d = *pd.device;
  Estimate e;
  const auto& derate = pd.derating(c.backend, c.weights);
  if (with_basis) e.basis.push_back(derate.basis);

  // Memory.
  const auto& w = pm.bytes(c.weights);
  auto& m = e.memory;
  m.weights_bytes = w.total;
  const double kv_all = memory::kv_bytes(s, c, c.context);
  const double resident = c.kv_strategy == KvStrategy::offload ? c.kv_resident_fraction : 1.0;
  m.kv_bytes = kv_all * resident;
  m.kv_spilled_bytes = kv_all - m.kv_bytes;
  const bool flash_attention = true;  // every backend planned for has it; needed for a quantized V cache
  m.scratch_bytes = derate.scratch_fraction *
                    memory::scratch_bytes(s, std::min(k_ubatch, c.prompt), c.context, flash_attention);
  m.runtime_bytes = derate.runtime_bytes;

  // Latency: decode at the end of the context (the slowest step), prefill of the prompt.
  const double kv_read = memory::kv_read_bytes(s, c, c.context);
  const double kv_read_fast = kv_read * resident;
  const double kv_read_slow = kv_read - kv_read_fast;
  const double attended = c.kv_strategy == KvStrategy::sliding ? std::min<double>(c.context, c.window + c.sinks)
                                                                : double(c.context);
  const roofline::StepCost decode = pass_cost(s, w.per_token, pm.active_params, kv_read_fast, attended, 1);
  // Machines at the low / mid / high derating of a weight format; attention's rate depends on
  // the KV format and the phase (one query or a prompt's worth per key) and runs on f32
  // arithmetic whatever the weights are.
  const double attention_peak = compute_gflops(d, c.backend, c.threads, WeightFormat::f32);
  struct Machines {
    roofline::Machine low, mid, high;
  };
  using roofline::AttentionPhase;
  auto machines = [&](WeightFormat f, AttentionPhase phase = AttentionPhase::decode) {
    const Range attention = pd.attention_fraction(c.backend, c.kv_type, phase);
    const auto& dr = pd.derating(c.backend, f);
    const double peak = compute_gflops(d, c.backend, c.threads, f);
    auto at = [&](double bw, double comp, double att) {
      return roofline::Machine{d.peak_bandwidth_gbps * bw, peak * comp, dr.overhead_ms, attention_peak * att};
    };
    return Machines{at(dr.bandwidth_fraction.low, dr.compute_fraction.low, attention.low),
                    at(dr.bandwidth_fraction.mid, dr.compute_fraction.mid, attention.mid),
                    at(dr.bandwidth_fraction.high, dr.compute_fraction.high, attention.high)};
  };
  const Machines target = machines(c.weights);
  const auto& lo = target.low;
  const auto& mid = target.mid;
  const auto& hi = target.high;
  const double slow_ms = kv_read_slow / (pd.offload.read_gbps * 1e9) * 1e3;
  auto& l = e.latency;
  l.bytes_per_token = decode.bytes + decode.attention_bytes + kv_read_slow;
  l.flops_per_token = decode.flops + decode.attention_flops;
  l.effective_bandwidth_gbps = mid.bandwidth_gbps;
  l.effective_compute_gflops = mid.compute_gflops;
  auto decode_ms = [&](const roofline::Machine& mc, std::string* bound) { return roofline::step_ms(decode, mc, bound) + slow_ms; };
  double ms_lo = decode_ms(lo, nullptr), ms_mid = decode_ms(mid, &l.bound), ms_hi = decode_ms(hi, nullptr);

  // Prefill: ceil(P / ubatch) passes each stream the weights; the prompt's attention covers on
  // average half of it; the KV of the prompt is written once.
  const double prompt = std::min(c.prompt, c.context);
  const double passes = std::ceil(prompt / k_ubatch);
  auto prefill_cost = [&](const ModelShape& shape, double weight_total, double params, double kv_bytes) {
    return pass_cost(shape, passes * weight_total, params, kv_bytes, prompt / 2, prompt);
  };
  const roofline::StepCost prefill = prefill_cost(s, w.total, pm.active_params, memory::kv_bytes(s, c, c.prompt) * resident);
  auto prefill_ms = [&](const roofline::StepCost& cost, const roofline::Machine& mc) {
    return roofline::step_ms(cost, mc) + (passes - 1) * mc.overhead_ms;
  };
  const Machines target_prefill = machines(c.weights, AttentionPhase::prefill);
  l.ttft_ms = {prefill_ms(prefill, target_prefill.high), prefill_ms(prefill, target_prefill.mid),
               prefill_ms(prefill, target_prefill.low)};
  l.prefill_flops = prefill.flops + prefill.attention_flops;

  // Speculative decoding: a round is g draft steps plus one target pass over g + 1 tokens.
  if (c.speculative.on()) {
    auto prior = acceptance_prior(c);
    const bool measured = c.speculative.measured_acceptance > 0;
    if (measured) {
      prior.rate = Range::exact(c.speculative.measured_acceptance);
      prior.basis = "measured by verify (accepted / drafted)";
    }
    if (with_basis) e.basis.push_back("acceptance prior " + std::to_string(prior.rate.mid).substr(0, 4) + ": " + prior.basis);
    const unsigned g = c.speculative.draft_len;
    roofline::StepCost draft_step, draft_prefill;
    Machines draft_machines = target, draft_prefill_machines = target_prefill;
    double draft_memory = 0;
    DeploymentConfig draft_cfg = c;
    draft_cfg.speculative = {};
    if (c.speculative.kind == DraftKind::model && draft) {
      const auto& dw = draft->bytes(c.speculative.draft_weights);
      const auto& ds = draft->model->shape;
      draft_machines = machines(c.speculative.draft_weights);
      draft_prefill_machines = machines(c.speculative.draft_weights, AttentionPhase::prefill);
      draft_step = pass_cost(ds, dw.per_token, draft->active_params, memory::kv_read_bytes(ds, draft_cfg, c.context), attended, 1);
      draft_prefill = prefill_cost(ds, dw.total, draft->active_params, memory::kv_bytes(ds, draft_cfg, c.prompt));
      draft_memory = dw.total + memory::kv_bytes(ds, draft_cfg, c.context) +
                     memory::scratch_bytes(ds, std::min(k_ubatch, c.prompt), c.context, flash_attention);
    } else if (c.speculative.kind == DraftKind::self) {
      const auto& dw = pm.bytes(c.speculative.draft_weights);
      draft_machines = machines(c.speculative.draft_weights);
      draft_prefill_machines = machines(c.speculative.draft_weights, AttentionPhase::prefill);
      draft_step = pass_cost(s, dw.per_token, pm.active_params, kv_read_fast, attended, 1);
      draft_prefill = prefill_cost(s, dw.total, pm.active_params, prefill.attention_bytes);
      // The draft keeps its own KV: its keys and values differ from the target's.
      draft_memory = dw.total + m.kv_bytes;
    } else if (c.speculative.kind == DraftKind::layers) {
      // The first layers and the classifier; the prompt's KV of those layers is the target's.
      const double share = double(c.speculative.draft_layers) / s.layers;
      const double head = double(s.vocab) * s.hidden * bits_per_element(info(c.weights).output) / 8.0;
      draft_step = {(w.per_token - head) * share + head, decode.flops * share, kv_read_fast * share, decode.attention_flops * share};
      draft_memory = 0;  // shares the target's weights and its first layers' KV
    }
    m.draft_bytes = draft_memory;
    const roofline::StepCost verify_pass = pass_cost(s, w.per_token, pm.active_params, kv_read_fast, attended, g + 1);
    auto tokens_per_pass = [&](double a) {
      return measured ? roofline::tokens_per_pass_measured(a, g) : roofline::tokens_per_pass(a, g);
    };
    // Besides its passes a round compares drafts and rolls the KV back: a fitted constant.
    auto round_ms = [&](const roofline::Machine& draft_mc, const roofline::Machine& mc) {
      return g * roofline::step_ms(draft_step, draft_mc) + roofline::step_ms(verify_pass, mc) + slow_ms +
             derate.speculative_round_ms;
    };
    auto spec_ms_per_token = [&](const roofline::Machine& draft_mc, const roofline::Machine& mc, double a) {
      return round_ms(draft_mc, mc) / tokens_per_pass(a);
    };
    const double target_ms = ms_mid;
    l.acceptance = prior.rate.mid;
    l.tokens_per_pass = tokens_per_pass(prior.rate.mid);
    l.draft_cost_ratio = roofline::step_ms(draft_step, draft_machines.mid) / (target_ms - slow_ms);
    ms_lo = spec_ms_per_token(draft_machines.low, lo, prior.rate.low);
    ms_mid = spec_ms_per_token(draft_machines.mid, mid, prior.rate.mid);
    ms_hi = spec_ms_per_token(draft_machines.high, hi, prior.rate.high);
    l.speedup = target_ms / ms_mid;
    // Both models prefill the prompt (a layer-skip draft reuses the target's KV), and the first
    // token comes out of the first round: the prompt's last token is verified with the drafts.
    if (c.speculative.kind != DraftKind::layers) {
      l.ttft_ms.low += prefill_ms(draft_prefill, draft_prefill_machines.high);
      l.ttft_ms.mid += prefill_ms(draft_prefill, draft_prefill_machines.mid);
      l.ttft_ms.high += prefill_ms(draft_prefill, draft_prefill_machines.low);
    }
    l.ttft_ms.low += round_ms(draft_machines.high, hi);
    l.ttft_ms.mid += round_ms(draft_machines.mid, mid);
    l.ttft_ms.high += round_ms(draft_machines.low, lo);
  }
  l.decode_tok_s = {1000.0 / ms_lo, 1000.0 / ms_mid, 1000.0 / ms_hi};
  l.prefill_tok_s = {prompt / l.ttft_ms.high * 1000.0, prompt / l.ttft_ms.mid * 1000.0, prompt / l.ttft_ms.low * 1000.0};

  m.total_bytes = m.weights_bytes + m.kv_bytes + m.scratch_bytes + m.runtime_bytes + m.draft_bytes;
  m.usable_bytes = pd.usable_bytes;

  e.accuracy = accuracy::estimate_accuracy(s, c, with_basis ? &e.basis : nullptr);
  return e;
}

}  // namespace trilemma::solver
