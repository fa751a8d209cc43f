#include "power/energy.hpp"

#include <limits>

namespace trilemma::power {
namespace {

// Joules per token of a phase drawing `w` watts at `tok_s` tokens per second (tok/s ranges run
// slow to fast, so the high energy divides by the low speed).
Range joules_per_token(const Range& w, const Range& tok_s) {
  // No speed: no token for any energy (it fails every energy limit).
  auto per = [](double watts, double rate) { return rate > 0 ? watts / rate : std::numeric_limits<double>::infinity(); };
  return {per(w.low, tok_s.high), per(w.mid, tok_s.mid), per(w.high, tok_s.low)};
}

}  // namespace

EnergyEstimate energy(const PowerDraw& draw, const LatencyEstimate& latency, std::optional<double> battery_wh) {
  EnergyEstimate e;
  e.known = true;
  e.decode_w = draw.decode_w;
  e.prefill_w = draw.prefill_w;
  e.joules_per_token = joules_per_token(draw.decode_w, latency.decode_tok_s);
  e.joules_per_prompt_token = joules_per_token(draw.prefill_w, latency.prefill_tok_s);
  if (battery_wh) {
    const double joules = *battery_wh * 3600.0;
    const auto& j = e.joules_per_token;
    e.battery_pct_per_1k_tokens = Range{1000 * j.low / joules * 100, 1000 * j.mid / joules * 100, 1000 * j.high / joules * 100};
  }
  e.basis = draw.basis;
  return e;
}

}  // namespace trilemma::power
