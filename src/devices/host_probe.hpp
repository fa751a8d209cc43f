// Describes this machine as a Device: memory from /proc/meminfo, cores and ISA features from
// /proc/cpuinfo, and what the engine's code measures on it (supplied by the caller, since the
// engine sits above this module): streaming read bandwidth over a buffer far larger than the
// last-level cache, the arithmetic peak of the f32 FMA and int8 dot paths, and the clock.
//
// A shared machine is never faster than its hardware, only slower: every figure is the best of
// several runs, and the compute peaks are one core's best times the cores (a background job on
// some cores leaves the others' peak alone). Spread and load average are recorded beside them.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "devices/cpu_topology.hpp"
#include "devices/device.hpp"
#include "types/result.hpp"

namespace trilemma::devices {

using ProbeProgress = std::function<void(const std::string& step)>;

// A peak kernel's runs, and what the theoretical peak needs to know of its instruction.
struct PeakSample {
  std::string kernel;      // "avx512 fma"
  int lanes = 1;           // f32 or int32 lanes of one instruction
  double ops_per_lane = 2;  // 2 for an FMA, 8 for a 4-wide int8 dot
  int pipes = 1;           // such instructions issued per cycle (assumed per kernel)
  std::vector<double> one_core, all_cores;  // G(FL)OP/s per run
};

// Streaming-read runs: GB/s by wall time, and summed over threads by each one's CPU time.
struct BandwidthSample {
  std::vector<double> wall, thread_time;
};

struct HostMeasurer {
  std::function<BandwidthSample(int threads, int runs)> read_bandwidth;
  std::function<PeakSample(bool int8, int threads, int runs)> peak;
  std::function<double()> clock_ghz;  // one core, now; 0 when it cannot be measured
};

// The first field of /proc/loadavg; nullopt when the text is not one.
std::optional<double> parse_load_average(const std::string& proc_loadavg);

// cores x GHz x lanes x ops per lane x pipes, in G(FL)OP/s, and how it was formed.
struct Theoretical {
  double gops = 0;
  std::string basis;  // "2 cores x 3.70 GHz x 16 lanes x 2 ops x 2 pipes (avx512 fma)"
};
Theoretical theoretical_peak(unsigned cores, double clock_ghz, const PeakSample& kernel);

// The probe's clusters: one per group of alike cores (fastest first, `prime` when there are
// three kinds, the last `efficiency`), or one of `cores` cores when sysfs shows one kind or
// does not account for every core. Rates per cycle: measured on the first, devices/cores.yaml's
// on the others where it knows their core.
std::vector<CpuCluster> probed_clusters(const std::vector<CoreGroup>& groups, unsigned cores, const std::string& model_name,
                                        double clock_ghz, double fp32_per_cycle, double int8_per_cycle);

Result<Device> probe_host(const HostMeasurer& measurer, const ProbeProgress& progress);

// What a process can still take without swapping or the kernel's OOM killer, bytes: MemAvailable
// of /proc/meminfo, capped by its memory cgroups' headroom; nullopt where neither is readable.
std::optional<double> available_memory_bytes();
// The same read from other roots (tests): MemAvailable of `proc`/meminfo, capped by the headroom
// (limit - usage) of every memory cgroup the process sits in or under, cgroup v2
// (`cgroup_root`/<path>/memory.max, memory.current) or v1 (`cgroup_root`/memory/<path>/
// memory.limit_in_bytes, memory.usage_in_bytes): in a 2 GiB container the kernel kills a process
// long before MemAvailable runs out (reliability D13).
std::optional<double> available_memory_bytes(const std::string& proc, const std::string& cgroup_root);

}  // namespace trilemma::devices
