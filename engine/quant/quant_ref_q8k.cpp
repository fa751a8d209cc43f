// Q8_K, the k-quants' activation format (blocks.hpp). The quantizer follows ggml-quants.c
// quantize_row_q8_K_ref: the signed value of largest magnitude maps to -127, codes round to
// nearest (ties to even, as ggml's nearest_int) and are capped at 127; bsums are the sums of
// each 16 codes. Its own dot (Q8_K x Q8_K) exists so the table can treat it as a format.
#include <cmath>

#include "engine/quant/blocks.hpp"
#include "engine/quant/kernels.hpp"

namespace trilemma::engine {

void quantize_row_q8_k(const float* x, void* y, std::int64_t n) {
  auto* b = static_cast<BlockQ8K*>(y);
  for (std::int64_t i = 0; i < n / k_qk_k; ++i, x += k_qk_k) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < k_qk_k; ++j)
      if (std::fabs(x[j]) > amax) amax = std::fabs(x[j]), max = x[j];
    BlockQ8K& blk = b[i];
    blk = BlockQ8K{};
    // An all-zero block, or one whose largest value is infinite, stores zeros (no 0/0, no
    // inf * 0); NaN never wins the comparison above.
    if (amax == 0.0f || !std::isfinite(amax)) continue;
    const float iscale = -127.0f / max;
    for (int j = 0; j < k_qk_k; ++j) {
      const float v = std::nearbyint(iscale * x[j]);
      blk.qs[j] = std::int8_t(v >= 127.0f ? 127 : v <= -127.0f ? -127 : v == v ? int(v) : 0);
    }
    for (int t = 0; t < 16; ++t) {
      int sum = 0;
      for (int l = 0; l < 16; ++l) sum += blk.qs[16 * t + l];
      blk.bsums[t] = std::int16_t(sum);
    }
    blk.d = 1.0f / iscale;
  }
}

void dequantize_row_q8_k(const void* x, float* y, std::int64_t n) {
  const auto* b = static_cast<const BlockQ8K*>(x);
  for (std::int64_t i = 0; i < n / k_qk_k; ++i)
    for (int j = 0; j < k_qk_k; ++j) *y++ = b[i].d * float(b[i].qs[j]);
}

float dot_q8_k_q8_k_ref(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ8K*>(w);
  const auto* y = static_cast<const BlockQ8K*>(a);
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n / k_qk_k; ++i) {
    int s = 0;
    for (int j = 0; j < k_qk_k; ++j) s += x[i].qs[j] * y[i].qs[j];
    sum += x[i].d * y[i].d * float(s);
  }
  return sum;
}

}  // namespace trilemma::engine
