// One k-quant super-block against one Q8_K activation block, the way every k-quant reference
// dot sums it: integer sums per 16 codes, weighted by the sub-block's integer scale and
// summed over the super-block, then one float step,
//   y.d * (d * sum_t sc[t] * sum_16(code * y.qs) - dmin * sum_t m[t] * y.bsums[t]).
// Formats with one scale per 32 repeat it for both halves; signed formats have m = 0.
#pragma once
#include "engine/quant/blocks.hpp"

namespace trilemma::engine {

struct KSuperBlock {
  int code[k_qk_k];
  int sc[16], m[16];
  float d, dmin;
};

inline float dot_super_block_q8k(const KSuperBlock& w, const BlockQ8K& y) {
  int scaled = 0, mins = 0;
  for (int t = 0; t < 16; ++t) {
    int sum = 0;
    for (int l = 0; l < 16; ++l) sum += w.code[16 * t + l] * y.qs[16 * t + l];
    scaled += w.sc[t] * sum;
    mins += w.m[t] * y.bsums[t];
  }
  return y.d * (w.d * float(scaled) - w.dmin * float(mins));
}

}  // namespace trilemma::engine
