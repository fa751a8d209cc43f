// Reference kernels for ggml's two lowest k-quants, Q2_K and Q3_K (256-weight super-blocks of
// 16 sub-blocks of 16; layouts in blocks.hpp). Dequantization is ggml-exact (ggml-quants.c
// dequantize_row_q2_K / q3_K), so files quantized by llama.cpp decode to the same floats. The
// quantizers are trilemma's plain min/max ones (ggml searches scales and does far better at
// these bits): they write valid blocks to test the kernels with, not competitive files.
// Dequantizers and dots share the k-quants' reference form (k_super_block.hpp).
#include <algorithm>
#include <cmath>

#include "engine/quant/blocks.hpp"
#include "engine/quant/fp16.hpp"
#include "engine/quant/kernels.hpp"
#include "engine/quant/k_super_block.hpp"

namespace trilemma::engine {
namespace {

// Element e = 128h + 32j + l of a super-block sits at bits 2j of qs[32h + l].
int low2(const std::uint8_t* qs, int e) { return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3; }
void set_low2(std::uint8_t* qs, int e, int v) { qs[32 * (e / 128) + e % 32] |= std::uint8_t(v << (2 * ((e % 128) / 32))); }

// q2_k: codes 0..3, 4-bit scale and min per 16 codes.
void unpack_q2_k(const BlockQ2K& b, KSuperBlock& k) {
  k.d = fp16_to_fp32(b.d), k.dmin = fp16_to_fp32(b.dmin);
  for (int t = 0; t < 16; ++t) k.sc[t] = b.scales[t] & 0xF, k.m[t] = b.scales[t] >> 4;
  for (int e = 0; e < k_qk_k; ++e) k.code[e] = low2(b.qs, e);
}

// q3_k: codes -4..3 (4 subtracted where the hmask bit is clear), signed 6-bit scales, no mins.
void unpack_q3_k(const BlockQ3K& b, KSuperBlock& k) {
  k.d = fp16_to_fp32(b.d), k.dmin = 0.0f;
  q3_k_scales(b.scales, k.sc);
  for (int t = 0; t < 16; ++t) k.m[t] = 0;
  for (int e = 0; e < k_qk_k; ++e) {
    const int bit = (e / 128) * 4 + (e % 128) / 32;
    k.code[e] = low2(b.qs, e) - ((b.hmask[e % 32] >> bit) & 1 ? 0 : 4);
  }
}

}  // namespace

// Per sub-block: x ~ d * sc * q - dmin * m with the block's range [-dmin * m, -dmin * m + 3 * d * sc].
void quantize_row_q2_k(const float* x, void* out, std::int64_t n) {
  auto* b = static_cast<BlockQ2K*>(out);
  for (std::int64_t i = 0; i < n / k_qk_k; ++i, x += k_qk_k) {
    float scale[16], min[16], max_scale = 0, max_min = 0;
    for (int t = 0; t < 16; ++t) {
      const auto [lo, hi] = std::minmax_element(x + 16 * t, x + 16 * t + 16);
      min[t] = -std::min(0.0f, *lo);
      scale[t] = (*hi + min[t]) / 3.0f;
      max_scale = std::max(max_scale, scale[t]);
      max_min = std::max(max_min, min[t]);
    }
    BlockQ2K& blk = b[i];
    blk = BlockQ2K{};
    blk.d = fp32_to_fp16(max_scale / 15.0f);
    blk.dmin = fp32_to_fp16(max_min / 15.0f);
    const float d = fp16_to_fp32(blk.d), dmin = fp16_to_fp32(blk.dmin);
    for (int t = 0; t < 16; ++t) {
      const int sc = d > 0 ? std::clamp(nearest(scale[t] / d), 0, 15) : 0;
      const int m = dmin > 0 ? std::clamp(nearest(min[t] / dmin), 0, 15) : 0;
      blk.scales[t] = std::uint8_t(sc | (m << 4));
      const float dd = d * float(sc), dm = dmin * float(m);
      for (int l = 0; l < 16; ++l)
        set_low2(blk.qs, 16 * t + l, dd > 0 ? std::clamp(nearest((x[16 * t + l] + dm) / dd), 0, 3) : 0);
    }
  }
}

// Per sub-block: the value of largest magnitude maps to code -4 (as q4_0 does with -8).
void quantize_row_q3_k(const float* x, void* out, std::int64_t n) {
  auto* b = static_cast<BlockQ3K*>(out);
  for (std::int64_t i = 0; i < n / k_qk_k; ++i, x += k_qk_k) {
    float scale[16], max_scale = 0;
    for (int t = 0; t < 16; ++t) {
      float mx = 0;
      for (int l = 0; l < 16; ++l)
        if (std::fabs(x[16 * t + l]) > std::fabs(mx)) mx = x[16 * t + l];
      scale[t] = mx / -4.0f;
      if (std::fabs(scale[t]) > std::fabs(max_scale)) max_scale = scale[t];
    }
    BlockQ3K& blk = b[i];
    blk = BlockQ3K{};
    const float iscale = max_scale != 0 ? -32.0f / max_scale : 0.0f;
    blk.d = fp32_to_fp16(max_scale != 0 ? 1.0f / iscale : 0.0f);
    const float d = fp16_to_fp32(blk.d);
    for (int t = 0; t < 16; ++t) {
      const int s = std::clamp(nearest(iscale * scale[t]), -32, 31);
      const int packed = s + 32;
      if (t < 8) blk.scales[t] |= std::uint8_t(packed & 0xF);
      else blk.scales[t - 8] |= std::uint8_t((packed & 0xF) << 4);
      blk.scales[8 + t % 4] |= std::uint8_t((packed >> 4) << (2 * (t / 4)));
      const float dd = d * float(s);
      for (int l = 0; l < 16; ++l) {
        const int e = 16 * t + l;
        const int code = (dd != 0.0f ? std::clamp(nearest(x[e] / dd), -4, 3) : 0) + 4;
        set_low2(blk.qs, e, code & 3);
        blk.hmask[e % 32] |= std::uint8_t((code >> 2) << ((e / 128) * 4 + (e % 128) / 32));
      }
    }
  }
}

void dequantize_row_q2_k(const void* x, float* y, std::int64_t n) { dequantize_super_blocks<BlockQ2K, unpack_q2_k>(x, y, n); }
void dequantize_row_q3_k(const void* x, float* y, std::int64_t n) { dequantize_super_blocks<BlockQ3K, unpack_q3_k>(x, y, n); }
float dot_q2_k_q8_k_ref(const void* w, const void* a, std::int64_t n) { return dot_super_blocks_q8k<BlockQ2K, unpack_q2_k>(w, a, n); }
float dot_q3_k_q8_k_ref(const void* w, const void* a, std::int64_t n) { return dot_super_blocks_q8k<BlockQ3K, unpack_q3_k>(w, a, n); }

}  // namespace trilemma::engine
