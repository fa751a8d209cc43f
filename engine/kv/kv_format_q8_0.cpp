// KV format q8_0: ggml block_q8_0 along kv_dim (f16 d; int8 qs[32]; x = d * q), 34 bytes per
// 32 elements = 8.5 bits. A slice [first, first + n) may start and end inside a block: each
// element uses the scale of the block it lies in, and the products of one block are summed
// before scaling (one multiply by d per block touched).
#include "engine/kv/kv_format.hpp"
#include "engine/quant/blocks.hpp"
#include "engine/quant/fp16.hpp"

namespace trilemma::engine {

float kv_dot_q8_0_ref(const void* row, int first, int n, const float* q) {
  const auto* blocks = static_cast<const BlockQ8_0*>(row);
  float sum = 0.0f;
  for (int i = 0; i < n;) {
    const int e = first + i, b = e / k_qk8_0, j0 = e % k_qk8_0;
    const int len = std::min(n - i, k_qk8_0 - j0);
    float part = 0.0f;
    for (int j = 0; j < len; ++j) part += q[i + j] * float(blocks[b].qs[j0 + j]);
    sum += part * fp16_to_fp32(blocks[b].d);
    i += len;
  }
  return sum;
}

void kv_axpy_q8_0_ref(const void* row, int first, int n, float a, float* out) {
  const auto* blocks = static_cast<const BlockQ8_0*>(row);
  for (int i = 0; i < n;) {
    const int e = first + i, b = e / k_qk8_0, j0 = e % k_qk8_0;
    const int len = std::min(n - i, k_qk8_0 - j0);
    const float ad = a * fp16_to_fp32(blocks[b].d);
    for (int j = 0; j < len; ++j) out[i + j] += ad * float(blocks[b].qs[j0 + j]);
    i += len;
  }
}

}  // namespace trilemma::engine
