// KV format f32: rows of kv_dim IEEE binary32, 4 bytes per element. The dot sums left to right
// (llama2.c run.c's attention), so the fp32 engine keeps reproducing its outputs.
#include "engine/kv/kv_format.hpp"

namespace trilemma::engine {

float kv_dot_f32_ref(const void* row, int first, int n, const float* q) {
  const float* k = static_cast<const float*>(row) + first;
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += q[i] * k[i];
  return sum;
}

void kv_axpy_f32_ref(const void* row, int first, int n, float a, float* out) {
  const float* v = static_cast<const float*>(row) + first;
  for (int i = 0; i < n; ++i) out[i] += a * v[i];
}

float kv_dot_f32_avx2(const void* row, int first, int n, const float* q) {
#if defined(__x86_64__) || defined(_M_X64)
  return dot_f32_f32_avx2(q, static_cast<const float*>(row) + first, n);
#else
  return kv_dot_f32_ref(row, first, n, q);
#endif
}

}  // namespace trilemma::engine
