// ARMv8.2 dot-product kernels (the `dot_dotprod` column of quant/kernel_table.cpp): SDOT sums
// four int8 products into each int32 lane in one instruction, where baseline NEON needs two
// widening multiplies and two pairwise adds (simd/neon/dot_neon.cpp). Compiled with
// -march=armv8.2-a+dotprod for this file only and called only when the kernel reports asimddp
// (quant/cpu_features.cpp), so the binary still runs on a Cortex-A53. Block layouts: quant/blocks.hpp.
#include <arm_neon.h>

#include "engine/quant/blocks.hpp"
#include "engine/quant/fp16.hpp"
#include "engine/quant/kernels.hpp"

namespace trilemma::engine {

// Two independent accumulators (even and odd blocks) so consecutive blocks' SDOT chains overlap;
// each block's integer sum is scaled by its own two scales, as in the scalar reference.
float dot_q8_0_q8_0_dotprod(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ8_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  const std::int64_t blocks = n / k_qk8_0;
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
  std::int64_t i = 0;
  for (; i + 2 <= blocks; i += 2) {
    int32x4_t s0 = vdotq_s32(vdupq_n_s32(0), vld1q_s8(x[i].qs), vld1q_s8(y[i].qs));
    s0 = vdotq_s32(s0, vld1q_s8(x[i].qs + 16), vld1q_s8(y[i].qs + 16));
    int32x4_t s1 = vdotq_s32(vdupq_n_s32(0), vld1q_s8(x[i + 1].qs), vld1q_s8(y[i + 1].qs));
    s1 = vdotq_s32(s1, vld1q_s8(x[i + 1].qs + 16), vld1q_s8(y[i + 1].qs + 16));
    acc0 = vmlaq_n_f32(acc0, vcvtq_f32_s32(s0), fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
    acc1 = vmlaq_n_f32(acc1, vcvtq_f32_s32(s1), fp16_to_fp32(x[i + 1].d) * fp16_to_fp32(y[i + 1].d));
  }
  float sum = vaddvq_f32(vaddq_f32(acc0, acc1));
  for (; i < blocks; ++i) {
    int32x4_t s = vdotq_s32(vdupq_n_s32(0), vld1q_s8(x[i].qs), vld1q_s8(y[i].qs));
    s = vdotq_s32(s, vld1q_s8(x[i].qs + 16), vld1q_s8(y[i].qs + 16));
    sum += float(vaddvq_s32(s)) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
  }
  return sum;
}

float dot_q4_0_q8_0_dotprod(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  const std::int64_t blocks = n / k_qk4_0;
  const uint8x16_t low4 = vdupq_n_u8(0x0F);
  const int8x16_t eight = vdupq_n_s8(8);
  float32x4_t acc = vdupq_n_f32(0.0f);
  for (std::int64_t i = 0; i < blocks; ++i) {
    // Low nibbles are elements 0-15, high nibbles 16-31 (ggml's Q4_0 layout), offset by 8.
    const uint8x16_t v = vld1q_u8(x[i].qs);
    const int8x16_t lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(v, low4)), eight);
    const int8x16_t hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(v, 4)), eight);
    int32x4_t s = vdotq_s32(vdupq_n_s32(0), lo, vld1q_s8(y[i].qs));
    s = vdotq_s32(s, hi, vld1q_s8(y[i].qs + 16));
    acc = vmlaq_n_f32(acc, vcvtq_f32_s32(s), fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
  }
  return vaddvq_f32(acc);
}

}  // namespace trilemma::engine
