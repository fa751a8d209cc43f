#include "roofline/roofline.hpp"

#include <algorithm>
#include <cmath>

namespace trilemma::roofline {

double step_ms(const StepCost& cost, const Machine& m, std::string* bound) {
  const double memory_ms = cost.bytes / (m.bandwidth_gbps * 1e9) * 1e3;
  const double compute_ms = cost.flops / (m.compute_gflops * 1e9) * 1e3;
  if (bound) *bound = memory_ms >= compute_ms ? "memory" : "compute";
  return std::max(memory_ms, compute_ms) + m.overhead_ms;
}

double tokens_per_pass(double a, unsigned g) {
  if (a >= 1.0) return g + 1.0;
  return (1.0 - std::pow(a, g + 1.0)) / (1.0 - a);
}

double speculative_speedup(double a, unsigned g, double c) { return tokens_per_pass(a, g) / (g * c + 1.0); }

}  // namespace trilemma::roofline
