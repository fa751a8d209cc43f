#include "devices/host_probe.hpp"

#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
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

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

std::optional<double> parse_load_average(const std::string& text) {
  std::istringstream in(text);
  double v = 0;
  if (!(in >> v) || v < 0 || !std::isfinite(v)) return std::nullopt;
  return v;
}

Theoretical theoretical_peak(unsigned cores, double clock_ghz, const PeakSample& k) {
  Theoretical t;
  t.gops = cores * clock_ghz * k.lanes * k.ops_per_lane * k.pipes;
  t.basis = std::to_string(cores) + " cores x " + fixed(clock_ghz, 2) + " GHz x " + std::to_string(k.lanes) + " lanes x " +
            fixed(k.ops_per_lane, 0) + " ops x " + std::to_string(k.pipes) + " pipes (" + k.kernel + ")";
  return t;
}

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

  ProbeRecord rec;
  rec.when = now_iso();
  {
    std::ifstream in("/proc/loadavg");
    std::stringstream ss;
    ss << in.rdbuf();
    rec.load_average = parse_load_average(ss.str());
  }
  progress("clock: dependent adds on one core");
  rec.clock_ghz = measure.clock_ghz ? measure.clock_ghz() : 0;
  const double ghz = rec.clock_ghz > 0 ? rec.clock_ghz : (mhz > 0 ? mhz / 1000.0 : 1.0);
  const std::string clock_basis = rec.clock_ghz > 0 ? "measured (dependent adds per second)" : "from /proc/cpuinfo";

  constexpr int k_bandwidth_runs = 7, k_peak_runs = 5;
  progress("bandwidth: " + std::to_string(k_bandwidth_runs) + " streaming reads of 1 GiB on " + std::to_string(cores) + " threads");
  const auto bw = measure.read_bandwidth(int(cores), k_bandwidth_runs);
  rec.bandwidth_gbps = probe_figure(bw.wall);
  rec.bandwidth_thread_time_gbps = probe_figure(bw.thread_time);
  // Wall time's best is what the machine did at least. Per-thread CPU time leaves out the time
  // another process held a core, but a thread running while its partner is descheduled can
  // read faster than when all run (on machines where memory, not cores, is the limit): its
  // median, not its best, stands for an idle machine.
  d.peak_bandwidth_gbps = std::max(rec.bandwidth_gbps.best, rec.bandwidth_thread_time_gbps.median);

  progress("compute: f32 FMA and int8 dot peaks, one core and " + std::to_string(cores) + ", " + std::to_string(k_peak_runs) + " runs");
  const PeakSample f32 = measure.peak(false, int(cores), k_peak_runs);
  const PeakSample int8 = measure.peak(true, int(cores), k_peak_runs);
  rec.f32_kernel = f32.kernel;
  rec.int8_kernel = int8.kernel;
  rec.f32_one_core = probe_figure(f32.one_core);
  rec.f32_all_cores = probe_figure(f32.all_cores);
  rec.int8_one_core = probe_figure(int8.one_core);
  rec.int8_all_cores = probe_figure(int8.all_cores);
  const auto tf = theoretical_peak(cores, ghz, f32), ti = theoretical_peak(cores, ghz, int8);
  rec.f32_theoretical = tf.gops;
  rec.f32_theoretical_basis = tf.basis;
  rec.int8_theoretical = ti.gops;
  rec.int8_theoretical_basis = ti.basis;
  // The peak is one core's best times the cores: what every core reaches when nothing else
  // runs (all cores at once may clock lower; calibration absorbs that).
  const double f32_peak = rec.f32_one_core.best * cores, int8_peak = rec.int8_one_core.best * cores;
  d.measured_compute_gflops = f32_peak;
  d.measured_int8_gflops = int8_peak;
  CpuCluster cluster;
  cluster.kind = "performance";
  cluster.cores = cores;
  cluster.core = model_name;
  cluster.clock_ghz = ghz;
  cluster.fp32_flops_per_cycle = f32_peak / cores / ghz;
  cluster.int8_dot_ops_per_cycle = int8_peak / cores / ghz;
  cluster.rates_source = "measured by the host probe";
  d.clusters.push_back(cluster);

  auto spread = [](const ProbeFigure& f) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "best of %u runs (median %.3g, worst %.3g)", f.runs, f.median, f.worst);
    return std::string(buf);
  };
  char load[48] = "load average unknown";
  if (rec.load_average) std::snprintf(load, sizeof load, "load average %.2f", *rec.load_average);
  const std::string when = rec.when;
  d.sources.push_back({{"memory.default_ram_gib", "memory.os_reserve_gib"}, "", "measured: /proc/meminfo MemTotal and MemAvailable at " + when, ""});
  d.sources.push_back({{"memory.peak_bandwidth_gbps"}, "",
                       "measured: streaming read of 1 GiB on all threads: by wall time " + spread(rec.bandwidth_gbps) +
                           "; by each thread's CPU time " + spread(rec.bandwidth_thread_time_gbps) +
                           "; the larger of the wall-time best and the CPU-time median; " + load + ", at " + when,
                       ""});
  d.sources.push_back({{"cpu.clusters", "measured_compute_gflops", "measured_int8_gflops"}, "",
                       "measured: register-resident peak kernels (" + f32.kernel + "; " + int8.kernel + "), one core's " +
                           spread(rec.f32_one_core) + " x " + std::to_string(cores) + " cores; " + load + ", at " + when +
                           "; clock " + clock_basis,
                       ""});
  d.probe = rec;
  d.notes = "Probed by `trilemma devices probe`. Bandwidth is what this machine's cores achieve, not a datasheet peak, so derating applies on top of an already achieved figure until `trilemma calibrate` or `verify --calibrate` fits it.";
  return d;
}

}  // namespace trilemma::devices
