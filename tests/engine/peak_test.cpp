// The peak kernels compute what they claim (every instruction contributes to a checksum the
// scalar formula predicts, so none is optimised away), and the measurements return one figure
// per run. Rates themselves are not asserted: the probe's statistics are tested with a fake
// measurer (tests/devices/host_probe_test.cpp), and its stability by the documented manual run.
#include <catch2/catch.hpp>

#include <cmath>

#include "engine/runtime/host_measure.hpp"
#include "engine/runtime/peak_compute.hpp"

using namespace trilemma::engine;

TEST_CASE("peak kernels: checksums match the formula, SIMD and scalar alike", "[engine]") {
  for (auto path : {PeakPath::f32_fma, PeakPath::int8_dot})
    for (const auto& k : {peak_kernel(path), scalar_peak_kernel(path)}) {
      CAPTURE(k.name);
      CHECK(k.lanes >= 1);
      CHECK(k.pipes >= 1);
      CHECK(k.ops_per_iteration > 0);
      for (std::uint64_t n : {0ull, 1ull, 3ull, 100ull, 5000ull}) {
        CAPTURE(n);
        CHECK(k.run(n) == Approx(k.expected_checksum(n)).epsilon(1e-6));
      }
    }
}

TEST_CASE("peak kernels: ops per iteration follow from lanes, ops per lane and accumulators", "[engine]") {
  const auto f = peak_kernel(PeakPath::f32_fma);
  // 2 FLOP per FMA lane; the kernel's accumulators are a whole number of instructions.
  const double instructions = f.ops_per_iteration / (f.lanes * f.ops_per_lane);
  CHECK(instructions == Approx(std::round(instructions)));
  CHECK(f.ops_per_lane == 2);
  const auto i = peak_kernel(PeakPath::int8_dot);
  CHECK(i.ops_per_lane == 8);
  const double dots = i.ops_per_iteration / (i.lanes * i.ops_per_lane);
  CHECK(dots == Approx(std::round(dots)));
}

TEST_CASE("host measurements: one figure per run", "[engine]") {
  const auto bw = measure_read_bandwidth_runs(std::size_t(64) << 20, 2, 3);
  CHECK(bw.wall.size() == 3);
  for (double v : bw.wall) CHECK(v > 0);
  for (double v : bw.thread_time) CHECK(v > 0);
  const auto p = measure_peak_runs(PeakPath::int8_dot, 2, 2, 0.01);
  CHECK(p.kernel.name == peak_kernel(PeakPath::int8_dot).name);
  CHECK(p.one_thread.size() == 2);
  CHECK(p.all_threads.size() == 2);
  for (double v : p.one_thread) CHECK(v > 0);
#if defined(__x86_64__) || defined(__aarch64__)
  CHECK(measure_clock_ghz(1'000'000) > 0);
#endif
}
