// Latency from the roofline model (docs/estimates.md#latency):
//   a forward pass has two phases that run one after the other, each at its own bound:
//     weights   = max(weight bytes / effective bandwidth, matmul FLOPs / effective compute)
//     attention = max(KV bytes / effective bandwidth, attention FLOPs / attention compute)
//     pass      = weights + attention + fixed overhead
//   (one max over the sums would let a compute-bound attention hide behind a memory-bound
//   weight stream, which a CPU engine never does: at long contexts attention adds its time)
//   speculative  = tokens per target pass (1 - a^(g+1)) / (1 - a), speed-up = that / (g c + 1)
//                  (Leviathan et al. 2023, arXiv 2211.17192)
#pragma once
#include <string>

#include "types/estimate.hpp"

namespace trilemma::roofline {

struct Machine {
  double bandwidth_gbps = 0;    // effective, GB/s
  double compute_gflops = 0;    // effective, GFLOP/s of the weight matmuls
  double overhead_ms = 0;       // fixed per forward pass
  double attention_gflops = 0;  // effective, GFLOP/s of attention over the KV cache (0: compute_gflops)
};

struct StepCost {
  double bytes = 0;            // weights read from memory
  double flops = 0;            // weight matmuls
  double attention_bytes = 0;  // KV cache read (and written)
  double attention_flops = 0;  // QK^T and AV
};

// Milliseconds of one forward pass; `bound` is set to "memory" or "compute".
double step_ms(const StepCost& cost, const Machine& machine, std::string* bound = nullptr);

// Expected tokens emitted per target pass for per-token acceptance probability `a` and draft
// length `g` (accepted tokens stop at the first rejection).
double tokens_per_pass(double a, unsigned g);
// The same from a measured ratio r = accepted / drafted: every pass drafts g and emits its
// accepted tokens plus one, so 1 + g r exactly.
double tokens_per_pass_measured(double r, unsigned g);
// Walltime speed-up over plain decoding for draft/target step cost ratio `c`.
double speculative_speedup(double a, unsigned g, double c);

}  // namespace trilemma::roofline
