// The machine's arithmetic peak per compute path, measured the way a datasheet states it:
// operands in registers, enough independent accumulators to cover the instruction's latency on
// every pipe, the widest instruction the CPU and the OS allow. One call runs one thread; the
// host probe runs them per core and across cores (engine/runtime/host_measure.hpp).
#pragma once
#include <cstdint>
#include <string>

namespace trilemma::engine {

enum class PeakPath { f32_fma, int8_dot };

struct PeakKernel {
  std::string name;              // "avx512 fma", "avx512-vnni dpbusd", "avx2 maddubs", "neon sdot", "scalar"
  int lanes = 1;                 // f32 lanes, or int32 lanes for int8 (4 int8 multiply-adds each)
  double ops_per_iteration = 0;  // FLOP (f32) or int8 ops (2 per multiply-add) of one loop iteration
  // Instructions of this kind a core issues per cycle, for the theoretical peak printed beside
  // the measured one: an assumption per kernel (vendors' optimisation manuals), not a measurement.
  int pipes = 1;
  double ops_per_lane = 2;       // per instruction: 2 for an FMA, 8 for a 4-wide int8 dot
  // Runs `iterations` loop iterations; returns a checksum of the accumulators, which depends on
  // every instruction (so none is optimised away) and which `expected_checksum` predicts.
  double (*run)(std::uint64_t iterations) = nullptr;
  double (*expected_checksum)(std::uint64_t iterations) = nullptr;
};

// The widest kernel this CPU and its OS support for `path` (engine/quant/cpu_features.hpp).
PeakKernel peak_kernel(PeakPath path);

// The scalar kernel of `path`, the reference the vector kernels are checked against.
PeakKernel scalar_peak_kernel(PeakPath path);

// The clock one core runs at now, GHz: a chain of dependent integer adds retires one add per
// cycle on every out-of-order core of the last decade, so adds per second is the clock (turbo
// included, which /proc/cpuinfo does not report in VMs). 0 where no chain is implemented.
double measure_clock_ghz(std::uint64_t adds = 200'000'000);

}  // namespace trilemma::engine
