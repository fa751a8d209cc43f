// What the planner predicts for one configuration, with ranges and the basis of each figure.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace trilemma {

// A figure with its uncertainty: low <= mid <= high (in the figure's own sense: for tok/s
// `low` is the slow end).
struct Range {
  double low = 0, mid = 0, high = 0;
  static Range exact(double v) { return {v, v, v}; }
};

struct MemoryEstimate {
  double weights_bytes = 0;
  double kv_bytes = 0;          // resident (fast tier)
  double kv_spilled_bytes = 0;  // offloaded to the slower tier
  double scratch_bytes = 0;     // activations, logits, attention scores
  double runtime_bytes = 0;     // process and backend overhead
  double draft_bytes = 0;       // speculative draft: weights, KV and scratch
  double total_bytes = 0;       // everything resident in fast memory
  double usable_bytes = 0;      // what the device lets one app use
};

struct LatencyEstimate {
  Range decode_tok_s;              // at the end of the context (worst case)
  Range ttft_ms;                   // prefill of the prompt
  Range prefill_tok_s;
  double bytes_per_token = 0;      // weights + KV read per decoded token
  double flops_per_token = 0;
  double prefill_flops = 0;        // the whole prompt
  std::string bound;               // "memory" or "compute"
  double effective_bandwidth_gbps = 0;
  double effective_compute_gflops = 0;  // prefill's matmuls: the path's peak x its fraction
  std::string compute_path;             // the path the weight format's matmuls take
  double path_peak_gops = 0;            // that path's peak at the plan's threads
  // Speculative decoding, when on.
  double acceptance = 0;           // prior or measured
  double tokens_per_pass = 0;
  double speedup = 1;
  double draft_cost_ratio = 0;     // c: draft step time / target step time
};

struct AccuracyEstimate {
  Range kld;             // mean KL divergence vs full precision, nats
  Range ppl_delta_pct;   // perplexity increase, %
  Range points;          // benchmark points lost (MMLU-like scale, 0-100)
};

// What a plan costs in energy (docs/power.md). `known` is false when no power figure covers the
// device and backend; `basis` then says why.
struct EnergyEstimate {
  bool known = false;
  Range decode_w, prefill_w;       // the device's draw in each phase
  Range joules_per_token;          // per generated token, at the end of the context
  Range joules_per_prompt_token;   // per prompt token, during prefill
  std::optional<Range> battery_pct_per_1k_tokens;  // devices with a battery figure
  std::string basis;
};

struct Estimate {
  MemoryEstimate memory;
  LatencyEstimate latency;
  AccuracyEstimate accuracy;
  EnergyEstimate energy;
  std::vector<std::string> basis;  // which figures and factors produced the estimate
};

}  // namespace trilemma
