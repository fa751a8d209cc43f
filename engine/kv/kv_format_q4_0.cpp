// KV format q4_0: ggml block_q4_0 along kv_dim (f16 d; u8 qs[16]: element j in the low nibble
// of qs[j], element j + 16 in the high nibble; x = d * (q - 8)), 18 bytes per 32 elements =
// 4.5 bits. Slices may cut blocks, as in kv_format_q8_0.cpp.
#include "engine/kv/kv_format.hpp"
#include "engine/quant/blocks.hpp"
#include "engine/quant/fp16.hpp"

namespace trilemma::engine {
namespace {

inline int code(const BlockQ4_0& b, int j) {
  return j < 16 ? int(b.qs[j] & 0x0f) - 8 : int(b.qs[j - 16] >> 4) - 8;
}

}  // namespace

float kv_dot_q4_0_ref(const void* row, int first, int n, const float* q) {
  const auto* blocks = static_cast<const BlockQ4_0*>(row);
  float sum = 0.0f;
  for (int i = 0; i < n;) {
    const int e = first + i, b = e / k_qk4_0, j0 = e % k_qk4_0;
    const int len = std::min(n - i, k_qk4_0 - j0);
    float part = 0.0f;
    for (int j = 0; j < len; ++j) part += q[i + j] * float(code(blocks[b], j0 + j));
    sum += part * fp16_to_fp32(blocks[b].d);
    i += len;
  }
  return sum;
}

void kv_axpy_q4_0_ref(const void* row, int first, int n, float a, float* out) {
  const auto* blocks = static_cast<const BlockQ4_0*>(row);
  for (int i = 0; i < n;) {
    const int e = first + i, b = e / k_qk4_0, j0 = e % k_qk4_0;
    const int len = std::min(n - i, k_qk4_0 - j0);
    const float ad = a * fp16_to_fp32(blocks[b].d);
    for (int j = 0; j < len; ++j) out[i + j] += ad * float(code(blocks[b], j0 + j));
    i += len;
  }
}

}  // namespace trilemma::engine
