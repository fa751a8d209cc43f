#include "devices/host_probe.hpp"

#include "devices/core_table.hpp"
#include "types/number_text.hpp"

#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
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

std::vector<CpuCluster> probed_clusters(const std::vector<CoreGroup>& groups, unsigned cores, const std::string& model_name,
                                        double clock_ghz, double fp32_per_cycle, double int8_per_cycle) {
  std::size_t grouped = 0;
  for (const auto& g : groups) grouped += g.cpus.size();
  auto measured = [&](CpuCluster c) {
    c.fp32_flops_per_cycle = fp32_per_cycle;
    c.int8_dot_ops_per_cycle = int8_per_cycle;
    c.rates_source = "measured by the host probe";
    return c;
  };
  // One kind of core, or groups that do not account for every core the process sees.
  if (groups.size() <= 1 || grouped != cores) {
    CpuCluster c;
    c.kind = "performance";
    c.cores = cores;
    c.core = groups.size() == 1 && !groups.front().core.empty() ? groups.front().core : model_name;
    c.clock_ghz = clock_ghz;
    return {measured(c)};
  }
  // big.LITTLE: the peak kernels ran on the scheduler's choice of core, which for a busy thread
  // is a fast one, so the first group takes the measured rates per cycle; the others take
  // devices/cores.yaml's for their core when it has them.
  const auto* table = core_table().ok() ? *core_table() : nullptr;
  std::vector<CpuCluster> out;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto& g = groups[i];
    CpuCluster c;
    c.kind = i + 1 == groups.size() ? "efficiency" : (i == 0 && groups.size() >= 3 ? "prime" : "performance");
    c.cores = std::uint32_t(g.cpus.size());
    c.core = g.core.empty() ? model_name : g.core;
    c.clock_ghz = g.max_ghz > 0 ? g.max_ghz : clock_ghz;
    const CoreRates* rates = table && !g.core.empty() ? find_core(*table, g.core) : nullptr;
    if (i == 0 || !rates) {
      out.push_back(measured(c));
      if (i > 0) out.back().rates_source = "assumed: the measured core's rates per cycle (" + c.core + " is not in devices/cores.yaml)";
      continue;
    }
    c.fp32_flops_per_cycle = rates->fp32_flops_per_cycle;
    c.fp16_flops_per_cycle = rates->fp16_flops_per_cycle;
    c.int8_dot_ops_per_cycle = rates->int8_dot_ops_per_cycle;
    c.int8_matmul_ops_per_cycle = rates->int8_matmul_ops_per_cycle;
    c.rates_source = "devices/cores.yaml (" + g.core + ")";
    out.push_back(c);
  }
  return out;
}

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

namespace {

std::optional<double> read_number_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;  // v2's "max": no limit
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return end != text.c_str() && std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

// limit - usage of the memory cgroup at `dir` and each ancestor up to `root`, the smallest.
std::optional<double> cgroup_headroom(std::filesystem::path dir, const std::filesystem::path& root, const char* limit_file,
                                      const char* usage_file) {
  std::optional<double> out;
  for (;;) {
    const auto limit = read_number_file(dir / limit_file), usage = read_number_file(dir / usage_file);
    // v1 writes "no limit" as a number near 2^63.
    if (limit && usage && *limit < 1e18) out = std::min(out.value_or(INFINITY), std::max(0.0, *limit - *usage));
    if (dir == root || !dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
  return out;
}

}  // namespace

std::optional<double> available_memory_bytes(const std::string& proc, const std::string& cgroup_root) {
  std::optional<double> out;
  {
    std::ifstream in(proc + "/meminfo");
    std::string key, unit;
    double kb = 0;
    while (in >> key >> kb >> unit)
      if (key == "MemAvailable:") {
        out = kb * 1024.0;
        break;
      }
  }
  std::ifstream cg(proc + "/self/cgroup");
  for (std::string line; std::getline(cg, line);) {
    // "0::/path" (v2) or "4:memory:/path" (v1).
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1), path = line.substr(second + 1);
    std::optional<double> headroom;
    if (controllers.empty()) {
      const std::filesystem::path root(cgroup_root);
      headroom = cgroup_headroom(root / std::filesystem::path(path).relative_path(), root, "memory.max", "memory.current");
    } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      const auto root = std::filesystem::path(cgroup_root) / "memory";
      headroom = cgroup_headroom(root / std::filesystem::path(path).relative_path(), root, "memory.limit_in_bytes",
                                 "memory.usage_in_bytes");
    }
    if (headroom) out = std::min(out.value_or(INFINITY), *headroom);
  }
  return out;
}

std::optional<double> available_memory_bytes() { return available_memory_bytes("/proc", "/sys/fs/cgroup"); }

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
  const double available_gib = available_memory_bytes().value_or(double(si.freeram) * si.mem_unit) / 1073741824.0;
  d.ram_gib = total_gib;
  d.ram_options_gib = {total_gib};
  d.os_reserve_gib = std::max(0.0, total_gib - available_gib);
  d.unified_memory = true;
  d.memory_type = "unknown (measured)";
  d.bandwidth_basis = "measured";

  progress("cpu: reading /proc/cpuinfo and the clusters in /sys/devices/system/cpu");
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  CpuInfo info;
  {
    std::ifstream in("/proc/cpuinfo");
    std::stringstream ss;
    ss << in.rdbuf();
    info = parse_cpuinfo(ss.str());
  }
  const auto groups = read_core_groups("/sys/devices/system/cpu", info);
  std::string model_name = info.model_name;
  if (model_name.empty() && !groups.empty() && !groups.front().core.empty()) model_name = groups.front().core;
  if (model_name.empty()) model_name = "unknown CPU";
  const double mhz = info.max_mhz;
#if defined(__x86_64__)
  d.isa = "x86-64";
  d.cpu_features = x86_features(info.flags);
#elif defined(__aarch64__)
  d.isa = "arm64";
  d.cpu_features = arm_features(info.flags);
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
  const double sysfs_ghz = groups.empty() ? 0 : groups.front().max_ghz;
  const double ghz = rec.clock_ghz > 0 ? rec.clock_ghz : (mhz > 0 ? mhz / 1000.0 : (sysfs_ghz > 0 ? sysfs_ghz : 1.0));
  const std::string clock_basis = rec.clock_ghz > 0 ? "measured (dependent adds per second)"
                                  : mhz > 0        ? "from /proc/cpuinfo"
                                                   : "from cpufreq cpuinfo_max_freq";

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
  d.clusters = probed_clusters(groups, cores, model_name, ghz, f32_peak / cores / ghz, int8_peak / cores / ghz);
  // On one kind of core this is one core's best times the cores; on big.LITTLE, each
  // cluster's cores at its own rate and clock.
  d.measured_compute_gflops = d.peak_gops(ComputePath::cpu_fp32).value_or(f32_peak);
  d.measured_int8_gflops = d.peak_gops(ComputePath::cpu_int8_dot).value_or(int8_peak);

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
