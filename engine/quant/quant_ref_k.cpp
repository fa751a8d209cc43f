// Reference kernels for ggml's k-quants Q4_K, Q5_K, Q6_K (256-weight super-blocks; layouts in
// blocks.hpp). Dequantization is ggml-exact (ggml-quants.c dequantize_row_q{4,5,6}_K), so GGUF
// files quantized by llama.cpp decode to the same floats. The quantizers here are trilemma's
// plain min/max ones (ggml searches scales and does better): good enough to exercise the
// kernels and to write valid blocks, not tuned for accuracy.
// Dequantizers and dots share the k-quants' reference form (k_super_block.hpp); dots pair with
// Q8_K activations (one scale per 256, sums per 16), as ggml's do.
#include <algorithm>
#include <cmath>

#include "engine/quant/blocks.hpp"
#include "engine/quant/fp16.hpp"
#include "engine/quant/kernels.hpp"
#include "engine/quant/k_super_block.hpp"

namespace trilemma::engine {
namespace {

// Q4_K / Q5_K: codes 0..15 or 0..31 and a 6-bit scale and min per 32 codes.
template <class Block>
void unpack_k(const Block& b, KSuperBlock& k) {
  k.d = fp16_to_fp32(b.d), k.dmin = fp16_to_fp32(b.dmin);
  for (int j = 0; j < 8; ++j) {
    std::uint8_t sc, m;
    k_scale_min(j, b.scales, sc, m);
    k.sc[2 * j] = k.sc[2 * j + 1] = sc;
    k.m[2 * j] = k.m[2 * j + 1] = m;
  }
  for (int p = 0; p < 4; ++p) {
    for (int l = 0; l < 32; ++l) {
      int lo = b.qs[32 * p + l] & 0xF, hi = b.qs[32 * p + l] >> 4;
      if constexpr (sizeof(Block) == sizeof(BlockQ5K)) {
        lo += ((b.qh[l] >> (2 * p)) & 1) << 4;
        hi += ((b.qh[l] >> (2 * p + 1)) & 1) << 4;
      }
      k.code[64 * p + l] = lo;
      k.code[64 * p + 32 + l] = hi;
    }
  }
}

// Plain min/max quantizer for Q4_K (levels 15) and Q5_K (levels 31).
template <class Block, int levels>
void quantize_k(const float* x, void* out, std::int64_t n) {
  auto* b = static_cast<Block*>(out);
  for (std::int64_t i = 0; i < n / k_qk_k; ++i, x += k_qk_k) {
    float scale[8], min[8], max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
      const auto [lo, hi] = std::minmax_element(x + 32 * j, x + 32 * j + 32);
      min[j] = -std::min(0.0f, *lo);
      scale[j] = (*hi + min[j]) / levels;
      max_scale = std::max(max_scale, scale[j]);
      max_min = std::max(max_min, min[j]);
    }
    Block& blk = b[i];
    blk = Block{};
    const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
    for (int j = 0; j < 8; ++j) {
      const auto ls = std::uint8_t(std::min(63, nearest(inv_scale * scale[j])));
      const auto lm = std::uint8_t(std::min(63, nearest(inv_min * min[j])));
      if (j < 4) {
        blk.scales[j] = ls;
        blk.scales[j + 4] = lm;
      } else {
        blk.scales[j + 4] = std::uint8_t((ls & 0xF) | ((lm & 0xF) << 4));
        blk.scales[j - 4] |= std::uint8_t((ls >> 4) << 6);
        blk.scales[j - 0] |= std::uint8_t((lm >> 4) << 6);
      }
    }
    blk.d = fp32_to_fp16(max_scale / 63.0f);
    blk.dmin = fp32_to_fp16(max_min / 63.0f);
    const float d = fp16_to_fp32(blk.d), dmin = fp16_to_fp32(blk.dmin);
    std::uint8_t q[k_qk_k];
    for (int j = 0; j < 8; ++j) {
      std::uint8_t sc, m;
      k_scale_min(j, blk.scales, sc, m);
      const float dd = d * sc, dm = dmin * m;
      for (int l = 0; l < 32; ++l)
        q[32 * j + l] = dd != 0.0f ? std::uint8_t(std::clamp(nearest((x[32 * j + l] + dm) / dd), 0, levels)) : 0;
    }
    for (int p = 0; p < 4; ++p) {
      for (int l = 0; l < 32; ++l) {
        const int lo = q[64 * p + l], hi = q[64 * p + 32 + l];
        blk.qs[32 * p + l] = std::uint8_t((lo & 0xF) | ((hi & 0xF) << 4));
        if constexpr (levels == 31)
          blk.qh[l] |= std::uint8_t(((lo >> 4) << (2 * p)) | ((hi >> 4) << (2 * p + 1)));
      }
    }
  }
}

// Q6_K: signed codes (-32..31) and an int8 scale per 16 codes, no mins.
void unpack_q6_k(const BlockQ6K& b, KSuperBlock& k) {
  k.d = fp16_to_fp32(b.d), k.dmin = 0.0f;
  for (int t = 0; t < 16; ++t) k.sc[t] = b.scales[t], k.m[t] = 0;
  int* q = k.code;
  for (int h = 0; h < 2; ++h) {
    const std::uint8_t* ql = b.ql + 64 * h;
    const std::uint8_t* qh = b.qh + 32 * h;
    for (int l = 0; l < 32; ++l) {
      q[128 * h + l + 0] = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      q[128 * h + l + 32] = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      q[128 * h + l + 64] = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      q[128 * h + l + 96] = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
    }
  }
}

}  // namespace

void quantize_row_q4_k(const float* x, void* y, std::int64_t n) { quantize_k<BlockQ4K, 15>(x, y, n); }
void quantize_row_q5_k(const float* x, void* y, std::int64_t n) { quantize_k<BlockQ5K, 31>(x, y, n); }
void dequantize_row_q4_k(const void* x, float* y, std::int64_t n) { dequantize_super_blocks<BlockQ4K, unpack_k<BlockQ4K>>(x, y, n); }
void dequantize_row_q5_k(const void* x, float* y, std::int64_t n) { dequantize_super_blocks<BlockQ5K, unpack_k<BlockQ5K>>(x, y, n); }
float dot_q4_k_q8_k_ref(const void* w, const void* a, std::int64_t n) { return dot_super_blocks_q8k<BlockQ4K, unpack_k<BlockQ4K>>(w, a, n); }
float dot_q5_k_q8_k_ref(const void* w, const void* a, std::int64_t n) { return dot_super_blocks_q8k<BlockQ5K, unpack_k<BlockQ5K>>(w, a, n); }

void quantize_row_q6_k(const float* x, void* out, std::int64_t n) {
  auto* b = static_cast<BlockQ6K*>(out);
  for (std::int64_t i = 0; i < n / k_qk_k; ++i, x += k_qk_k) {
    float scale[16], max_abs = 0, max_scale = 0;
    for (int t = 0; t < 16; ++t) {
      float amax = 0, mx = 0;
      for (int l = 0; l < 16; ++l)
        if (std::fabs(x[16 * t + l]) > amax) {
          amax = std::fabs(x[16 * t + l]);
          mx = x[16 * t + l];
        }
      scale[t] = mx / -32.0f;
      if (std::fabs(scale[t]) > max_abs) {
        max_abs = std::fabs(scale[t]);
        max_scale = scale[t];
      }
    }
    BlockQ6K& blk = b[i];
    blk = BlockQ6K{};
    const float iscale = max_scale != 0 ? -128.0f / max_scale : 0.0f;
    blk.d = fp32_to_fp16(max_scale != 0 ? 1.0f / iscale : 0.0f);
    const float d = fp16_to_fp32(blk.d);
    int q[k_qk_k];
    for (int t = 0; t < 16; ++t) {
      blk.scales[t] = std::int8_t(std::clamp(nearest(iscale * scale[t]), -128, 127));
      const float dd = d * blk.scales[t];
      for (int l = 0; l < 16; ++l)
        q[16 * t + l] = dd != 0.0f ? std::clamp(nearest(x[16 * t + l] / dd), -32, 31) + 32 : 32;
    }
    for (int h = 0; h < 2; ++h) {
      for (int l = 0; l < 32; ++l) {
        const int q1 = q[128 * h + l], q2 = q[128 * h + l + 32], q3 = q[128 * h + l + 64], q4 = q[128 * h + l + 96];
        blk.ql[64 * h + l] = std::uint8_t((q1 & 0xF) | ((q3 & 0xF) << 4));
        blk.ql[64 * h + l + 32] = std::uint8_t((q2 & 0xF) | ((q4 & 0xF) << 4));
        blk.qh[32 * h + l] = std::uint8_t((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
      }
    }
  }
}

void dequantize_row_q6_k(const void* x, float* y, std::int64_t n) { dequantize_super_blocks<BlockQ6K, unpack_q6_k>(x, y, n); }
float dot_q6_k_q8_k_ref(const void* w, const void* a, std::int64_t n) { return dot_super_blocks_q8k<BlockQ6K, unpack_q6_k>(w, a, n); }

}  // namespace trilemma::engine
