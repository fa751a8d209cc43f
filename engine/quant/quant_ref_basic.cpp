// Reference (scalar) kernels for the plain float formats and ggml's Q8_0 / Q4_0.
// The quantizers follow ggml-quants.c quantize_row_q8_0_ref / quantize_row_q4_0_ref step for
// step, so their output is bit-identical to ggml's: Q8_0 d = amax / 127, q = round(x / d);
// Q4_0 d = (the signed value of largest magnitude) / -8, q = min(15, trunc(x / d + 8.5)).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/quant/blocks.hpp"
#include "engine/quant/fp16.hpp"
#include "engine/quant/kernels.hpp"

namespace trilemma::engine {
namespace {

// std::roundf (half away from zero) for |v| < 2^23, inline and branch-free: v - trunc(v) is
// exact there. libm's roundf is an out-of-line call at -O2 on baseline x86-64, and a branch on
// the fraction mispredicts half the time on activations; both dominated decode's quantization.
// Inputs beyond +-127 (only NaN or infinity reach here: finite blocks scale into +-127) are
// clamped first, as converting them to int is undefined; NaN becomes +127. Branch-free:
// the two compares compile to minss/maxss.
inline float round_half_away(float v) {
  v = v < 127.0f ? v : 127.0f;
  v = v > -127.0f ? v : -127.0f;
  const int i = int(v);
  const float frac = v - float(i);
  return float(i + int(frac >= 0.5f) - int(frac <= -0.5f));
}

// ggml's min(15, trunc(v)) for v = x / d + 8.5, which finite inputs keep within [0.5, 16.5];
// clamping first gives the same level there and a defined one for NaN (15) and infinities.
inline int q4_level(float v) {
  v = v < 15.0f ? v : 15.0f;
  v = v > 0.0f ? v : 0.0f;
  return int(v);
}

}  // namespace

void quantize_row_f32(const float* x, void* y, std::int64_t n) { std::memcpy(y, x, std::size_t(n) * 4); }
void dequantize_row_f32(const void* x, float* y, std::int64_t n) { std::memcpy(y, x, std::size_t(n) * 4); }

void quantize_row_f16(const float* x, void* y, std::int64_t n) {
  auto* out = static_cast<std::uint16_t*>(y);
  for (std::int64_t i = 0; i < n; ++i) out[i] = fp32_to_fp16(x[i]);
}
void dequantize_row_f16(const void* x, float* y, std::int64_t n) {
  const auto* in = static_cast<const std::uint16_t*>(x);
  for (std::int64_t i = 0; i < n; ++i) y[i] = fp16_to_fp32(in[i]);
}

void quantize_row_bf16(const float* x, void* y, std::int64_t n) {
  auto* out = static_cast<std::uint16_t*>(y);
  for (std::int64_t i = 0; i < n; ++i) out[i] = fp32_to_bf16(x[i]);
}
void dequantize_row_bf16(const void* x, float* y, std::int64_t n) {
  const auto* in = static_cast<const std::uint16_t*>(x);
  for (std::int64_t i = 0; i < n; ++i) y[i] = bf16_to_fp32(in[i]);
}

void quantize_row_q8_0(const float* x, void* y, std::int64_t n) {
  auto* b = static_cast<BlockQ8_0*>(y);
  for (std::int64_t i = 0; i < n / k_qk8_0; ++i, x += k_qk8_0) {
    float amax = 0.0f;
    for (int j = 0; j < k_qk8_0; ++j) {
      const float v = std::fabs(x[j]);
      amax = amax > v ? amax : v;  // ggml's MAX()
    }
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;  // an all-zero block stays zero, no 0/0
    b[i].d = fp32_to_fp16(d);
    for (int j = 0; j < k_qk8_0; ++j) b[i].qs[j] = std::int8_t(round_half_away(x[j] * id));
  }
}
void dequantize_row_q8_0(const void* x, float* y, std::int64_t n) {
  const auto* b = static_cast<const BlockQ8_0*>(x);
  for (std::int64_t i = 0; i < n / k_qk8_0; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    for (int j = 0; j < k_qk8_0; ++j) *y++ = d * float(b[i].qs[j]);
  }
}

void quantize_row_q4_0(const float* x, void* y, std::int64_t n) {
  auto* b = static_cast<BlockQ4_0*>(y);
  for (std::int64_t i = 0; i < n / k_qk4_0; ++i, x += k_qk4_0) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < k_qk4_0; ++j) {
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    for (int j = 0; j < k_qk4_0 / 2; ++j) {
      const auto q0 = std::uint8_t(q4_level(x[j] * id + 8.5f));
      const auto q1 = std::uint8_t(q4_level(x[j + k_qk4_0 / 2] * id + 8.5f));
      b[i].qs[j] = std::uint8_t(q0 | (q1 << 4));
    }
  }
}
void dequantize_row_q4_0(const void* x, float* y, std::int64_t n) {
  const auto* b = static_cast<const BlockQ4_0*>(x);
  for (std::int64_t i = 0; i < n / k_qk4_0; ++i, y += k_qk4_0) {
    const float d = fp16_to_fp32(b[i].d);
    for (int j = 0; j < k_qk4_0 / 2; ++j) {
      y[j] = d * float((b[i].qs[j] & 0x0F) - 8);
      y[j + k_qk4_0 / 2] = d * float((b[i].qs[j] >> 4) - 8);
    }
  }
}

// Float dots sum left to right, as llama2.c's matmul does: the F32 path is its reference.
float dot_f32_f32_ref(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const float*>(w);
  const auto* y = static_cast<const float*>(a);
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) sum += x[i] * y[i];
  return sum;
}
float dot_f16_f32_ref(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const std::uint16_t*>(w);
  const auto* y = static_cast<const float*>(a);
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) sum += fp16_to_fp32(x[i]) * y[i];
  return sum;
}
float dot_bf16_f32_ref(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const std::uint16_t*>(w);
  const auto* y = static_cast<const float*>(a);
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n; ++i) sum += bf16_to_fp32(x[i]) * y[i];
  return sum;
}

// Integer sums per block, scaled once per block (ggml_vec_dot_q8_0_q8_0 / q4_0_q8_0).
float dot_q8_0_q8_0_ref(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ8_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n / k_qk8_0; ++i) {
    int isum = 0;
    for (int j = 0; j < k_qk8_0; ++j) isum += x[i].qs[j] * y[i].qs[j];
    sum += float(isum) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
  }
  return sum;
}
float dot_q4_0_q8_0_ref(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n / k_qk4_0; ++i) {
    int isum = 0;
    for (int j = 0; j < k_qk4_0 / 2; ++j) {
      isum += ((x[i].qs[j] & 0x0F) - 8) * y[i].qs[j];
      isum += ((x[i].qs[j] >> 4) - 8) * y[i].qs[j + k_qk4_0 / 2];
    }
    sum += float(isum) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
  }
  return sum;
}

}  // namespace trilemma::engine
