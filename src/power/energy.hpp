// Energy of a plan: joules per generated and per prompt token, and the battery share 1,000
// generated tokens take, from the power a device draws in each phase and the plan's predicted
// speed (docs/power.md#energy). Pure arithmetic, hand-checked in tests/power.
#pragma once
#include <optional>

#include "power/power_draw.hpp"
#include "types/estimate.hpp"

namespace trilemma::power {

// J/token = W / (tok/s): the low end pairs the lowest power with the fastest speed, the high
// end the highest power with the slowest. Battery % per 1,000 tokens = 1000 J/token /
// (Wh x 3600) x 100.
EnergyEstimate energy(const PowerDraw& draw, const LatencyEstimate& latency, std::optional<double> battery_wh);

}  // namespace trilemma::power
