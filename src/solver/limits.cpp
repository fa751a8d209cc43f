#include "solver/limits.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "solver/planner.hpp"
#include "types/number_text.hpp"

namespace trilemma::solver {
namespace {

constexpr std::array k_limits = {
    LimitInfo{"max_ttft_ms", &Constraints::max_ttft_ms, true, "--max-ttft-ms", "ms", [](const Candidate& c) { return c.ttft_ms(); }, "TTFT"},
    LimitInfo{"min_decode_tok_s", &Constraints::min_decode_tok_s, false, "--min-tok-s", "tok/s",
              [](const Candidate& c) { return c.tok_s(); }, "tok/s"},
    LimitInfo{"max_memory_gib", &Constraints::max_memory_gib, true, "--max-memory-gib", "GiB",
              [](const Candidate& c) { return c.memory_gib(); }, "memory budget"},
    LimitInfo{"max_loss_points", &Constraints::max_loss_points, true, "--max-loss-points", "points",
              [](const Candidate& c) { return c.loss_points(); }, "loss", 1e-3},
    LimitInfo{"max_joules_per_token", &Constraints::max_joules_per_token, true, "--max-joules-per-token", "J/token",
              [](const Candidate& c) { return c.joules_per_token(); }, "J/token"},
    LimitInfo{"max_power_w", &Constraints::max_power_w, true, "--max-power-w", "W", [](const Candidate& c) { return c.power_w(); }, "power"},
};

// %g-like text without a trailing ".0": 300, 0.5, 12.25.
std::string figure(double v) {
  std::string s = fixed(v, 3);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

std::span<const LimitInfo> limits() { return k_limits; }

std::optional<double> tighter(const LimitInfo& limit, std::optional<double> a, std::optional<double> b) {
  if (a && b) return limit.upper ? std::min(*a, *b) : std::max(*a, *b);
  return a ? a : b;
}

std::vector<std::string> looser_than_profile(const Profile& profile, const Constraints& flags) {
  std::vector<std::string> out;
  for (const LimitInfo& l : k_limits) {
    const auto& own = profile.constraints.*l.field;
    const auto& asked = flags.*l.field;
    if (!own || !asked || tighter(l, own, asked) == asked) continue;
    out.push_back(std::string(l.flag) + " " + figure(*asked) + " is " + (l.upper ? "looser" : "lower") + " than the " + profile.id +
                  " scenario's " + std::string(l.upper ? "limit of " : "floor of ") + figure(*own) + " " + std::string(l.unit) +
                  ", which applies: a flag can only tighten a scenario (a profile file of your own sets a looser one)");
  }
  return out;
}

double headroom(const LimitInfo& limit, double bound, double value) {
  return limit.upper ? bound / std::max(value, limit.floor) : value / bound;
}

std::optional<LimitMiss> worst_miss(const Constraints& constraints, const Candidate& plan) {
  std::optional<LimitMiss> worst;
  for (const LimitInfo& l : k_limits) {
    const auto& bound = constraints.*l.field;
    if (!bound || *bound <= 0) continue;
    const double v = l.value(plan);
    // An unknown figure (no power data: +infinity) cannot be shown to meet the limit.
    const double margin = std::isfinite(v) ? (l.upper ? *bound - v : v - *bound) / *bound * 100.0 : -100.0;
    if (margin < 0 && (!worst || margin < worst->margin_pct)) worst = LimitMiss{&l, *bound, v, margin};
  }
  return worst;
}

}  // namespace trilemma::solver
