#include "engine/kv/softmax.hpp"

#include <algorithm>
#include <cmath>

namespace trilemma::engine {

void softmax_ref(float* scores, int n) {
  const float max = *std::max_element(scores, scores + n);
  float sum = 0.0f;
  for (int t = 0; t < n; ++t) {
    scores[t] = std::exp(scores[t] - max);
    sum += scores[t];
  }
  for (int t = 0; t < n; ++t) scores[t] /= sum;
}

SoftmaxFn select_softmax(Isa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  if (isa == Isa::avx2 || isa == Isa::avx512vnni) return softmax_avx2;
#endif
  (void)isa;
  return softmax_ref;
}

}  // namespace trilemma::engine
