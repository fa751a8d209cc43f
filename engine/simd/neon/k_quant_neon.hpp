// The k-quant dots against Q8_K on Arm (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K), written once over the
// instruction that sums 16 int8 products into 4 int32 lanes: ARMv8.0's widening multiplies
// (simd/neon/dot_k_neon.cpp) or ARMv8.2's SDOT (simd/neon_dotprod/dot_k_dotprod.cpp).
//
// Each super-block is summed as the reference sums it (quant/k_super_block.hpp): the codes times
// the activations per sub-block in integers, weighted by the sub-block's integer scale, summed
// over the 256 codes; the mins against the activation sums (bsums) likewise; then the same one
// float step, y.d * (d * scaled - dmin * mins). The integer sums are exact in any order, so these
// dots differ from the reference only by how the compiler contracts that last step.
//
// Everything here has internal linkage: the header is included by translation units built with
// different -march flags, and an inline function with external linkage compiled with +dotprod
// could be the copy the linker keeps for a Cortex-A53 caller.
#pragma once
#include <arm_neon.h>

#include <cstring>

#include "engine/quant/blocks.hpp"
#include "engine/quant/fp16.hpp"

namespace trilemma::engine {
namespace {
namespace k_neon {

// acc + the 16 products of a and b, summed into 4 lanes. Dot is a struct with a static `sum`.
template <class Dot>
int32x4_t dot16(int32x4_t acc, uint8x16_t codes, const std::int8_t* y) {
  return Dot::sum(acc, vreinterpretq_s8_u8(codes), vld1q_s8(y));
}
template <class Dot>
int32x4_t dot16(int32x4_t acc, int8x16_t codes, const std::int8_t* y) {
  return Dot::sum(acc, codes, vld1q_s8(y));
}

// The reference's float step for one super-block, from its integer totals. The files that
// include this header are compiled with -ffp-contract=off, so every caller (the dots of each
// column, the i8mm rows) rounds these steps alike.
inline float super_block(float yd, float d, float dmin, int scaled, int mins) {
  return yd * (d * float(scaled) - dmin * float(mins));
}
inline float super_block(float yd, float d, float dmin, int32x4_t scaled, int mins) {
  return super_block(yd, d, dmin, vaddvq_s32(scaled), mins);
}

// sum_t m[t] * bsums[t] over the 16 sub-blocks (m as 16 bytes).
inline int mins_by_bsums(uint8x16_t m, const std::int16_t* bsums) {
  const int16x8_t m_lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(m)));
  const int16x8_t m_hi = vreinterpretq_s16_u16(vmovl_high_u8(m));
  const int32x4_t s = vmlal_s16(vmull_s16(vget_low_s16(m_lo), vld1_s16(bsums)), vget_high_s16(m_lo), vld1_s16(bsums + 4));
  const int32x4_t t = vmlal_s16(vmull_s16(vget_low_s16(m_hi), vld1_s16(bsums + 8)), vget_high_s16(m_hi), vld1_s16(bsums + 12));
  return vaddvq_s32(vaddq_s32(s, t));
}

// Bits (shift, shift + 1) of each byte of v, as 0..3.
inline uint8x16_t two_bits(uint8x16_t v, int shift) {
  return vandq_u8(vshlq_u8(v, vdupq_n_s8(std::int8_t(-shift))), vdupq_n_u8(3));
}

// Q2_K / Q3_K share the layout of the low two bits: element e = 128h + 32j + 16u + l (l < 16)
// at bits 2j of qs[32h + 16u + l], sub-block t = 8h + 2j + u. `high` adds Q3_K's third bit.
template <class Dot, class Block, class Codes>
int32x4_t low2_scaled(const Block& b, const BlockQ8K& y, const int scales[16], Codes codes) {
  int32x4_t scaled = vdupq_n_s32(0);
  for (int h = 0; h < 2; ++h) {
    for (int u = 0; u < 2; ++u) {
      const uint8x16_t qs = vld1q_u8(b.qs + 32 * h + 16 * u);
      for (int j = 0; j < 4; ++j) {
        const int t = 8 * h + 2 * j + u;
        const int32x4_t s = dot16<Dot>(vdupq_n_s32(0), codes(two_bits(qs, 2 * j), h, j, u), y.qs + 16 * t);
        scaled = vmlaq_n_s32(scaled, s, scales[t]);
      }
    }
  }
  return scaled;
}

template <class Dot>
float dot_q2_k(const BlockQ2K* b, const BlockQ8K* y, std::int64_t blocks) {
  float sum = 0.0f;
  for (std::int64_t i = 0; i < blocks; ++i) {
    int scales[16];
    for (int t = 0; t < 16; ++t) scales[t] = b[i].scales[t] & 0xF;
    const int32x4_t scaled = low2_scaled<Dot>(b[i], y[i], scales, [](uint8x16_t c, int, int, int) { return c; });
    const int mins = mins_by_bsums(vshrq_n_u8(vld1q_u8(b[i].scales), 4), y[i].bsums);
    sum += super_block(y[i].d, fp16_to_fp32(b[i].d), fp16_to_fp32(b[i].dmin), scaled, mins);
  }
  return sum;
}

// Q3_K: code = low two bits - 4 where bit 4h + j of hmask[16u + l] is clear.
template <class Dot>
float dot_q3_k(const BlockQ3K* b, const BlockQ8K* y, std::int64_t blocks) {
  float sum = 0.0f;
  for (std::int64_t i = 0; i < blocks; ++i) {
    int scales[16];
    q3_k_scales(b[i].scales, scales);
    const uint8x16_t hmask[2] = {vld1q_u8(b[i].hmask), vld1q_u8(b[i].hmask + 16)};
    const int32x4_t scaled = low2_scaled<Dot>(b[i], y[i], scales, [&](uint8x16_t c, int h, int j, int u) {
      const uint8x16_t set = vtstq_u8(hmask[u], vdupq_n_u8(std::uint8_t(1u << (4 * h + j))));
      return vsubq_s8(vreinterpretq_s8_u8(c), vreinterpretq_s8_u8(vbicq_u8(vdupq_n_u8(4), set)));
    });
    sum += super_block(y[i].d, fp16_to_fp32(b[i].d), 0.0f, scaled, 0);
  }
  return sum;
}

// Q4_K / Q5_K: qs[32p + l] holds codes 64p + l (low nibble, sub-block 2p) and 64p + 32 + l
// (high nibble, sub-block 2p + 1); Q5_K's fifth bits are bits 2p and 2p + 1 of qh[l].
template <class Dot, class Block>
float dot_q45_k(const Block* b, const BlockQ8K* y, std::int64_t blocks) {
  constexpr bool five = sizeof(Block) == sizeof(BlockQ5K);
  const uint8x16_t low4 = vdupq_n_u8(0x0F), one = vdupq_n_u8(1);
  float sum = 0.0f;
  for (std::int64_t i = 0; i < blocks; ++i) {
    std::uint32_t words[4];
    k_scales_mins(b[i].scales, words);
    std::uint8_t sm[16];  // bytes 0-7 the scales, 8-15 the mins of the eight sub-blocks of 32
    std::memcpy(sm, words, sizeof sm);
    int32x4_t scaled = vdupq_n_s32(0);
    for (int p = 0; p < 4; ++p) {
      for (int u = 0; u < 2; ++u) {
        const uint8x16_t v = vld1q_u8(b[i].qs + 32 * p + 16 * u);
        uint8x16_t lo = vandq_u8(v, low4), hi = vshrq_n_u8(v, 4);
        if constexpr (five) {
          const uint8x16_t qh = vld1q_u8(b[i].qh + 16 * u);
          lo = vorrq_u8(lo, vshlq_n_u8(vandq_u8(vshlq_u8(qh, vdupq_n_s8(std::int8_t(-2 * p))), one), 4));
          hi = vorrq_u8(hi, vshlq_n_u8(vandq_u8(vshlq_u8(qh, vdupq_n_s8(std::int8_t(-2 * p - 1))), one), 4));
        }
        const std::int8_t* yq = y[i].qs + 64 * p + 16 * u;
        scaled = vmlaq_n_s32(scaled, dot16<Dot>(vdupq_n_s32(0), lo, yq), sm[2 * p]);
        scaled = vmlaq_n_s32(scaled, dot16<Dot>(vdupq_n_s32(0), hi, yq + 32), sm[2 * p + 1]);
      }
    }
    // Each min covers two of the 16 bsums: spread m[j] to sub-blocks 2j and 2j + 1.
    const uint8x8_t mins8 = vld1_u8(sm + 8);
    const int mins = mins_by_bsums(vcombine_u8(vzip1_u8(mins8, mins8), vzip2_u8(mins8, mins8)), y[i].bsums);
    sum += super_block(y[i].d, fp16_to_fp32(b[i].d), fp16_to_fp32(b[i].dmin), scaled, mins);
  }
  return sum;
}

// Q6_K: element 128h + 32k + 16u + l is (ql nibble | two bits of qh << 4) - 32, the nibble the
// low (k = 0, 1) or high (k = 2, 3) one of ql[64h + 32(k % 2) + 16u + l], the two bits at 2k of
// qh[32h + 16u + l]; sub-block t = 8h + 2k + u with a signed 8-bit scale.
template <class Dot>
float dot_q6_k(const BlockQ6K* b, const BlockQ8K* y, std::int64_t blocks) {
  const uint8x16_t low4 = vdupq_n_u8(0x0F);
  const int8x16_t bias = vdupq_n_s8(32);
  float sum = 0.0f;
  for (std::int64_t i = 0; i < blocks; ++i) {
    int32x4_t scaled = vdupq_n_s32(0);
    for (int h = 0; h < 2; ++h) {
      for (int u = 0; u < 2; ++u) {
        const uint8x16_t l0 = vld1q_u8(b[i].ql + 64 * h + 16 * u), l1 = vld1q_u8(b[i].ql + 64 * h + 32 + 16 * u);
        const uint8x16_t qh = vld1q_u8(b[i].qh + 32 * h + 16 * u);
        const uint8x16_t lows[4] = {vandq_u8(l0, low4), vandq_u8(l1, low4), vshrq_n_u8(l0, 4), vshrq_n_u8(l1, 4)};
        for (int k = 0; k < 4; ++k) {
          const int t = 8 * h + 2 * k + u;
          const uint8x16_t c = vorrq_u8(lows[k], vshlq_n_u8(two_bits(qh, 2 * k), 4));
          const int8x16_t q = vsubq_s8(vreinterpretq_s8_u8(c), bias);
          scaled = vmlaq_n_s32(scaled, dot16<Dot>(vdupq_n_s32(0), q, y[i].qs + 16 * t), b[i].scales[t]);
        }
      }
    }
    sum += super_block(y[i].d, fp16_to_fp32(b[i].d), 0.0f, scaled, 0);
  }
  return sum;
}

}  // namespace k_neon
}  // namespace
}  // namespace trilemma::engine
