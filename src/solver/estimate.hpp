// Predicts latency, memory and accuracy of one configuration of one model on one device. Each
// function below computes one paragraph of docs/estimates.md; `estimate` combines them. Pure:
// no I/O, no state, once its inputs are prepared.
#pragma once
#include <string>
#include <vector>

#include "roofline/roofline.hpp"
#include "solver/prepared.hpp"
#include "types/deployment.hpp"
#include "types/estimate.hpp"

namespace trilemma::solver {

// The three machines a figure's range is computed on: every fraction at its low, mid and high
// value. The one place that turns fractions into machines and orders the results.
struct Machines {
  roofline::Machine slow, mid, fast;
  // ms of `step` on each machine, ordered low <= mid <= high.
  template <class Step>
  Range time(Step step) const {
    return ordered(step(fast), step(mid), step(slow));
  }
  static Range ordered(double a, double b, double c);
};

// A backend and weight format on the prepared device, at `threads` and in `phase` (attention's
// rate differs between decode and prefill). REQUIRES: pd.efficiency(backend, weights).
Machines machines(const PreparedDevice& pd, const roofline::Efficiency& efficiency, Backend backend, TensorType kv,
                  std::uint32_t threads, std::uint32_t layers, roofline::AttentionPhase phase);

// Memory (docs/estimates.md#memory): weights, KV (resident and spilled), scratch, runtime.
MemoryEstimate memory_estimate(const PreparedModel& pm, const PreparedDevice& pd, const DeploymentConfig& c,
                               const roofline::Efficiency& efficiency);

// The bytes and FLOPs of one decoded token at the end of the context (fast-tier KV only), and
// of the prompt in `passes` passes that each stream `weight_bytes`: what the device must move
// and compute, before any machine's rates (the requirements command inverts these).
roofline::StepCost decode_cost(const PreparedModel& pm, const DeploymentConfig& c);
roofline::StepCost prefill_cost(const PreparedModel& pm, const DeploymentConfig& c, double passes, double weight_bytes,
                                double kv_fraction);

// Decode step (#decode-step): one token at the end of the context, the slowest step.
struct DecodeStep {
  roofline::StepCost cost;
  double slow_tier_bytes = 0;  // offloaded KV read from the slower tier
  double slow_tier_ms = 0;
  Range ms;
  std::string bound;
};
DecodeStep decode_step(const PreparedModel& pm, const PreparedDevice& pd, const DeploymentConfig& c, const Machines& m);

// Prefill (#prefill): the prompt in passes of the backend's chunk, each streaming the weights.
struct Prefill {
  roofline::StepCost cost;
  double passes = 1;
  Range ms;
};
Prefill prefill(const PreparedModel& pm, const DeploymentConfig& c, const Machines& m, std::uint32_t chunk,
                double weight_bytes, double kv_fraction);

// Acceptance-rate prior for a draft source, with its basis.
struct AcceptancePrior {
  Range rate;
  std::string basis;
};
AcceptancePrior acceptance_prior(const DeploymentConfig& config);

// Speculative decoding (#speculative-decoding): a round is g draft steps, one target pass over
// g + 1 tokens and the round's own cost; it emits tokens_per_pass tokens. The first token
// comes out of the first round, after both models prefilled the prompt.
struct Speculation {
  AcceptancePrior acceptance;  // the prior, or the measured rate
  double tokens_per_pass = 0;
  Range ms_per_token;
  Range ttft_extra_ms;         // draft prefill + first round
  Range acceptance_spread;     // tokens per pass at the acceptance's low and high over its mid
  double draft_bytes = 0;      // the draft's weights, KV and scratch
  double draft_cost_ratio = 0;  // draft step / target step
};
// REQUIRES: c.speculative.on(); a draft model's PreparedModel when the draft is a model.
Result<Speculation> speculate(const PreparedModel& pm, const PreparedDevice& pd, const DeploymentConfig& c,
                              const Machines& target, const DecodeStep& plain, const MemoryEstimate& memory,
                              const PreparedModel* draft);

// The whole estimate. `with_basis` = false skips the explanatory text (the search evaluates
// thousands of plans and reports a few). Fails when the device cannot run the configuration's
// backend and formats (the planner only asks for ones it can).
Result<Estimate> estimate(const PreparedModel& model, const PreparedDevice& device, const DeploymentConfig& config,
                          const PreparedModel* draft = nullptr, bool with_basis = true);

// Latency and memory only (accuracy and energy left at their defaults, no basis): what a fit
// compares with measurements, thousands of times per fit.
Result<Estimate> estimate_speed(const PreparedModel& model, const PreparedDevice& device, const DeploymentConfig& config,
                                const PreparedModel* draft = nullptr);

}  // namespace trilemma::solver
