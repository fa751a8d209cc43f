// Measurements of the machine the engine runs on, with the engine's thread pool: what `trilemma
// devices probe` records for `host`. Each returns every run's figure; the probe keeps the best
// (interference only ever slows a machine down) and records the spread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/runtime/peak_compute.hpp"

namespace trilemma::engine {

// Sum of the 64-bit words of p[0, n) (n a multiple of 128, p 32-byte aligned): a streaming read
// that keeps enough loads in flight to saturate DRAM (AVX2 where available).
std::uint64_t stream_read_sum(const std::byte* p, std::size_t n);

// Each of `runs` streaming reads over `bytes` (far larger than the last-level cache) on
// `threads` threads, which take 1 MiB chunks as they finish (a thread slowed by another process
// reads less instead of holding the others up). Two figures per run: bytes / wall time, and the
// threads' mean of bytes / own CPU time times the threads, which a process sharing a core with
// one of them does not lower (threads that read under 16 MiB are left out of the mean).
struct BandwidthRuns {
  std::vector<double> wall, thread_time;  // GB/s per run
};
BandwidthRuns measure_read_bandwidth_runs(std::size_t bytes, int threads, int runs);

struct PeakRuns {
  PeakKernel kernel;
  std::vector<double> one_thread;   // G(FL)OP/s of the kernel on one thread, per run
  std::vector<double> all_threads;  // ... on `threads` threads at once, per run
};
// `runs` runs of ~`seconds` each of the path's peak kernel, on one thread and on all.
PeakRuns measure_peak_runs(PeakPath path, int threads, int runs, double seconds = 0.1);

}  // namespace trilemma::engine
