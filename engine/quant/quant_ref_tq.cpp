// Reference kernels for trilemma's INT3 / INT2 formats tq3_t and tq2_t (docs/formats.md).
// A 64-weight block stores x ~= d * q + m with fp16 d and m, q in [0, 2^bits - 1]:
//   m = min(x), d = (max(x) - min(x)) / (2^bits - 1), q = round((x - m) / d) computed with the
//   fp16-rounded d and m, so the stored codes are the best for the stored scales.
// Codes are split in bit planes so SIMD unpacks them with shifts and masks alone: the low two
// bits of element i sit at bits 2*(i/16) of plane byte i % 16, the third bit of tq3_t at bit
// i % 8 of qh[i / 8]. Dots pair with Q8_0 activations, two activation blocks per weight block:
//   dot = sum_h dy_h * (d * sum(q * y) + m * sum(y)).
#include <algorithm>
#include <cmath>

#include "engine/quant/blocks.hpp"
#include "engine/quant/fp16.hpp"
#include "engine/quant/kernels.hpp"

namespace trilemma::engine {
namespace {

template <int bits>
void quantize_codes(const float* x, std::uint16_t& d16, std::uint16_t& m16, std::uint8_t* q) {
  constexpr int levels = (1 << bits) - 1;
  const auto [lo, hi] = std::minmax_element(x, x + k_qk_t);
  m16 = fp32_to_fp16(*lo);
  d16 = fp32_to_fp16((*hi - *lo) / levels);
  const float m = fp16_to_fp32(m16), d = fp16_to_fp32(d16);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;  // a constant block stores q = 0, x = m
  for (int i = 0; i < k_qk_t; ++i) q[i] = std::uint8_t(std::clamp(int(std::lround((x[i] - m) * id)), 0, levels));
}

void pack_low2(const std::uint8_t* q, std::uint8_t* plane) {
  for (int j = 0; j < 16; ++j)
    plane[j] = std::uint8_t((q[j] & 3) | ((q[j + 16] & 3) << 2) | ((q[j + 32] & 3) << 4) | ((q[j + 48] & 3) << 6));
}

int tq_low2(const std::uint8_t* plane, int i) { return (plane[i % 16] >> (2 * (i / 16))) & 3; }

template <class Block>
int code(const Block& b, int i) {
  if constexpr (sizeof(Block) == sizeof(BlockTq3)) return tq_low2(b.ql, i) | (((b.qh[i / 8] >> (i % 8)) & 1) << 2);
  else return tq_low2(b.qs, i);
}

template <class Block>
void dequantize_t(const void* x, float* y, std::int64_t n) {
  const auto* b = static_cast<const Block*>(x);
  for (std::int64_t i = 0; i < n / k_qk_t; ++i) {
    const float d = fp16_to_fp32(b[i].d), m = fp16_to_fp32(b[i].m);
    for (int e = 0; e < k_qk_t; ++e) *y++ = d * float(code(b[i], e)) + m;
  }
}

template <class Block>
float dot_t(const void* w, const void* a, std::int64_t n) {
  const auto* b = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n / k_qk_t; ++i) {
    const float d = fp16_to_fp32(b[i].d), m = fp16_to_fp32(b[i].m);
    for (int h = 0; h < 2; ++h, ++y) {
      int qy = 0, sy = 0;
      for (int l = 0; l < 32; ++l) {
        qy += code(b[i], 32 * h + l) * y->qs[l];
        sy += y->qs[l];
      }
      sum += fp16_to_fp32(y->d) * (d * float(qy) + m * float(sy));
    }
  }
  return sum;
}

}  // namespace

void quantize_row_tq3_t(const float* x, void* y, std::int64_t n) {
  auto* b = static_cast<BlockTq3*>(y);
  std::uint8_t q[k_qk_t];
  for (std::int64_t i = 0; i < n / k_qk_t; ++i, x += k_qk_t) {
    quantize_codes<3>(x, b[i].d, b[i].m, q);
    pack_low2(q, b[i].ql);
    for (int j = 0; j < 8; ++j) {
      std::uint8_t bitsj = 0;
      for (int k = 0; k < 8; ++k) bitsj |= std::uint8_t(((q[8 * j + k] >> 2) & 1) << k);
      b[i].qh[j] = bitsj;
    }
  }
}

void quantize_row_tq2_t(const float* x, void* y, std::int64_t n) {
  auto* b = static_cast<BlockTq2*>(y);
  std::uint8_t q[k_qk_t];
  for (std::int64_t i = 0; i < n / k_qk_t; ++i, x += k_qk_t) {
    quantize_codes<2>(x, b[i].d, b[i].m, q);
    pack_low2(q, b[i].qs);
  }
}

void dequantize_row_tq3_t(const void* x, float* y, std::int64_t n) { dequantize_t<BlockTq3>(x, y, n); }
void dequantize_row_tq2_t(const void* x, float* y, std::int64_t n) { dequantize_t<BlockTq2>(x, y, n); }
float dot_tq3_t_q8_0_ref(const void* w, const void* a, std::int64_t n) { return dot_t<BlockTq3>(w, a, n); }
float dot_tq2_t_q8_0_ref(const void* w, const void* a, std::int64_t n) { return dot_t<BlockTq2>(w, a, n); }

}  // namespace trilemma::engine
