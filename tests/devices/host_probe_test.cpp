// The host probe's statistics, from a fake measurer whose runs are given: best of the runs
// kept, spread recorded, compute peaks as one core's best times the cores, bandwidth robust to a
// process sharing a core, the theoretical peak beside them, and the record's round trip
// through the profile file. The engine's real kernels are tested in engine_peak_test.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <thread>

#include <unistd.h>

#include "devices/device_loader.hpp"
#include "devices/host_probe.hpp"

using namespace trilemma;
using namespace trilemma::devices;

namespace {

HostMeasurer fake(BandwidthSample bw, std::vector<double> f32_one, std::vector<double> f32_all, std::vector<double> i8_one,
                  std::vector<double> i8_all, double clock) {
  HostMeasurer m;
  m.read_bandwidth = [=](int, int) { return bw; };
  m.peak = [=](bool int8, int, int) {
    return int8 ? PeakSample{"test dot", 16, 8, 2, i8_one, i8_all} : PeakSample{"test fma", 16, 2, 2, f32_one, f32_all};
  };
  m.clock_ghz = [=] { return clock; };
  return m;
}

}  // namespace

TEST_CASE("probe_figure: best, median and worst of the runs", "[devices]") {
  const auto f = probe_figure({40, 55, 38, 56, 54});
  CHECK(f.best == 56);
  CHECK(f.median == 54);
  CHECK(f.worst == 38);
  CHECK(f.runs == 5u);
  CHECK(probe_figure({}).runs == 0u);
}

TEST_CASE("parse_load_average and theoretical_peak", "[devices]") {
  CHECK(*parse_load_average("1.25 0.90 0.80 2/345 6789\n") == 1.25);
  CHECK_FALSE(parse_load_average(""));
  CHECK_FALSE(parse_load_average("abc"));
  const auto t = theoretical_peak(4, 3.0, PeakSample{"avx512 fma", 16, 2, 2, {}, {}});
  CHECK(t.gops == 4 * 3.0 * 16 * 2 * 2);
  CHECK(t.basis == "4 cores x 3.00 GHz x 16 lanes x 2 ops x 2 pipes (avx512 fma)");
}

TEST_CASE("probe_host: peaks are one core's best times the cores; spread and load recorded", "[devices]") {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  // A background job on one core: the all-core runs read low, one core's do not.
  auto m = fake({{50, 52, 30, 51}, {55, 56, 54, 70}}, {200, 210, 190}, {300, 320, 310}, {800, 830, 700}, {900, 950, 940}, 3.5);
  const auto d = probe_host(m, [](const std::string&) {});
  REQUIRE(d.ok());
  REQUIRE(d->probe);
  const auto& r = *d->probe;
  CHECK(r.clock_ghz == 3.5);
  CHECK(r.f32_kernel == "test fma");
  CHECK(r.f32_one_core.best == 210);
  CHECK(r.f32_one_core.worst == 190);
  CHECK(r.f32_all_cores.best == 320);
  CHECK(r.int8_one_core.median == 800);
  CHECK(*d->measured_compute_gflops == 210.0 * cores);
  CHECK(*d->measured_int8_gflops == 830.0 * cores);
  REQUIRE(d->clusters.size() == 1);
  CHECK(d->clusters[0].clock_ghz == 3.5);
  CHECK(d->clusters[0].fp32_flops_per_cycle == Approx(210.0 / 3.5));
  CHECK(*d->clusters[0].int8_dot_ops_per_cycle == Approx(830.0 / 3.5));
  CHECK(*d->peak_gops(ComputePath::cpu_fp32) == Approx(210.0 * cores));
  CHECK(*d->peak_gops(ComputePath::cpu_int8_dot) == Approx(830.0 * cores));
  CHECK(r.f32_theoretical == Approx(cores * 3.5 * 16 * 2 * 2));
  // Bandwidth: the larger of the wall-time best (52) and the CPU-time median (56; not its best, 70).
  CHECK(r.bandwidth_gbps.best == 52);
  CHECK(r.bandwidth_thread_time_gbps.median == 56);
  CHECK(d->peak_bandwidth_gbps == 56);
  // Idle: wall time's best stands.
  auto idle = fake({{58, 60, 59}, {57, 58, 58}}, {200}, {400}, {800}, {1600}, 3.5);
  CHECK(probe_host(idle, [](const std::string&) {})->peak_bandwidth_gbps == 60);
  // The spread is in the sources, with the load average.
  bool spread_in_sources = false;
  for (const auto& s : d->sources)
    if (s.basis.find("best of 4 runs (median 51, worst 30)") != std::string::npos) spread_in_sources = true;
  CHECK(spread_in_sources);
}

TEST_CASE("probe_host: the record survives the profile file", "[devices]") {
  auto m = fake({{50, 52}, {51, 53}}, {200, 210}, {300, 320}, {800, 830}, {900, 950}, 3.5);
  const auto d = probe_host(m, [](const std::string&) {}).value();
  const auto back = parse_device(device_to_yaml(d), "host.yaml", "host");
  INFO((back.ok() ? "" : back.error().to_string()));
  REQUIRE(back.ok());
  REQUIRE(back->probe);
  CHECK(back->probe->f32_one_core.best == 210);
  CHECK(back->probe->bandwidth_thread_time_gbps.best == 53);
  CHECK(back->probe->int8_theoretical == Approx(d.probe->int8_theoretical));
  CHECK(back->probe->f32_theoretical_basis == d.probe->f32_theoretical_basis);
  CHECK(back->peak_bandwidth_gbps == d.peak_bandwidth_gbps);
  CHECK(*back->peak_gops(ComputePath::cpu_int8_dot) == Approx(*d.peak_gops(ComputePath::cpu_int8_dot)));
}

TEST_CASE("available_memory_bytes: MemAvailable, capped by each memory cgroup's headroom (reliability D13)", "[devices]") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("trilemma-cgroup-" + std::to_string(::getpid()));
  fs::remove_all(root);
  auto write = [](const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  };
  write(root / "proc/meminfo", "MemTotal: 16000000 kB\nMemAvailable: 8000000 kB\n");
  // No cgroup file: MemAvailable.
  CHECK(*devices::available_memory_bytes((root / "proc").string(), (root / "sys").string()) == Approx(8000000.0 * 1024));
  // cgroup v2: a 2 GiB limit with 0.5 GiB used, on the parent of the process's group.
  write(root / "proc/self/cgroup", "0::/ci/job\n");
  write(root / "sys/ci/memory.max", "2147483648\n");
  write(root / "sys/ci/memory.current", "536870912\n");
  write(root / "sys/ci/job/memory.max", "max\n");
  write(root / "sys/ci/job/memory.current", "100\n");
  CHECK(*devices::available_memory_bytes((root / "proc").string(), (root / "sys").string()) == Approx(1610612736.0));
  // cgroup v1: the memory controller's own hierarchy; "no limit" is a number near 2^63.
  write(root / "proc/self/cgroup", "4:memory:/box\n0::/\n");
  write(root / "sys/memory/box/memory.limit_in_bytes", "1073741824\n");
  write(root / "sys/memory/box/memory.usage_in_bytes", "73741824\n");
  write(root / "sys/memory/memory.limit_in_bytes", "9223372036854771712\n");
  write(root / "sys/memory/memory.usage_in_bytes", "5\n");
  CHECK(*devices::available_memory_bytes((root / "proc").string(), (root / "sys").string()) == Approx(1e9));
  fs::remove_all(root);
}
