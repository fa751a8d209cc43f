#include "devices/device.hpp"

#include <algorithm>

namespace trilemma::devices {

std::uint32_t Device::total_cores() const {
  std::uint32_t n = 0;
  for (const auto& c : clusters) n += c.cores;
  return n;
}

double Device::cpu_peak_gflops() const {
  double g = 0;
  for (const auto& c : clusters) g += c.cores * c.clock_ghz * c.fp32_flops_per_cycle;
  return g;
}

bool Device::has_backend(const std::string& backend) const {
  return std::find(backends.begin(), backends.end(), backend) != backends.end();
}

}  // namespace trilemma::devices
