// The k-quant dots on ARMv8.0 NEON (the `_neon` column of quant/kernel_table.cpp for Q2_K..Q6_K):
// 16 int8 products summed into 4 int32 lanes by two widening multiplies and two pairwise
// accumulates, as simd/neon/dot_neon.cpp does for the 32-weight formats. The loops are
// simd/neon/k_quant_neon.hpp, shared with the dotprod column.
#include "engine/quant/kernels.hpp"
#include "engine/simd/neon/k_quant_neon.hpp"

namespace trilemma::engine {
namespace {

struct WideningDot {
  // |a * b| <= 128 * 128 fits int16 before the pairwise add to int32.
  static int32x4_t sum(int32x4_t acc, int8x16_t a, int8x16_t b) {
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
    return vpadalq_s16(acc, vmull_high_s8(a, b));
  }
};

const BlockQ8K* q8k(const void* a) { return static_cast<const BlockQ8K*>(a); }

}  // namespace

float dot_q2_k_q8_k_neon(const void* w, const void* a, std::int64_t n) {
  return k_neon::dot_q2_k<WideningDot>(static_cast<const BlockQ2K*>(w), q8k(a), n / k_qk_k);
}
float dot_q3_k_q8_k_neon(const void* w, const void* a, std::int64_t n) {
  return k_neon::dot_q3_k<WideningDot>(static_cast<const BlockQ3K*>(w), q8k(a), n / k_qk_k);
}
float dot_q4_k_q8_k_neon(const void* w, const void* a, std::int64_t n) {
  return k_neon::dot_q45_k<WideningDot>(static_cast<const BlockQ4K*>(w), q8k(a), n / k_qk_k);
}
float dot_q5_k_q8_k_neon(const void* w, const void* a, std::int64_t n) {
  return k_neon::dot_q45_k<WideningDot>(static_cast<const BlockQ5K*>(w), q8k(a), n / k_qk_k);
}
float dot_q6_k_q8_k_neon(const void* w, const void* a, std::int64_t n) {
  return k_neon::dot_q6_k<WideningDot>(static_cast<const BlockQ6K*>(w), q8k(a), n / k_qk_k);
}

}  // namespace trilemma::engine
