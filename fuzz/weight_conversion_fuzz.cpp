// Weight conversion as the engine's loader does it (prepare.hpp): a stored row of any format the
// engine reads (its bytes from the input: NaN scales, subnormals, extreme blocks) or plain floats
// is decoded, quantized to any target format, and multiplied by an activation row. Oracle: a
// finite source within f16's range converts to a finite row no larger than twice the source's
// largest magnitude; this CPU's quantizer writes the reference's bytes; this CPU's dot product
// stays within the format's tolerance of the scalar reference (kernel_table.hpp).
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/quant/kernel_table.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;
using namespace trilemma::engine;

namespace {


std::vector<std::uint8_t> encode(const FormatKernels& k, const std::vector<float>& x) {
  const auto& t = info(k.weight);
  std::vector<std::uint8_t> out(x.size() / t.block_elems * t.block_bytes);
  k.quantize(x.data(), out.data(), std::int64_t(x.size()));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Isa isa = detect_isa();
  FuzzedDataProvider in(data, size);
  const auto table = format_kernels();
  const FormatKernels& target = table[in.ConsumeIntegralInRange<std::size_t>(0, table.size() - 1)];
  const std::int64_t n = std::int64_t(info(target.weight).block_elems) * in.ConsumeIntegralInRange<int>(1, 4);

  // The source row: stored bytes of a format whose blocks fit the row, or floats.
  std::vector<float> x(std::size_t(n), 0.0f);
  const FormatKernels& source = table[in.ConsumeIntegralInRange<std::size_t>(0, table.size() - 1)];
  const auto& st = info(source.weight);
  if (n % st.block_elems == 0 && in.ConsumeBool()) {
    std::vector<std::uint8_t> stored(std::size_t(n / st.block_elems * st.block_bytes));
    const auto bytes = in.ConsumeBytes<std::uint8_t>(stored.size());
    std::copy(bytes.begin(), bytes.end(), stored.begin());
    source.dequantize(stored.data(), x.data(), n);
  } else {
    for (auto& v : x) v = in.ConsumeFloatingPoint<float>();
  }
  float amax = 0;
  bool finite = true;
  for (float v : x) finite = finite && std::isfinite(v), amax = std::max(amax, std::fabs(v));

  const auto w = encode(target, x);
  std::vector<float> y(static_cast<std::size_t>(n));
  target.dequantize(w.data(), y.data(), n);
  if (!finite || amax > 6.0e4f) return 0;  // past f16 a scale overflows; the forward pass refuses what follows (D1)
  const QuantizeRowFn fast = select_quantize(target, isa);
  if (fast != target.quantize) {
    std::vector<std::uint8_t> again(w.size());
    fast(x.data(), again.data(), n);
    FUZZ_CHECK(again == w);
  }
  for (float v : y) FUZZ_CHECK(std::isfinite(v) && std::fabs(v) <= 2 * amax + 1e-6f);

  // The dot against an activation row quantized as the kernels take it.
  const FormatKernels* act = find_kernels(target.activation);
  if (act == nullptr) return 0;
  std::vector<float> a(static_cast<std::size_t>(n));
  for (auto& v : a) v = float(in.ConsumeIntegralInRange<int>(-4096, 4096)) / 64.0f;
  const auto qa = encode(*act, a);
  std::vector<float> ad(static_cast<std::size_t>(n));
  act->dequantize(qa.data(), ad.data(), n);
  // Float rounding scales with the terms a kernel sums, not with the dot: a format with a block
  // minimum (q4_1, q5_1, the k-quants' dmin) computes d * sum(q * a) + m * sum(a), two terms up
  // to amax * sum|a| that cancel (a q5_1 block of values near -921 missed 1e-5 of sum|y * a| by
  // 1.3e-5 in CI; corpus regression-min-cancellation).
  double magnitude = 0, sum_abs_a = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    magnitude += std::fabs(double(y[std::size_t(i)]) * ad[std::size_t(i)]);
    sum_abs_a += std::fabs(double(ad[std::size_t(i)]));
  }
  magnitude = std::max(magnitude, 3.0 * double(amax) * sum_abs_a);
  const float ref = target.dot_ref(w.data(), qa.data(), n);
  FUZZ_CHECK(std::isfinite(ref));
  const DotFn dot = select_dot(target, isa);
  if (dot != target.dot_ref) FUZZ_CHECK(std::fabs(dot(w.data(), qa.data(), n) - ref) <= target.dot_tolerance * magnitude + 1e-6);
  return 0;
}
