// ARMv8.0 NEON dot products (the `_neon` column of quant/kernel_table.cpp); compiled only on
// aarch64, where NEON is always present. Baseline ARMv8.0 (vmull_s8 + pairwise adds, no
// dotprod extension) so it runs on every 64-bit Arm core. Block layouts: quant/blocks.hpp.
#include <arm_neon.h>

#include "engine/quant/blocks.hpp"
#include "engine/quant/fp16.hpp"
#include "engine/quant/kernels.hpp"
#include "engine/simd/neon/block32_neon.hpp"

namespace trilemma::engine {
namespace {

// 16 int8 x 16 int8 products summed to 4 int32 lanes; |product| <= 127 * 128 fits int16.
int32x4_t dot_i8x16(int8x16_t a, int8x16_t b) {
  const int16x8_t lo = vmull_s8(vget_low_s8(a), vget_low_s8(b));
  const int16x8_t hi = vmull_s8(vget_high_s8(a), vget_high_s8(b));
  return vaddq_s32(vpaddlq_s16(lo), vpaddlq_s16(hi));
}

struct WideningDot {
  static int32x4_t sum(int32x4_t acc, int8x16_t a, int8x16_t b) { return vaddq_s32(acc, dot_i8x16(a, b)); }
};

}  // namespace

float dot_f32_f32_neon(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const float*>(w);
  const auto* y = static_cast<const float*>(a);
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    acc0 = vfmaq_f32(acc0, vld1q_f32(x + i), vld1q_f32(y + i));
    acc1 = vfmaq_f32(acc1, vld1q_f32(x + i + 4), vld1q_f32(y + i + 4));
  }
  float sum = vaddvq_f32(vaddq_f32(acc0, acc1));
  for (; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

// Half precision widens to f32 (FCVTL is ARMv8.0; FP16 arithmetic is not needed), bf16 by a
// 16-bit left shift; then the f32 loop above.
float dot_f16_f32_neon(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const std::uint16_t*>(w);
  const auto* y = static_cast<const float*>(a);
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(x + i));
    acc0 = vfmaq_f32(acc0, vcvt_f32_f16(vget_low_f16(h)), vld1q_f32(y + i));
    acc1 = vfmaq_f32(acc1, vcvt_high_f32_f16(h), vld1q_f32(y + i + 4));
  }
  float sum = vaddvq_f32(vaddq_f32(acc0, acc1));
  for (; i < n; ++i) sum += fp16_to_fp32(x[i]) * y[i];
  return sum;
}

float dot_bf16_f32_neon(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const std::uint16_t*>(w);
  const auto* y = static_cast<const float*>(a);
  float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const uint16x8_t b = vld1q_u16(x + i);
    acc0 = vfmaq_f32(acc0, vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(b), 16)), vld1q_f32(y + i));
    acc1 = vfmaq_f32(acc1, vreinterpretq_f32_u32(vshll_high_n_u16(b, 16)), vld1q_f32(y + i + 4));
  }
  float sum = vaddvq_f32(vaddq_f32(acc0, acc1));
  for (; i < n; ++i) sum += bf16_to_fp32(x[i]) * y[i];
  return sum;
}

float dot_q8_0_q8_0_neon(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ8_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n / k_qk8_0; ++i) {
    const int32x4_t s = vaddq_s32(dot_i8x16(vld1q_s8(x[i].qs), vld1q_s8(y[i].qs)),
                                  dot_i8x16(vld1q_s8(x[i].qs + 16), vld1q_s8(y[i].qs + 16)));
    sum += float(vaddvq_s32(s)) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
  }
  return sum;
}

float dot_q4_0_q8_0_neon(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  const uint8x16_t low4 = vdupq_n_u8(0x0F);
  const int8x16_t eight = vdupq_n_s8(8);
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n / k_qk4_0; ++i) {
    const uint8x16_t v = vld1q_u8(x[i].qs);
    const int8x16_t lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(v, low4)), eight);
    const int8x16_t hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(v, 4)), eight);
    const int32x4_t s = vaddq_s32(dot_i8x16(lo, vld1q_s8(y[i].qs)), dot_i8x16(hi, vld1q_s8(y[i].qs + 16)));
    sum += float(vaddvq_s32(s)) * (fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d));
  }
  return sum;
}

float dot_q4_1_q8_0_neon(const void* w, const void* a, std::int64_t n) { return b32_neon::dot_q4_1<WideningDot>(w, a, n); }
float dot_q5_1_q8_0_neon(const void* w, const void* a, std::int64_t n) { return b32_neon::dot_q5_1<WideningDot>(w, a, n); }
float dot_q5_0_q8_0_neon(const void* w, const void* a, std::int64_t n) { return b32_neon::dot_q5_0<WideningDot>(w, a, n); }
float dot_iq4_nl_q8_0_neon(const void* w, const void* a, std::int64_t n) { return b32_neon::dot_iq4_nl<WideningDot>(w, a, n); }
float dot_tq3_t_q8_0_neon(const void* w, const void* a, std::int64_t n) { return b32_neon::dot_tq3_t<WideningDot>(w, a, n); }
float dot_tq2_t_q8_0_neon(const void* w, const void* a, std::int64_t n) { return b32_neon::dot_tq2_t<WideningDot>(w, a, n); }

}  // namespace trilemma::engine
