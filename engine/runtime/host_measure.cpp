#include "engine/runtime/host_measure.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "engine/quant/kernel_table.hpp"
#include "engine/runtime/thread_pool.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace trilemma::engine {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

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
  if (__builtin_cpu_supports("avx2")) return read_sum_avx2(p, n);
#endif
  return read_sum_scalar(p, n);
}

double measure_read_bandwidth_gbps(std::size_t bytes, int threads, int runs) {
  ThreadPool pool(threads);
  const int n = pool.size();
  const std::size_t part = bytes / std::size_t(n) / 128 * 128;
  std::unique_ptr<std::byte[], void (*)(std::byte*)> buf(
      static_cast<std::byte*>(std::aligned_alloc(64, part * std::size_t(n))), [](std::byte* p) { std::free(p); });
  if (!buf) return 0;
  // Touch every page from its reading thread so pages are resident before timing.
  pool.parallel_for(n, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t t = b; t < e; ++t) std::memset(buf.get() + std::size_t(t) * part, 1, part);
  });
  std::vector<std::uint64_t> sink(static_cast<std::size_t>(n));
  std::vector<double> gbps;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = Clock::now();
    pool.parallel_for(n, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t t = b; t < e; ++t) sink[std::size_t(t)] = stream_read_sum(buf.get() + std::size_t(t) * part, part);
    });
    gbps.push_back(double(part) * n / std::chrono::duration<double>(Clock::now() - t0).count() / 1e9);
  }
  volatile std::uint64_t keep = sink[0];
  (void)keep;
  return median(gbps);
}

ComputeRates measure_compute(int threads, int runs) {
  ComputeRates out;
  const Isa isa = detect_isa();
  out.isa = isa_name(isa).data();
  ThreadPool pool(threads);
  const int n = pool.size();
  constexpr std::int64_t k_len = 4096;  // 16 KiB of f32: in L1/L2 with its partner
  constexpr int k_reps = 20000;
  auto rate = [&](TensorType type) {
    const FormatKernels* k = find_kernels(type);
    if (!k) return 0.0;
    const DotFn dot = select_dot(*k, isa);
    std::vector<float> x(k_len);
    for (std::int64_t i = 0; i < k_len; ++i) x[std::size_t(i)] = float((i * 37) % 19) / 19.0f - 0.5f;
    const std::size_t row_bytes = tensor_bytes(type, k_len);
    std::vector<std::byte> w(row_bytes), a(tensor_bytes(k->activation, k_len));
    k->quantize(x.data(), w.data(), k_len);
    const FormatKernels* ak = find_kernels(k->activation);
    if (!ak) return 0.0;
    ak->quantize(x.data(), a.data(), k_len);
    std::vector<double> g;
    std::vector<float> sink(static_cast<std::size_t>(n));
    for (int r = 0; r < runs; ++r) {
      const auto t0 = Clock::now();
      pool.parallel_for(n, 1, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t t = b; t < e; ++t) {
          float s = 0;
          for (int i = 0; i < k_reps; ++i) s += dot(w.data(), a.data(), k_len);
          sink[std::size_t(t)] = s;
        }
      });
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      g.push_back(2.0 * k_len * k_reps * n / s / 1e9);
    }
    volatile float keep = sink[0];
    (void)keep;
    return median(g);
  };
  out.f32_gflops = rate(TensorType::f32);
  out.int8_gflops = rate(TensorType::q8_0);
  return out;
}

}  // namespace trilemma::engine
