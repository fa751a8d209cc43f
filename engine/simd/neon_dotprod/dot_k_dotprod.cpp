// The k-quant dots with ARMv8.2 SDOT (the `dot_dotprod` column of quant/kernel_table.cpp for
// Q2_K..Q6_K): one instruction sums 16 int8 products into 4 int32 lanes. Compiled with
// -march=armv8.2-a+dotprod for this file only and called only when the CPU reports asimddp.
// The loops are simd/neon/k_quant_neon.hpp, shared with the ARMv8.0 column.
#include "engine/quant/kernels.hpp"
#include "engine/simd/neon/k_quant_neon.hpp"

namespace trilemma::engine {
namespace {

struct Sdot {
  static int32x4_t sum(int32x4_t acc, int8x16_t a, int8x16_t b) { return vdotq_s32(acc, a, b); }
};

const BlockQ8K* q8k(const void* a) { return static_cast<const BlockQ8K*>(a); }

}  // namespace

float dot_q2_k_q8_k_dotprod(const void* w, const void* a, std::int64_t n) {
  return k_neon::dot_q2_k<Sdot>(static_cast<const BlockQ2K*>(w), q8k(a), n / k_qk_k);
}
float dot_q3_k_q8_k_dotprod(const void* w, const void* a, std::int64_t n) {
  return k_neon::dot_q3_k<Sdot>(static_cast<const BlockQ3K*>(w), q8k(a), n / k_qk_k);
}
float dot_q4_k_q8_k_dotprod(const void* w, const void* a, std::int64_t n) {
  return k_neon::dot_q45_k<Sdot>(static_cast<const BlockQ4K*>(w), q8k(a), n / k_qk_k);
}
float dot_q5_k_q8_k_dotprod(const void* w, const void* a, std::int64_t n) {
  return k_neon::dot_q45_k<Sdot>(static_cast<const BlockQ5K*>(w), q8k(a), n / k_qk_k);
}
float dot_q6_k_q8_k_dotprod(const void* w, const void* a, std::int64_t n) {
  return k_neon::dot_q6_k<Sdot>(static_cast<const BlockQ6K*>(w), q8k(a), n / k_qk_k);
}

}  // namespace trilemma::engine
