// The dots of the 32-weight formats beside Q8_0 and Q4_0 against Q8_0 on Arm (Q4_1, Q5_0, Q5_1,
// IQ4_NL, and trilemma's TQ3_T and TQ2_T), written once over the instruction that sums 16 int8
// products into 4 int32 lanes: ARMv8.0's widening multiplies (simd/neon/dot_neon.cpp) or
// ARMv8.2's SDOT (simd/neon_dotprod/dot_neon_dotprod.cpp). The integer sums are exact in either
// way, and the float steps are the reference's, so the two columns give the same bits (tested;
// both files are compiled with -ffp-contract=off).
//
// Everything here has internal linkage: the header is included by translation units built with
// different -march flags (see k_quant_neon.hpp).
#pragma once
#include <arm_neon.h>

#include "engine/quant/blocks.hpp"
#include "engine/quant/fp16.hpp"

namespace trilemma::engine {
namespace {
namespace b32_neon {

// The 64 two-bit codes of a tq plane (quant_ref_tq.cpp: element i at bits 2*(i/16) of byte
// i % 16): c[k] holds codes 16k..16k+15, so one shift and mask per vector.
void unpack_low2(const std::uint8_t* plane, uint8x16_t c[4]) {
  const uint8x16_t v = vld1q_u8(plane), three = vdupq_n_u8(3);
  c[0] = vandq_u8(v, three);
  c[1] = vandq_u8(vshrq_n_u8(v, 2), three);
  c[2] = vandq_u8(vshrq_n_u8(v, 4), three);
  c[3] = vshrq_n_u8(v, 6);
}

// Bit i % 8 of bytes[i / 8] as `value` in byte i of 16 (VTST against one bit a lane).
uint8x16_t bits_to_bytes(const std::uint8_t* bytes, std::uint8_t value) {
  static constexpr std::uint8_t k_bit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t planes = vcombine_u8(vdup_n_u8(bytes[0]), vdup_n_u8(bytes[1]));
  return vandq_u8(vtstq_u8(planes, vld1q_u8(k_bit)), vdupq_n_u8(value));
}

// tq3_t's third bit: bit i % 8 of qh[i / 8] becomes 4 in code i.
void add_high_bit(const std::uint8_t* qh, uint8x16_t c[4]) {
  for (int k = 0; k < 4; ++k) c[k] = vorrq_u8(c[k], bits_to_bytes(qh + 2 * k, 4));
}

// A 32-weight block's codes: lo = elements 0..15 (low nibbles), hi = 16..31 (high nibbles);
// Q5_0/Q5_1 add the fifth bit of element j from bit j of qh.
struct Codes32 {
  uint8x16_t lo, hi;
};
Codes32 nibbles(const std::uint8_t* qs) {
  const uint8x16_t v = vld1q_u8(qs);
  return {vandq_u8(v, vdupq_n_u8(0x0F)), vshrq_n_u8(v, 4)};
}
Codes32 codes5(const std::uint8_t* qs, const std::uint8_t* qh) {
  const Codes32 c = nibbles(qs);
  return {vorrq_u8(c.lo, bits_to_bytes(qh, 0x10)), vorrq_u8(c.hi, bits_to_bytes(qh + 2, 0x10))};
}

// x = d * value blocks (Q5_0, IQ4_NL): `values` gives the signed int8 values of block i.
template <class Dot, class Block, class Values>
float dot_scale_blocks(const Block* x, const BlockQ8_0* y, std::int64_t nb, Values values) {
  float sum = 0.0f;
  for (std::int64_t i = 0; i < nb; ++i) {
    int8x16_t lo, hi;
    values(x[i], lo, hi);
    const int32x4_t s = Dot::sum(Dot::sum(vdupq_n_s32(0), lo, vld1q_s8(y[i].qs)), hi, vld1q_s8(y[i].qs + 16));
    sum += float(vaddvq_s32(s)) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
  }
  return sum;
}

// x = d * q + m blocks (Q4_1, Q5_1): dy * (d * sum(q * y) + m * sum(y)), as the reference.
template <class Dot, class Block, class CodesOf>
float dot_min_blocks(const Block* x, const BlockQ8_0* y, std::int64_t nb, CodesOf codes_of) {
  float sum = 0.0f;
  for (std::int64_t i = 0; i < nb; ++i) {
    const Codes32 c = codes_of(x[i]);
    const int8x16_t y0 = vld1q_s8(y[i].qs), y1 = vld1q_s8(y[i].qs + 16);
    const int32x4_t qy = Dot::sum(Dot::sum(vdupq_n_s32(0), vreinterpretq_s8_u8(c.lo), y0), vreinterpretq_s8_u8(c.hi), y1);
    const int sy = vaddlvq_s16(vaddq_s16(vpaddlq_s8(y0), vpaddlq_s8(y1)));
    sum += fp16_to_fp32(y[i].d) * (fp16_to_fp32(x[i].d) * float(vaddvq_s32(qy)) + fp16_to_fp32(x[i].m) * float(sy));
  }
  return sum;
}

// One tq block's codes (0..7, so they are valid int8) against its two Q8_0 activation blocks:
// sum_h dy_h * (d * sum(q * y) + m * sum(y)), the reference's order of operations.
template <class Dot>
float tq_block(const uint8x16_t c[4], float d, float m, const BlockQ8_0* y) {
  float sum = 0.0f;
  for (int h = 0; h < 2; ++h) {
    const int8x16_t y0 = vld1q_s8(y[h].qs), y1 = vld1q_s8(y[h].qs + 16);
    const int32x4_t qy = Dot::sum(Dot::sum(vdupq_n_s32(0), vreinterpretq_s8_u8(c[2 * h]), y0), vreinterpretq_s8_u8(c[2 * h + 1]), y1);
    const int sy = vaddlvq_s16(vaddq_s16(vpaddlq_s8(y0), vpaddlq_s8(y1)));
    sum += fp16_to_fp32(y[h].d) * (d * float(vaddvq_s32(qy)) + m * float(sy));
  }
  return sum;
}

template <class Dot>
float dot_q4_1(const void* w, const void* a, std::int64_t n) {
  return dot_min_blocks<Dot>(static_cast<const BlockQ4_1*>(w), static_cast<const BlockQ8_0*>(a), n / k_qk4_0,
                        [](const BlockQ4_1& b) { return nibbles(b.qs); });
}
template <class Dot>
float dot_q5_1(const void* w, const void* a, std::int64_t n) {
  return dot_min_blocks<Dot>(static_cast<const BlockQ5_1*>(w), static_cast<const BlockQ8_0*>(a), n / k_qk4_0,
                        [](const BlockQ5_1& b) { return codes5(b.qs, b.qh); });
}
template <class Dot>
float dot_q5_0(const void* w, const void* a, std::int64_t n) {
  return dot_scale_blocks<Dot>(static_cast<const BlockQ5_0*>(w), static_cast<const BlockQ8_0*>(a), n / k_qk4_0,
                          [](const BlockQ5_0& b, int8x16_t& lo, int8x16_t& hi) {
                            const Codes32 c = codes5(b.qs, b.qh);
                            lo = vsubq_s8(vreinterpretq_s8_u8(c.lo), vdupq_n_s8(16));
                            hi = vsubq_s8(vreinterpretq_s8_u8(c.hi), vdupq_n_s8(16));
                          });
}
// IQ4_NL: each nibble looks its level up in the 16-entry table (one TBL).
template <class Dot>
float dot_iq4_nl(const void* w, const void* a, std::int64_t n) {
  return dot_scale_blocks<Dot>(static_cast<const BlockIq4Nl*>(w), static_cast<const BlockQ8_0*>(a), n / k_qk4_0,
                          [](const BlockIq4Nl& b, int8x16_t& lo, int8x16_t& hi) {
                            const int8x16_t table = vld1q_s8(k_iq4nl_values);
                            const Codes32 c = nibbles(b.qs);
                            lo = vqtbl1q_s8(table, c.lo);
                            hi = vqtbl1q_s8(table, c.hi);
                          });
}

template <class Dot>
float dot_tq3_t(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockTq3*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  uint8x16_t c[4];
  for (std::int64_t i = 0; i < n / k_qk_t; ++i, y += 2) {
    unpack_low2(x[i].ql, c);
    add_high_bit(x[i].qh, c);
    sum += tq_block<Dot>(c, fp16_to_fp32(x[i].d), fp16_to_fp32(x[i].m), y);
  }
  return sum;
}

template <class Dot>
float dot_tq2_t(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockTq2*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  uint8x16_t c[4];
  for (std::int64_t i = 0; i < n / k_qk_t; ++i, y += 2) {
    unpack_low2(x[i].qs, c);
    sum += tq_block<Dot>(c, fp16_to_fp32(x[i].d), fp16_to_fp32(x[i].m), y);
  }
  return sum;
}

}  // namespace b32_neon
}  // namespace
}  // namespace trilemma::engine
