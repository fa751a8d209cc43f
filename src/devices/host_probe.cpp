#include "devices/host_probe.hpp"

#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

namespace trilemma::devices {
namespace {

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

Result<Device> probe_host(const HostMeasurer& measure, const ProbeProgress& progress) {
  Device d;
  d.id = "host";
  d.vendor = "this machine";
  d.device_class = "desktop";
  d.origin = "host probe";
  d.backends = {"cpu"};
  struct sysinfo si {};
  if (sysinfo(&si) != 0) return make_error(ErrorKind::io, "host", "", "sysinfo failed");
  progress("memory: reading /proc/meminfo");
  const double total_gib = double(si.totalram) * si.mem_unit / 1073741824.0;
  double available_gib = double(si.freeram) * si.mem_unit / 1073741824.0;
  {
    std::ifstream in("/proc/meminfo");
    std::string key;
    double kb = 0;
    std::string unit;
    while (in >> key >> kb >> unit)
      if (key == "MemAvailable:") available_gib = kb / 1048576.0;
  }
  d.ram_gib = total_gib;
  d.ram_options_gib = {total_gib};
  d.os_reserve_gib = std::max(0.0, total_gib - available_gib);
  d.unified_memory = true;
  d.memory_type = "unknown (measured)";
  d.bandwidth_basis = "measured";

  progress("cpu: reading /proc/cpuinfo");
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::set<std::string> flags;
  std::string model_name = "unknown CPU";
  double mhz = 0;
  {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
      std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
      if (key == "model name") model_name = value;
      if (key == "cpu MHz") mhz = std::max(mhz, std::atof(value.c_str()));
      if (key == "flags" || key == "Features") {
        std::istringstream ss(value);
        std::string f;
        while (ss >> f) flags.insert(f);
      }
    }
  }
#if defined(__x86_64__)
  d.isa = "x86-64";
  for (auto [flag, name] : {std::pair{"avx2", "avx2"}, {"fma", "fma"}, {"f16c", "f16c"}, {"avx512f", "avx512"},
                            {"avx_vnni", "avx-vnni"}, {"avx512_vnni", "avx512-vnni"}})
    if (flags.count(flag)) d.cpu_features.push_back(name);
#elif defined(__aarch64__)
  d.isa = "arm64";
  d.cpu_features.push_back("neon");
  for (auto [flag, name] : {std::pair{"asimddp", "dotprod"}, {"i8mm", "i8mm"}, {"sve", "sve"}, {"sve2", "sve2"}})
    if (flags.count(flag)) d.cpu_features.push_back(name);
#else
  d.isa = "unknown";
#endif
  d.name = model_name + " (" + std::to_string(cores) + " threads, probed)";

  progress("bandwidth: streaming read of 1 GiB, " + std::to_string(cores) + " threads, 5 runs");
  d.peak_bandwidth_gbps = measure.read_bandwidth_gbps(int(cores));

  progress("compute: engine dot kernels (f32 and int8) on " + std::to_string(cores) + " threads");
  double f32 = 0, int8 = 0;
  std::string isa;
  measure.compute(int(cores), f32, int8, isa);
  d.measured_compute_gflops = f32;
  d.measured_int8_gflops = int8;
  const double ghz = mhz > 0 ? mhz / 1000.0 : 1.0;
  d.clusters.push_back({"performance", cores, model_name, ghz, f32 / cores / ghz});

  const std::string when = now_iso();
  d.sources.push_back({{"memory.default_ram_gib", "memory.os_reserve_gib"}, "", "measured: /proc/meminfo MemTotal and MemAvailable at " + when, ""});
  d.sources.push_back({{"memory.peak_bandwidth_gbps"}, "", "measured: median of 5 multi-threaded streaming reads of 1 GiB (engine runtime/host_measure) at " + when, ""});
  d.sources.push_back({{"cpu.clusters", "measured_compute_gflops", "measured_int8_gflops"}, "",
                       "measured: engine " + isa + " dot kernels (f32; q8_0 x q8_0), in-cache operands, all threads, at " +
                           when + "; clock from /proc/cpuinfo",
                       ""});
  d.notes = "Probed by `trilemma devices probe`. Bandwidth is what this machine's cores achieve, not a datasheet peak, so derating applies on top of an already achieved figure until `verify --calibrate` fits it.";
  return d;
}

}  // namespace trilemma::devices
