#include "engine/quant/activation.hpp"

#include <cmath>

namespace trilemma::engine {

void swiglu_ref(float* h, const float* up, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    float val = h[i];
    val *= 1.0f / (1.0f + std::exp(-val));  // run.c's SiLU
    h[i] = val * up[i];
  }
}

SwigluFn select_swiglu(Isa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  if (isa == Isa::avx2 || isa == Isa::avx512vnni) return swiglu_avx2;
#endif
  (void)isa;
  return swiglu_ref;
}

}  // namespace trilemma::engine
