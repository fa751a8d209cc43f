// One Q8_0 or Q4_0 block's 32 codes as two signed int8 registers (elements 0-15, 16-31), for the
// int8 kernels that take whole blocks (the dotprod dots and the i8mm rows). Plain NEON.
#pragma once
#include <arm_neon.h>

#include "engine/quant/blocks.hpp"

namespace trilemma::engine {

struct BlockCodes {
  int8x16_t lo, hi;
};

inline BlockCodes block_codes(const BlockQ8_0& b) { return {vld1q_s8(b.qs), vld1q_s8(b.qs + 16)}; }

// Low nibbles are elements 0-15, high nibbles 16-31 (ggml's Q4_0 layout), offset by 8.
inline BlockCodes block_codes(const BlockQ4_0& b) {
  const uint8x16_t v = vld1q_u8(b.qs);
  const int8x16_t eight = vdupq_n_s8(8);
  return {vsubq_s8(vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0x0F))), eight), vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(v, 4)), eight)};
}

}  // namespace trilemma::engine
