// Sustained speed: phones and fanless boards throttle under continuous load. The share of the
// first minute's speed a device holds after N minutes, from its own measured points or its
// class's in devices/power.yaml, and the device as it runs then (docs/power.md#sustained-speed).
#pragma once
#include <optional>
#include <string>

#include "devices/device.hpp"
#include "power/power_tables.hpp"
#include "types/estimate.hpp"

namespace trilemma::power {

struct Sustained {
  double minutes = 0;
  Range fraction;     // of the first minute's speed
  std::string basis;  // which points, from where; says when there are none
  bool has_data = false;
};

// Linear between points, 1 at minute 0, the last point beyond the last. Without points for the
// device or its class: fraction 1, has_data false and a basis that says so.
Sustained sustained_fraction(const devices::Device& d, double minutes, const PowerTables& tables);

// The device with its bandwidths and compute peaks (clocks, TFLOPS, TOPS, probed rates) scaled
// by `fraction`: what a throttled device offers. Its power draw is unchanged: the power figures
// describe sustained load already (docs/power.md#sustained-speed).
devices::Device throttled(const devices::Device& d, double fraction);

}  // namespace trilemma::power
