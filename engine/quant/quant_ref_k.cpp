// Reference kernels for ggml's k-quants Q4_K, Q5_K, Q6_K (256-weight super-blocks; layouts in
// blocks.hpp). Dequantization is ggml-exact (ggml-quants.c dequantize_row_q{4,5,6}_K), so GGUF
// files quantized by llama.cpp decode to the same floats. The quantizers here are trilemma's
// plain min/max ones (ggml searches scales and does better): good enough to exercise the
// kernels and to write valid blocks, not tuned for accuracy.
// Dots pair with Q8_K activations (one scale per 256, sums per 16), as ggml's do: each super-block
// is summed in integers (q8k_dot.hpp).
#include <algorithm>
#include <cmath>

#include "engine/quant/blocks.hpp"
#include "engine/quant/fp16.hpp"
#include "engine/quant/kernels.hpp"
#include "engine/quant/q8k_dot.hpp"

namespace trilemma::engine {
namespace {

int nearest(float v) { return int(std::lround(v)); }

// Q4_K / Q5_K: unpacked codes (0..15 or 0..31) and the 8 sub-block scales and mins.
struct UnpackedK {
  std::uint8_t q[k_qk_k];
  float d[8], m[8];  // d * sc[j], dmin * m[j]
};

template <class Block>
void unpack_k(const Block& b, UnpackedK& u) {
  const float d = fp16_to_fp32(b.d), dmin = fp16_to_fp32(b.dmin);
  for (int j = 0; j < 8; ++j) {
    std::uint8_t sc, m;
    k_scale_min(j, b.scales, sc, m);
    u.d[j] = d * sc;
    u.m[j] = dmin * m;
  }
  for (int p = 0; p < 4; ++p) {
    for (int l = 0; l < 32; ++l) {
      int lo = b.qs[32 * p + l] & 0xF, hi = b.qs[32 * p + l] >> 4;
      if constexpr (sizeof(Block) == sizeof(BlockQ5K)) {
        lo += ((b.qh[l] >> (2 * p)) & 1) << 4;
        hi += ((b.qh[l] >> (2 * p + 1)) & 1) << 4;
      }
      u.q[64 * p + l] = std::uint8_t(lo);
      u.q[64 * p + 32 + l] = std::uint8_t(hi);
    }
  }
}

template <class Block>
void dequantize_k(const void* x, float* y, std::int64_t n) {
  const auto* b = static_cast<const Block*>(x);
  UnpackedK u;
  for (std::int64_t i = 0; i < n / k_qk_k; ++i) {
    unpack_k(b[i], u);
    for (int e = 0; e < k_qk_k; ++e) *y++ = u.d[e / 32] * u.q[e] - u.m[e / 32];
  }
}

template <class Block>
float dot_k(const void* w, const void* a, std::int64_t n) {
  const auto* b = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8K*>(a);
  UnpackedK u;
  KSuperBlock k;
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n / k_qk_k; ++i) {
    unpack_k(b[i], u);
    k.d = fp16_to_fp32(b[i].d), k.dmin = fp16_to_fp32(b[i].dmin);
    for (int j = 0; j < 8; ++j) {
      std::uint8_t sc, m;
      k_scale_min(j, b[i].scales, sc, m);
      k.sc[2 * j] = k.sc[2 * j + 1] = sc;
      k.m[2 * j] = k.m[2 * j + 1] = m;
    }
    for (int e = 0; e < k_qk_k; ++e) k.code[e] = u.q[e];
    sum += dot_super_block_q8k(k, y[i]);
  }
  return sum;
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

// Q6_K: signed codes (-32..31) and the 16 sub-block scales d * scales[t].
void unpack_q6_k(const BlockQ6K& b, int* q, float* s) {
  const float d = fp16_to_fp32(b.d);
  for (int t = 0; t < 16; ++t) s[t] = d * b.scales[t];
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
void dequantize_row_q4_k(const void* x, float* y, std::int64_t n) { dequantize_k<BlockQ4K>(x, y, n); }
void dequantize_row_q5_k(const void* x, float* y, std::int64_t n) { dequantize_k<BlockQ5K>(x, y, n); }
float dot_q4_k_q8_k_ref(const void* w, const void* a, std::int64_t n) { return dot_k<BlockQ4K>(w, a, n); }
float dot_q5_k_q8_k_ref(const void* w, const void* a, std::int64_t n) { return dot_k<BlockQ5K>(w, a, n); }

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

void dequantize_row_q6_k(const void* x, float* y, std::int64_t n) {
  const auto* b = static_cast<const BlockQ6K*>(x);
  int q[k_qk_k];
  float s[16];
  for (std::int64_t i = 0; i < n / k_qk_k; ++i) {
    unpack_q6_k(b[i], q, s);
    for (int e = 0; e < k_qk_k; ++e) *y++ = s[e / 16] * float(q[e]);
  }
}

float dot_q6_k_q8_k_ref(const void* w, const void* a, std::int64_t n) {
  const auto* b = static_cast<const BlockQ6K*>(w);
  const auto* y = static_cast<const BlockQ8K*>(a);
  KSuperBlock k;
  float s[16];
  float sum = 0.0f;
  for (std::int64_t i = 0; i < n / k_qk_k; ++i) {
    unpack_q6_k(b[i], k.code, s);
    k.d = fp16_to_fp32(b[i].d), k.dmin = 0.0f;
    for (int t = 0; t < 16; ++t) k.sc[t] = b[i].scales[t], k.m[t] = 0;
    sum += dot_super_block_q8k(k, y[i]);
  }
  return sum;
}

}  // namespace trilemma::engine
