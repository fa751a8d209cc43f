// KV format f16: rows of kv_dim IEEE binary16 (round to nearest even), 2 bytes per element.
#include "engine/kv/kv_format.hpp"
#include "engine/quant/fp16.hpp"

namespace trilemma::engine {

float kv_dot_f16_ref(const void* row, int first, int n, const float* q) {
  const auto* k = static_cast<const std::uint16_t*>(row) + first;
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += q[i] * fp16_to_fp32(k[i]);
  return sum;
}

void kv_axpy_f16_ref(const void* row, int first, int n, float a, float* out) {
  const auto* v = static_cast<const std::uint16_t*>(row) + first;
  for (int i = 0; i < n; ++i) out[i] += a * fp16_to_fp32(v[i]);
}

float kv_dot_f16_avx2(const void* row, int first, int n, const float* q) {
#if defined(__x86_64__) || defined(_M_X64)
  return dot_f16_f32_avx2(static_cast<const std::uint16_t*>(row) + first, q, n);
#else
  return kv_dot_f16_ref(row, first, n, q);
#endif
}

}  // namespace trilemma::engine
