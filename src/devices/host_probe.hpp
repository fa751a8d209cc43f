// Describes this machine as a Device: memory from /proc/meminfo, cores and ISA features from
// /proc/cpuinfo, and what the engine's own code achieves on it (supplied by the caller, since
// the engine sits above this module): sustained read bandwidth over a buffer far larger than
// the last-level cache, and GFLOP/s of the f32 and int8 dot kernels.
#pragma once
#include <functional>
#include <string>

#include "devices/device.hpp"
#include "types/result.hpp"

namespace trilemma::devices {

using ProbeProgress = std::function<void(const std::string& step)>;

struct HostMeasurer {
  std::function<double(int threads)> read_bandwidth_gbps;
  // f32 and int8 dot-product GFLOP/s on `threads` threads, and the kernel ISA.
  std::function<void(int threads, double& f32_gflops, double& int8_gflops, std::string& isa)> compute;
};

Result<Device> probe_host(const HostMeasurer& measurer, const ProbeProgress& progress);

}  // namespace trilemma::devices
