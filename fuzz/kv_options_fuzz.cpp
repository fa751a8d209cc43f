// KV caches built from any combination of format, strategy, window, sinks, page size, resident
// budget and capacity (reliability D3, D12). Oracle: make_kv_cache refuses or builds; a built
// cache stores and attends every position it was sized for with finite outputs for finite
// inputs, and never holds more than its capacity's worth of rows.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/kv/kv_cache.hpp"
#include "types/deployment.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  engine::KvConfig c;
  c.layers = in.ConsumeIntegralInRange<int>(1, 2);
  c.kv_heads = in.ConsumeIntegralInRange<int>(1, 2);
  c.heads = c.kv_heads * in.ConsumeIntegralInRange<int>(1, 2);
  c.head_dim = 32 * in.ConsumeIntegralInRange<int>(1, 2);
  c.capacity = in.ConsumeIntegralInRange<int>(-2, 96);
  const auto formats = kv_formats();
  c.format = formats[in.ConsumeIntegralInRange<std::size_t>(0, formats.size() - 1)];
  c.strategy = static_cast<KvStrategy>(in.ConsumeIntegralInRange<int>(0, int(k_kv_strategy_count) - 1));
  c.options.page_positions = in.ConsumeIntegral<int>();
  c.options.sliding.window = in.ConsumeIntegral<int>();
  c.options.sliding.sinks = in.ConsumeIntegral<int>();
  c.options.offload.resident_bytes = in.ConsumeIntegral<std::uint64_t>();
  c.max_rewrite = in.ConsumeIntegralInRange<int>(-1, 64);
  auto made = engine::make_kv_cache(c);
  if (!made.ok()) return 0;
  auto& cache = **made;
  const int positions = std::min(cache.capacity(), 48);
  const int dim = c.kv_heads * c.head_dim;
  std::vector<float> k(static_cast<std::size_t>(dim)), v(static_cast<std::size_t>(dim)), q(std::size_t(c.heads * c.head_dim)), out(q.size());
  auto scratch = cache.make_scratch();
  for (int pos = 0; pos < positions; ++pos) {
    for (auto* row : {&k, &v})
      for (auto& x : *row) x = float(in.ConsumeIntegralInRange<int>(-100, 100)) / 16.0f;
    for (int l = 0; l < c.layers; ++l) cache.store(l, pos, k.data(), v.data());
    for (int l = 0; l < c.layers; ++l) {
      cache.prepare_attend(l, pos + 1);
      for (auto& x : q) x = float(in.ConsumeIntegralInRange<int>(-100, 100)) / 16.0f;
      const int group = c.heads / c.kv_heads;
      for (int h = 0; h < c.heads; h += group) cache.attend(l, h, group, pos + 1, q.data(), out.data(), scratch);
      if (!cache.status().ok()) return 0;  // the slower tier failed: reported, not a finding
      for (float x : out)
        FUZZ_CHECK(std::isfinite(x));
    }
  }
  const auto stats = cache.stats();
  FUZZ_CHECK(stats.used_bytes <= stats.allocated_bytes + stats.spilled_bytes + 1);
  return 0;
}
