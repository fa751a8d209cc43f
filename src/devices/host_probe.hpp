// Measures this machine into a Device: memory from /proc/meminfo, cores and ISA features from
// /proc/cpuinfo, sustained read bandwidth (multi-threaded streaming read of a buffer far larger
// than the last-level cache) and achieved FP32 FMA throughput. Takes a few seconds.
#pragma once
#include <functional>
#include <string>

#include "devices/device.hpp"
#include "types/result.hpp"

namespace trilemma::devices {

using ProbeProgress = std::function<void(const std::string& step)>;

Result<Device> probe_host(const ProbeProgress& progress);

// Median GB/s of `reps` multi-threaded reads over `bytes`.
double measure_read_bandwidth_gbps(std::size_t bytes, unsigned threads, int reps);

}  // namespace trilemma::devices
