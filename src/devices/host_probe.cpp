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

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// Sums 64-bit words with four independent accumulators so the loads, not the adds, limit speed.
std::uint64_t sum_words(const std::uint64_t* p, std::size_t n) {
  std::uint64_t a = 0, b = 0, c = 0, d = 0;
  for (std::size_t i = 0; i + 4 <= n; i += 4) a += p[i], b += p[i + 1], c += p[i + 2], d += p[i + 3];
  return a + b + c + d;
}

// GFLOP/s of one thread running independent FMA chains (the compiler vectorises the inner loop).
double fma_gflops_one_thread() {
  constexpr int k_lanes = 64;
  float acc[k_lanes], x[k_lanes];
  for (int i = 0; i < k_lanes; ++i) acc[i] = 0, x[i] = 1.0f + i * 1e-6f;
  const float y = 0.999999f;
  const auto t0 = Clock::now();
  constexpr long k_iters = 20'000'000;
  for (long it = 0; it < k_iters; ++it)
    for (int i = 0; i < k_lanes; ++i) acc[i] = acc[i] * y + x[i];
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  volatile float sink = acc[0] + acc[k_lanes - 1];
  (void)sink;
  return 2.0 * k_lanes * k_iters / s / 1e9;
}

}  // namespace

double measure_read_bandwidth_gbps(std::size_t bytes, unsigned threads, int reps) {
  const std::size_t words = bytes / 8;
  std::unique_ptr<std::uint64_t[]> buf(new std::uint64_t[words]);
  for (std::size_t i = 0; i < words; ++i) buf[i] = i;  // touch every page
  std::vector<double> rates;
  for (int r = 0; r < reps; ++r) {
    std::vector<std::thread> pool;
    std::vector<std::uint64_t> sums(threads);
    const auto t0 = Clock::now();
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const std::size_t begin = words * t / threads, end = words * (t + 1) / threads;
        sums[t] = sum_words(buf.get() + begin, end - begin);
      });
    for (auto& th : pool) th.join();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    volatile std::uint64_t sink = sums[0];
    (void)sink;
    rates.push_back(double(words * 8) / s / 1e9);
  }
  return median(rates);
}

Result<Device> probe_host(const ProbeProgress& progress) {
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
  d.peak_bandwidth_gbps = measure_read_bandwidth_gbps(std::size_t(1) << 30, cores, 5);

  progress("compute: FP32 FMA loop on 1 thread");
  const double per_thread = fma_gflops_one_thread();
  d.measured_compute_gflops = per_thread * cores;
  const double ghz = mhz > 0 ? mhz / 1000.0 : 1.0;
  d.clusters.push_back({"performance", cores, model_name, ghz, per_thread / ghz});

  const std::string when = now_iso();
  d.sources.push_back({{"memory.default_ram_gib", "memory.os_reserve_gib"}, "", "measured: /proc/meminfo MemTotal and MemAvailable at " + when, ""});
  d.sources.push_back({{"memory.peak_bandwidth_gbps"}, "", "measured: median of 5 multi-threaded sequential reads of 1 GiB at " + when, ""});
  d.sources.push_back({{"cpu.clusters", "measured_compute_gflops"}, "", "measured: FP32 FMA loop, 1 thread x cores, at " + when + "; clock from /proc/cpuinfo", ""});
  d.notes = "Probed by `trilemma devices probe`. Bandwidth is what this machine's cores achieve, not a datasheet peak, so derating applies on top of an already achieved figure until `verify --calibrate` fits it.";
  return d;
}

}  // namespace trilemma::devices
