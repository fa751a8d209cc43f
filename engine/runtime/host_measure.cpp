#include "engine/runtime/host_measure.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <time.h>
#include <vector>

#include "engine/quant/cpu_features.hpp"
#include "engine/runtime/thread_pool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace trilemma::engine {
namespace {

using Clock = std::chrono::steady_clock;

#if defined(__x86_64__)
// Four independent 256-bit accumulators keep enough loads in flight to saturate DRAM.
__attribute__((target("avx2"))) std::uint64_t read_sum_avx2(const std::byte* p, std::size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (std::size_t i = 0; i + 128 <= n; i += 128) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  alignas(32) std::uint64_t out[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)));
  return out[0] + out[1] + out[2] + out[3];
}
#endif

std::uint64_t read_sum_scalar(const std::byte* p, std::size_t n) {
  std::uint64_t s[4] = {};
  for (std::size_t i = 0; i + 32 <= n; i += 32)
    for (int k = 0; k < 4; ++k) {
      std::uint64_t v;
      std::memcpy(&v, p + i + 8 * k, 8);
      s[k] += v;
    }
  return s[0] + s[1] + s[2] + s[3];
}

}  // namespace

std::uint64_t stream_read_sum(const std::byte* p, std::size_t n) {
#if defined(__x86_64__)
  if (cpu_features().avx2) return read_sum_avx2(p, n);
#endif
  return read_sum_scalar(p, n);
}

namespace {

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace

BandwidthRuns measure_read_bandwidth_runs(std::size_t bytes, int threads, int runs) {
  ThreadPool pool(threads);
  const int n = pool.size();
  constexpr std::size_t k_chunk = std::size_t(1) << 20;
  const std::size_t chunks = std::max<std::size_t>(1, bytes / k_chunk);
  std::unique_ptr<std::byte[], void (*)(std::byte*)> buf(static_cast<std::byte*>(std::aligned_alloc(64, chunks * k_chunk)),
                                                         [](std::byte* p) { std::free(p); });
  BandwidthRuns out;
  if (!buf) return out;
  // Touch every page before timing (the first pass would otherwise count page faults).
  pool.parallel_for(std::int64_t(chunks), 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t c = b; c < e; ++c) std::memset(buf.get() + std::size_t(c) * k_chunk, 1, k_chunk);
  });
  std::vector<std::uint64_t> sink(static_cast<std::size_t>(n));
  for (int r = 0; r < runs; ++r) {
    std::atomic<std::size_t> next{0};
    std::vector<double> rate(static_cast<std::size_t>(n));
    const auto t0 = Clock::now();
    pool.parallel_for(n, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t t = b; t < e; ++t) {
        const double c0 = thread_cpu_seconds();
        std::uint64_t s = 0;
        std::size_t read = 0;
        for (std::size_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks; ++read)
          s += stream_read_sum(buf.get() + c * k_chunk, k_chunk);
        const double busy = thread_cpu_seconds() - c0;
        // A thread that got a few chunks only (it was descheduled while the others took the
        // rest) measured mostly its wake-up: it does not count.
        rate[std::size_t(t)] = busy > 0 && read >= 16 ? double(read * k_chunk) / busy / 1e9 : 0;
        sink[std::size_t(t)] += s;
      }
    });
    out.wall.push_back(double(chunks * k_chunk) / std::chrono::duration<double>(Clock::now() - t0).count() / 1e9);
    // The mean rate of the threads that read, for every thread.
    double sum = 0;
    int counted = 0;
    for (double v : rate)
      if (v > 0) sum += v, ++counted;
    if (counted > 0) out.thread_time.push_back(sum / counted * n);
  }
  volatile std::uint64_t keep = sink[0];
  (void)keep;
  return out;
}

PeakRuns measure_peak_runs(PeakPath path, int threads, int runs, double seconds) {
  PeakRuns out;
  out.kernel = peak_kernel(path);
  const auto& k = out.kernel;
  // Iterations for ~`seconds` per run, from a short calibration run.
  std::uint64_t iterations = 1 << 16;
  for (;;) {
    const auto t0 = Clock::now();
    volatile double keep = k.run(iterations);
    (void)keep;
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s > 0.01 || iterations > (std::uint64_t(1) << 40)) {
      iterations = std::max<std::uint64_t>(1, std::uint64_t(double(iterations) * seconds / std::max(s, 1e-9)));
      break;
    }
    iterations *= 4;
  }
  ThreadPool pool(threads);
  const int n = pool.size();
  std::vector<double> sink(static_cast<std::size_t>(n));
  auto once = [&](int width) {
    const auto t0 = Clock::now();
    pool.parallel_for(width, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t t = b; t < e; ++t) sink[std::size_t(t)] = k.run(iterations);
    });
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    return k.ops_per_iteration * double(iterations) * width / s / 1e9;
  };
  for (int r = 0; r < runs; ++r) {
    out.one_thread.push_back(once(1));
    out.all_threads.push_back(once(n));
  }
  volatile double keep = sink[0];
  (void)keep;
  return out;
}

}  // namespace trilemma::engine
