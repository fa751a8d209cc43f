// The k-quants' common reference form: a super-block unpacked to integer codes with an
// integer scale and min per 16 codes (formats with one per 32 repeat it for both halves;
// signed formats have m = 0 and dmin = 0), and the dequantizer and Q8_K dot every k-quant
// reference shares over it. Element e = d * sc[t] * code[e] - dmin * m[t], t = e / 16, in
// ggml's order of operations (dequantize_row_q*_K), so the floats are ggml's. The dot sums
// integers per 16 codes, weights them by sc[t] and sums over the super-block, then one
// float step: y.d * (d * sum_t sc[t] * sum_16(code * y.qs) - dmin * sum_t m[t] * y.bsums[t]).
#pragma once
#include <cmath>

#include "engine/quant/blocks.hpp"

namespace trilemma::engine {

// The k-quants' rounding of a scale or a code: to nearest, halves away from zero (ggml's
// nearest_int for the values these quantizers see).
inline int nearest(float v) { return int(std::lround(v)); }

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

// Unpack: one block of the format into the common form.
template <class Block, void (*Unpack)(const Block&, KSuperBlock&)>
void dequantize_super_blocks(const void* x, float* y, std::int64_t n) {
  const auto* b = static_cast<const Block*>(x);
  KSuperBlock k;
  for (std::int64_t i = 0; i < n / k_qk_k; ++i) {
    Unpack(b[i], k);
    for (int e = 0; e < k_qk_k; ++e) *y++ = k.d * float(k.sc[e / 16]) * float(k.code[e]) - k.dmin * float(k.m[e / 16]);
  }
}

template <class Block, void (*Unpack)(const Block&, KSuperBlock&)>
float dot_super_blocks_q8k(const void* w, const void* a, std::int64_t n) {
  const auto* b = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8K*>(a);
  KSuperBlock k;
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n / k_qk_k; ++i) {
    Unpack(b[i], k);
    sum += dot_super_block_q8k(k, y[i]);
  }
  return sum;
}

}  // namespace trilemma::engine
