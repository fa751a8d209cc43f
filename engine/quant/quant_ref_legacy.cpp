// Reference (scalar) kernels for the rest of ggml's 32-weight formats: Q4_1, Q5_0, Q5_1 and
// IQ4_NL. llama-quantize writes them where a k-quant recipe falls back (rows that are not a
// multiple of 256: Q4_K_M stores such tensors as Q5_0, Q5_K_M as Q5_1) and as recipes of their
// own. Layouts: blocks.hpp. The dots pair with Q8_0 activations (ggml pairs Q4_1/Q5_1 with
// Q8_1, whose stored block sum is this sum of the Q8_0 codes times its scale):
//   Q4_1/Q5_1: dot = sum_b dy * (d * sum(q * y) + m * sum(y))
//   Q5_0:      dot = sum_b dy * d * sum((q - 16) * y)
//   IQ4_NL:    dot = sum_b dy * d * sum(values[q] * y)
// The quantizers are plain round-to-nearest on the block's range (min/max, or the value of
// largest magnitude): files come from llama-quantize; these serve `run --weights`-style
// conversion and the kernel tests.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/quant/blocks.hpp"
#include "engine/quant/fp16.hpp"
#include "engine/quant/kernels.hpp"

namespace trilemma::engine {
namespace {

constexpr int k_half = k_qk4_0 / 2;

// Level of v clamped to [0, top]; NaN becomes 0, +inf top (compared before the conversion,
// which is undefined for a value past int's range).
int level(float v, int top) { return v >= 0.0f ? (v < float(top) ? int(v) : top) : 0; }

// The 4-bit code of element j (< 32) of a nibble-packed block.
int nibble(const std::uint8_t* qs, int j) { return j < k_half ? qs[j] & 0x0F : qs[j - k_half] >> 4; }

void put_nibbles(const int* q, std::uint8_t* qs) {
  for (int j = 0; j < k_half; ++j) qs[j] = std::uint8_t((q[j] & 0x0F) | ((q[j + k_half] & 0x0F) << 4));
}

std::uint32_t high_bits(const std::uint8_t* qh) {
  std::uint32_t h;
  std::memcpy(&h, qh, 4);
  return h;
}

void put_high_bits(const int* q, std::uint8_t* qh) {
  std::uint32_t h = 0;
  for (int j = 0; j < k_qk4_0; ++j) h |= std::uint32_t((q[j] >> 4) & 1) << j;
  std::memcpy(qh, &h, 4);
}

int code5(const std::uint8_t* qs, std::uint32_t qh, int j) { return nibble(qs, j) | int(((qh >> j) & 1) << 4); }

// Min/max blocks (Q4_1, Q5_1): x ~= d * q + m with m = min, d = range / top.
template <class Block>
void quantize_min_max(const float* x, Block& b, int top, int* q) {
  const auto [lo, hi] = std::minmax_element(x, x + k_qk4_0);
  const float d = (*hi - *lo) / float(top);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  b.d = fp32_to_fp16(d);
  b.m = fp32_to_fp16(*lo);
  for (int j = 0; j < k_qk4_0; ++j) q[j] = level((x[j] - *lo) * id + 0.5f, top);
}

// The signed value of largest magnitude in a block.
float signed_max(const float* x) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < k_qk4_0; ++j)
    if (amax < std::fabs(x[j])) amax = std::fabs(x[j]), max = x[j];
  return max;
}

int nearest_iq4nl(float v) {
  int best = 0;
  for (int k = 1; k < 16; ++k)
    if (std::fabs(v - float(k_iq4nl_values[k])) < std::fabs(v - float(k_iq4nl_values[best]))) best = k;
  return best;
}

// Blocks x = d * value(j) against Q8_0: integer sum per block, scaled once.
template <class Block, class Value>
float dot_scale_blocks(const Block* x, const BlockQ8_0* y, std::int64_t n, Value value) {
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n / k_qk4_0; ++i) {
    int isum = 0;
    for (int j = 0; j < k_qk4_0; ++j) isum += value(x[i], j) * y[i].qs[j];
    sum += float(isum) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
  }
  return sum;
}

// Blocks x = d * code(j) + m against Q8_0: dy * (d * sum(q * y) + m * sum(y)) per block.
template <class Block, class Code>
float dot_min_blocks(const Block* x, const BlockQ8_0* y, std::int64_t n, Code code) {
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n / k_qk4_0; ++i) {
    int qy = 0, sy = 0;
    for (int j = 0; j < k_qk4_0; ++j) qy += code(x[i], j) * y[i].qs[j], sy += y[i].qs[j];
    sum += fp16_to_fp32(y[i].d) * (fp16_to_fp32(x[i].d) * float(qy) + fp16_to_fp32(x[i].m) * float(sy));
  }
  return sum;
}

}  // namespace

void quantize_row_q4_1(const float* x, void* y, std::int64_t n) {
  auto* b = static_cast<BlockQ4_1*>(y);
  int q[k_qk4_0];
  for (std::int64_t i = 0; i < n / k_qk4_0; ++i, x += k_qk4_0) {
    quantize_min_max(x, b[i], 15, q);
    put_nibbles(q, b[i].qs);
  }
}
void dequantize_row_q4_1(const void* x, float* y, std::int64_t n) {
  const auto* b = static_cast<const BlockQ4_1*>(x);
  for (std::int64_t i = 0; i < n / k_qk4_0; ++i) {
    const float d = fp16_to_fp32(b[i].d), m = fp16_to_fp32(b[i].m);
    for (int j = 0; j < k_qk4_0; ++j) *y++ = d * float(nibble(b[i].qs, j)) + m;
  }
}

void quantize_row_q5_0(const float* x, void* y, std::int64_t n) {
  auto* b = static_cast<BlockQ5_0*>(y);
  int q[k_qk4_0];
  for (std::int64_t i = 0; i < n / k_qk4_0; ++i, x += k_qk4_0) {
    const float d = signed_max(x) / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    for (int j = 0; j < k_qk4_0; ++j) q[j] = level(x[j] * id + 16.5f, 31);
    put_nibbles(q, b[i].qs);
    put_high_bits(q, b[i].qh);
  }
}
void dequantize_row_q5_0(const void* x, float* y, std::int64_t n) {
  const auto* b = static_cast<const BlockQ5_0*>(x);
  for (std::int64_t i = 0; i < n / k_qk4_0; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    const std::uint32_t qh = high_bits(b[i].qh);
    for (int j = 0; j < k_qk4_0; ++j) *y++ = d * float(code5(b[i].qs, qh, j) - 16);
  }
}

void quantize_row_q5_1(const float* x, void* y, std::int64_t n) {
  auto* b = static_cast<BlockQ5_1*>(y);
  int q[k_qk4_0];
  for (std::int64_t i = 0; i < n / k_qk4_0; ++i, x += k_qk4_0) {
    quantize_min_max(x, b[i], 31, q);
    put_nibbles(q, b[i].qs);
    put_high_bits(q, b[i].qh);
  }
}
void dequantize_row_q5_1(const void* x, float* y, std::int64_t n) {
  const auto* b = static_cast<const BlockQ5_1*>(x);
  for (std::int64_t i = 0; i < n / k_qk4_0; ++i) {
    const float d = fp16_to_fp32(b[i].d), m = fp16_to_fp32(b[i].m);
    const std::uint32_t qh = high_bits(b[i].qh);
    for (int j = 0; j < k_qk4_0; ++j) *y++ = d * float(code5(b[i].qs, qh, j)) + m;
  }
}

void quantize_row_iq4_nl(const float* x, void* y, std::int64_t n) {
  auto* b = static_cast<BlockIq4Nl*>(y);
  int q[k_qk4_0];
  for (std::int64_t i = 0; i < n / k_qk4_0; ++i, x += k_qk4_0) {
    // The largest magnitude lands on the level of largest magnitude, -127.
    const float d = signed_max(x) / float(k_iq4nl_values[0]);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = fp32_to_fp16(d);
    for (int j = 0; j < k_qk4_0; ++j) q[j] = nearest_iq4nl(x[j] * id);
    put_nibbles(q, b[i].qs);
  }
}
void dequantize_row_iq4_nl(const void* x, float* y, std::int64_t n) {
  const auto* b = static_cast<const BlockIq4Nl*>(x);
  for (std::int64_t i = 0; i < n / k_qk4_0; ++i) {
    const float d = fp16_to_fp32(b[i].d);
    for (int j = 0; j < k_qk4_0; ++j) *y++ = d * float(k_iq4nl_values[nibble(b[i].qs, j)]);
  }
}

float dot_q4_1_q8_0_ref(const void* w, const void* a, std::int64_t n) {
  return dot_min_blocks(static_cast<const BlockQ4_1*>(w), static_cast<const BlockQ8_0*>(a), n,
                        [](const BlockQ4_1& b, int j) { return nibble(b.qs, j); });
}
float dot_q5_1_q8_0_ref(const void* w, const void* a, std::int64_t n) {
  return dot_min_blocks(static_cast<const BlockQ5_1*>(w), static_cast<const BlockQ8_0*>(a), n,
                        [](const BlockQ5_1& b, int j) { return code5(b.qs, high_bits(b.qh), j); });
}
float dot_q5_0_q8_0_ref(const void* w, const void* a, std::int64_t n) {
  return dot_scale_blocks(static_cast<const BlockQ5_0*>(w), static_cast<const BlockQ8_0*>(a), n,
                          [](const BlockQ5_0& b, int j) { return code5(b.qs, high_bits(b.qh), j) - 16; });
}
float dot_iq4_nl_q8_0_ref(const void* w, const void* a, std::int64_t n) {
  return dot_scale_blocks(static_cast<const BlockIq4Nl*>(w), static_cast<const BlockQ8_0*>(a), n,
                          [](const BlockIq4Nl& b, int j) { return int(k_iq4nl_values[nibble(b.qs, j)]); });
}

}  // namespace trilemma::engine
