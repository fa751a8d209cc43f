#include "roofline/roofline.hpp"

#include <algorithm>
#include <cmath>

namespace trilemma::roofline {

double step_ms(const StepCost& cost, const Machine& m, std::string* bound) {
  const auto ms = [](double amount, double per_s) { return amount > 0 ? amount / (per_s * 1e9) * 1e3 : 0.0; };
  const double attention_gflops = m.attention_gflops > 0 ? m.attention_gflops : m.compute_gflops;
  const double weights_memory = ms(cost.bytes, m.bandwidth_gbps), weights_compute = ms(cost.flops, m.compute_gflops);
  const double kv_memory = ms(cost.attention_bytes, m.bandwidth_gbps);
  const double attention_compute = ms(cost.attention_flops, attention_gflops);
  if (bound) *bound = weights_memory + kv_memory >= weights_compute + attention_compute ? "memory" : "compute";
  return std::max(weights_memory, weights_compute) + std::max(kv_memory, attention_compute) + m.overhead_ms;
}

double tokens_per_pass(double a, unsigned g) {
  if (a >= 1.0) return g + 1.0;
  return (1.0 - std::pow(a, g + 1.0)) / (1.0 - a);
}

double tokens_per_pass_measured(double r, unsigned g) { return 1.0 + g * std::clamp(r, 0.0, 1.0); }

double speculative_speedup(double a, unsigned g, double c) { return tokens_per_pass(a, g) / (g * c + 1.0); }

}  // namespace trilemma::roofline
