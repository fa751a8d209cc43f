// The power a device draws while it runs an LLM on one backend, in each phase: decode streams
// the weights (memory-bound), prefill multiplies them (compute-bound). From the device file's
// measurement under LLM load, else its class's prior in devices/power.yaml (a fraction of the
// file's TDP, or absolute watts). docs/power.md.
#pragma once
#include <optional>
#include <string>

#include "devices/device.hpp"
#include "power/power_tables.hpp"
#include "types/backend.hpp"
#include "types/estimate.hpp"

namespace trilemma::power {

struct PowerDraw {
  Range decode_w, prefill_w;
  std::string basis;  // where each phase's figure came from
};

// nullopt, with the reason in `why`, when neither the file nor the class covers the backend.
std::optional<PowerDraw> power_draw(const devices::Device& d, Backend backend, const PowerTables& tables, std::string* why);

}  // namespace trilemma::power
