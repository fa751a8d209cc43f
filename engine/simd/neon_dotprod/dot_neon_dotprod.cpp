// ARMv8.2 dot-product kernels (the `dot_dotprod` column of quant/kernel_table.cpp): SDOT sums
// four int8 products into each int32 lane in one instruction, where baseline NEON needs two
// widening multiplies and two pairwise adds (simd/neon/dot_neon.cpp). Compiled with
// -march=armv8.2-a+dotprod for this file only and called only when the kernel reports asimddp
// (quant/cpu_features.cpp), so the binary still runs on a Cortex-A53. Block layouts: quant/blocks.hpp.
#include <arm_neon.h>

#include <cmath>

#include "engine/quant/blocks.hpp"
#include "engine/simd/neon/block32_neon.hpp"
#include "engine/simd/neon/block_codes_neon.hpp"
#include "engine/quant/fp16.hpp"
#include "engine/quant/kernels.hpp"

namespace trilemma::engine {

namespace {

struct Sdot {
  static int32x4_t sum(int32x4_t acc, int8x16_t a, int8x16_t b) { return vdotq_s32(acc, a, b); }
};

// Each block's exact integer sum, converted to float and fused-multiply-added with the product
// of its two scales into the even or the odd blocks' chain (so consecutive blocks overlap), the
// chains added at the end. The i8mm rows kernel (simd/neon_i8mm/rows_i8mm.cpp) runs this same
// sequence in each (row, token) lane, so a prompt's batched rows give decode's bits; this file is
// compiled with -ffp-contract=off so the compiler fuses nothing else.
template <class Block>
float dot_q8_chains(const Block* x, const BlockQ8_0* y, std::int64_t blocks) {
  float even = 0.0f, odd = 0.0f;
  for (std::int64_t i = 0; i < blocks; ++i) {
    const BlockCodes w = block_codes(x[i]);
    int32x4_t s = vdotq_s32(vdupq_n_s32(0), w.lo, vld1q_s8(y[i].qs));
    s = vdotq_s32(s, w.hi, vld1q_s8(y[i].qs + 16));
    float& chain = (i & 1) ? odd : even;
    chain = std::fma(float(vaddvq_s32(s)), fp16_to_fp32(x[i].d) * fp16_to_fp32(y[i].d), chain);
  }
  return even + odd;
}

}  // namespace

float dot_q8_0_q8_0_dotprod(const void* w, const void* a, std::int64_t n) {
  return dot_q8_chains(static_cast<const BlockQ8_0*>(w), static_cast<const BlockQ8_0*>(a), n / k_qk8_0);
}

float dot_q4_0_q8_0_dotprod(const void* w, const void* a, std::int64_t n) {
  return dot_q8_chains(static_cast<const BlockQ4_0*>(w), static_cast<const BlockQ8_0*>(a), n / k_qk4_0);
}

// The other 32-weight formats: simd/neon/block32_neon.hpp's loops with SDOT, the NEON column's bits.
float dot_q4_1_q8_0_dotprod(const void* w, const void* a, std::int64_t n) { return b32_neon::dot_q4_1<Sdot>(w, a, n); }
float dot_q5_1_q8_0_dotprod(const void* w, const void* a, std::int64_t n) { return b32_neon::dot_q5_1<Sdot>(w, a, n); }
float dot_q5_0_q8_0_dotprod(const void* w, const void* a, std::int64_t n) { return b32_neon::dot_q5_0<Sdot>(w, a, n); }
float dot_iq4_nl_q8_0_dotprod(const void* w, const void* a, std::int64_t n) { return b32_neon::dot_iq4_nl<Sdot>(w, a, n); }
float dot_tq3_t_q8_0_dotprod(const void* w, const void* a, std::int64_t n) { return b32_neon::dot_tq3_t<Sdot>(w, a, n); }
float dot_tq2_t_q8_0_dotprod(const void* w, const void* a, std::int64_t n) { return b32_neon::dot_tq2_t<Sdot>(w, a, n); }

}  // namespace trilemma::engine
