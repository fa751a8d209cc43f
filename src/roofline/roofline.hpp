// Latency from the roofline model (docs/estimates.md#latency):
//   decode step  = max(bytes read / effective bandwidth, FLOPs / effective compute) + overhead
//   prefill      = max(ceil(P / ubatch) x weight bytes / bandwidth, P x FLOPs / compute) + overhead
//   speculative  = tokens per target pass (1 - a^(g+1)) / (1 - a), speed-up = that / (g c + 1)
//                  (Leviathan et al. 2023, arXiv 2211.17192)
#pragma once
#include <string>

#include "types/estimate.hpp"

namespace trilemma::roofline {

struct Machine {
  double bandwidth_gbps = 0;  // effective, GB/s
  double compute_gflops = 0;  // effective, GFLOP/s
  double overhead_ms = 0;     // fixed per forward pass
};

struct StepCost {
  double bytes = 0;  // read from memory
  double flops = 0;
};

// Milliseconds of one forward pass; `bound` is set to "memory" or "compute".
double step_ms(const StepCost& cost, const Machine& machine, std::string* bound = nullptr);

// Expected tokens emitted per target pass for acceptance `a` and draft length `g`.
double tokens_per_pass(double a, unsigned g);
// Walltime speed-up over plain decoding for draft/target step cost ratio `c`.
double speculative_speedup(double a, unsigned g, double c);

}  // namespace trilemma::roofline
