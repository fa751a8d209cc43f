// Measurements of the machine the engine runs on, with the engine's own kernels and thread
// pool: what `trilemma devices probe` records for `host`.
#pragma once
#include <cstddef>
#include <cstdint>

namespace trilemma::engine {

// Sum of the 64-bit words of p[0, n) (n a multiple of 128, p 32-byte aligned): a streaming read
// that keeps enough loads in flight to saturate DRAM (AVX2 where available).
std::uint64_t stream_read_sum(const std::byte* p, std::size_t n);

// Median GB/s of `runs` streaming reads over `bytes` (far larger than the last-level cache),
// one contiguous part per thread.
double measure_read_bandwidth_gbps(std::size_t bytes, int threads, int runs);

struct ComputeRates {
  double f32_gflops = 0;   // the f32 dot kernel, in-cache operands
  double int8_gflops = 0;  // the q8_0 x q8_0 dot kernel (the path quantized weights take)
  const char* isa = "";
};
// GFLOP/s of the selected dot kernels on `threads` threads (2 FLOP per multiply-add), median of runs.
ComputeRates measure_compute(int threads, int runs);

}  // namespace trilemma::engine
