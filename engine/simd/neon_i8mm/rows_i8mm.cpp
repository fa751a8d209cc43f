// Int8 matrix-multiply rows x tokens kernels (the `rows_i8mm` column of quant/kernel_table.cpp):
// Q8_0 and Q4_0 weights against Q8_0 activations, Q4_K and Q6_K against Q8_K. SMMLA multiplies a 2 x 8
// int8 block by an 8 x 2 one into four int32 sums: two rows x two tokens per instruction, 32
// products where SDOT does 16, so a prompt's tokens share each weight load and unpack. Compiled
// with +i8mm for this file only and picked only where the kernel reports i8mm
// (quant/cpu_features.cpp): Cortex-A510/A710/X2 and later, Apple M2, Graviton 3.
//
// Bits: every (row, token) lane computes the same integers as the format's dotprod dot and then
// that dot's float steps in the same order (Q8_0/Q4_0: simd/neon_dotprod/dot_neon_dotprod.cpp,
// each block's sum fused-multiply-added into an even or odd chain; Q4_K: k_quant_neon.hpp's
// super_block step per super-block), all compiled with -ffp-contract=off. So a prompt's logits
// equal token-by-token decoding's, as on x86 (tested). A last odd row or token goes through the
// dot itself.
#include <arm_neon.h>

#include "engine/quant/blocks.hpp"
#include "engine/quant/fp16.hpp"
#include "engine/quant/kernels.hpp"
#include "engine/simd/neon/block_codes_neon.hpp"
#include "engine/simd/neon/k_quant_neon.hpp"

namespace trilemma::engine {
namespace {

// 8-byte halves of two registers side by side: SMMLA's 2 x 8 operand (two rows, or two tokens).
inline int8x16_t first_halves(int8x16_t a, int8x16_t b) {
  return vreinterpretq_s8_s64(vzip1q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}
inline int8x16_t second_halves(int8x16_t a, int8x16_t b) {
  return vreinterpretq_s8_s64(vzip2q_s64(vreinterpretq_s64_s8(a), vreinterpretq_s64_s8(b)));
}

// acc + [r0 t0, r0 t1, r1 t0, r1 t1] over 16 codes: rows' codes r0, r1 against tokens' y0, y1.
inline int32x4_t mmla16(int32x4_t acc, int8x16_t r0, int8x16_t r1, const std::int8_t* y0, const std::int8_t* y1) {
  const int8x16_t a = vld1q_s8(y0), b = vld1q_s8(y1);
  return vmmlaq_s32(vmmlaq_s32(acc, first_halves(r0, r1), first_halves(a, b)), second_halves(r0, r1), second_halves(a, b));
}

// Q8_0 / Q4_0 weights, Q8_0 activations: the dotprod dot's even and odd block chains per lane.
template <class WeightBlock>
struct Q8Blocks {
  using Block = WeightBlock;
  using Act = BlockQ8_0;
  static constexpr std::int64_t block_elems = k_qk8_0;

  // Two rows against `pairs` pairs of tokens; res[q] = [r0 t, r0 t+1, r1 t, r1 t+1] of pair q.
  template <int pairs>
  static void run(const Block* r0, const Block* r1, const Act* const* tokens, std::int64_t blocks, float (*res)[4]) {
    float32x4_t even[pairs], odd[pairs];
    for (int q = 0; q < pairs; ++q) even[q] = odd[q] = vdupq_n_f32(0.0f);
    for (std::int64_t b = 0; b < blocks; ++b) {
      const BlockCodes w0 = block_codes(r0[b]), w1 = block_codes(r1[b]);
      const float d0 = fp16_to_fp32(r0[b].d), d1 = fp16_to_fp32(r1[b].d);
      const float32x4_t dw = {d0, d0, d1, d1};
      for (int q = 0; q < pairs; ++q) {
        const Act& t0 = tokens[2 * q][b];
        const Act& t1 = tokens[2 * q + 1][b];
        const int32x4_t s = mmla16(mmla16(vdupq_n_s32(0), w0.lo, w1.lo, t0.qs, t1.qs), w0.hi, w1.hi, t0.qs + 16, t1.qs + 16);
        const float32x4_t dx = {fp16_to_fp32(t0.d), fp16_to_fp32(t1.d), fp16_to_fp32(t0.d), fp16_to_fp32(t1.d)};
        float32x4_t& chain = (b & 1) ? odd[q] : even[q];
        chain = vfmaq_f32(chain, vcvtq_f32_s32(s), vmulq_f32(dw, dx));
      }
    }
    for (int q = 0; q < pairs; ++q) vst1q_f32(res[q], vaddq_f32(even[q], odd[q]));
  }
};

// Q4_K weights, Q8_K activations: per super-block the dot's integer totals (codes x activations
// weighted by each sub-block's scale; mins x bsums), then its one float step, per lane.
struct Q4KBlocks {
  using Block = BlockQ4K;
  using Act = BlockQ8K;
  static constexpr std::int64_t block_elems = k_qk_k;

  template <int pairs>
  static void run(const Block* r0, const Block* r1, const Act* const* tokens, std::int64_t blocks, float (*res)[4]) {
    float sum[pairs][4] = {};
    const uint8x16_t low4 = vdupq_n_u8(0x0F);
    for (std::int64_t b = 0; b < blocks; ++b) {
      std::uint8_t sm[2][16];  // per row: bytes 0-7 the sub-blocks' scales, 8-15 their mins
      for (int r = 0; r < 2; ++r) {
        std::uint32_t words[4];
        k_scales_mins((r == 0 ? r0 : r1)[b].scales, words);
        std::memcpy(sm[r], words, sizeof sm[r]);
      }
      int32x4_t scaled[pairs];
      for (int q = 0; q < pairs; ++q) scaled[q] = vdupq_n_s32(0);
      for (int p = 0; p < 4; ++p) {
        const int32x4_t s_lo = {sm[0][2 * p], sm[0][2 * p], sm[1][2 * p], sm[1][2 * p]};
        const int32x4_t s_hi = {sm[0][2 * p + 1], sm[0][2 * p + 1], sm[1][2 * p + 1], sm[1][2 * p + 1]};
        for (int u = 0; u < 2; ++u) {
          // qs[32p + l]: code 64p + l (low nibble, sub-block 2p) and 64p + 32 + l (high, 2p + 1).
          const uint8x16_t v0 = vld1q_u8(r0[b].qs + 32 * p + 16 * u), v1 = vld1q_u8(r1[b].qs + 32 * p + 16 * u);
          const int8x16_t lo0 = vreinterpretq_s8_u8(vandq_u8(v0, low4)), lo1 = vreinterpretq_s8_u8(vandq_u8(v1, low4));
          const int8x16_t hi0 = vreinterpretq_s8_u8(vshrq_n_u8(v0, 4)), hi1 = vreinterpretq_s8_u8(vshrq_n_u8(v1, 4));
          for (int q = 0; q < pairs; ++q) {
            const std::int8_t* y0 = tokens[2 * q][b].qs + 64 * p + 16 * u;
            const std::int8_t* y1 = tokens[2 * q + 1][b].qs + 64 * p + 16 * u;
            scaled[q] = vmlaq_s32(scaled[q], mmla16(vdupq_n_s32(0), lo0, lo1, y0, y1), s_lo);
            scaled[q] = vmlaq_s32(scaled[q], mmla16(vdupq_n_s32(0), hi0, hi1, y0 + 32, y1 + 32), s_hi);
          }
        }
      }
      // Each min covers two of the 16 bsums: spread m[j] to sub-blocks 2j and 2j + 1.
      uint8x16_t mins[2];
      for (int r = 0; r < 2; ++r) {
        const uint8x8_t m8 = vld1_u8(sm[r] + 8);
        mins[r] = vcombine_u8(vzip1_u8(m8, m8), vzip2_u8(m8, m8));
      }
      const float d[2] = {fp16_to_fp32(r0[b].d), fp16_to_fp32(r1[b].d)};
      const float dmin[2] = {fp16_to_fp32(r0[b].dmin), fp16_to_fp32(r1[b].dmin)};
      for (int q = 0; q < pairs; ++q) {
        std::int32_t totals[4];
        vst1q_s32(totals, scaled[q]);
        for (int lane = 0; lane < 4; ++lane) {
          const int r = lane / 2;
          const Act& t = tokens[2 * q + lane % 2][b];
          sum[q][lane] += k_neon::super_block(t.d, d[r], dmin[r], totals[lane], k_neon::mins_by_bsums(mins[r], t.bsums));
        }
      }
    }
    for (int q = 0; q < pairs; ++q)
      for (int lane = 0; lane < 4; ++lane) res[q][lane] = sum[q][lane];
  }
};

// Q6_K weights, Q8_K activations: element 128h + 32k + 16u + l is (ql nibble | two bits of qh
// << 4) - 32 (k_quant_neon.hpp's dot_q6_k), sub-block t = 8h + 2k + u of 16 codes with a signed
// scale; per super-block the weighted integer total, then the dot's float step, per lane.
struct Q6KBlocks {
  using Block = BlockQ6K;
  using Act = BlockQ8K;
  static constexpr std::int64_t block_elems = k_qk_k;

  // The four 16-code groups k = 0..3 of (h, u) for one row, as signed codes.
  static void codes(const Block& b, int h, int u, int8x16_t out[4]) {
    const uint8x16_t low4 = vdupq_n_u8(0x0F);
    const uint8x16_t l0 = vld1q_u8(b.ql + 64 * h + 16 * u), l1 = vld1q_u8(b.ql + 64 * h + 32 + 16 * u);
    const uint8x16_t qh = vld1q_u8(b.qh + 32 * h + 16 * u);
    const uint8x16_t lows[4] = {vandq_u8(l0, low4), vandq_u8(l1, low4), vshrq_n_u8(l0, 4), vshrq_n_u8(l1, 4)};
    for (int k = 0; k < 4; ++k) {
      const uint8x16_t c = vorrq_u8(lows[k], vshlq_n_u8(k_neon::two_bits(qh, 2 * k), 4));
      out[k] = vsubq_s8(vreinterpretq_s8_u8(c), vdupq_n_s8(32));
    }
  }

  template <int pairs>
  static void run(const Block* r0, const Block* r1, const Act* const* tokens, std::int64_t blocks, float (*res)[4]) {
    float sum[pairs][4] = {};
    for (std::int64_t b = 0; b < blocks; ++b) {
      int32x4_t scaled[pairs];
      for (int q = 0; q < pairs; ++q) scaled[q] = vdupq_n_s32(0);
      for (int h = 0; h < 2; ++h)
        for (int u = 0; u < 2; ++u) {
          int8x16_t c0[4], c1[4];
          codes(r0[b], h, u, c0), codes(r1[b], h, u, c1);
          for (int k = 0; k < 4; ++k) {
            const int t = 8 * h + 2 * k + u;
            const int32x4_t scale = {r0[b].scales[t], r0[b].scales[t], r1[b].scales[t], r1[b].scales[t]};
            for (int q = 0; q < pairs; ++q)
              scaled[q] = vmlaq_s32(scaled[q], mmla16(vdupq_n_s32(0), c0[k], c1[k], tokens[2 * q][b].qs + 16 * t, tokens[2 * q + 1][b].qs + 16 * t),
                                    scale);
          }
        }
      const float d[2] = {fp16_to_fp32(r0[b].d), fp16_to_fp32(r1[b].d)};
      for (int q = 0; q < pairs; ++q) {
        std::int32_t totals[4];
        vst1q_s32(totals, scaled[q]);
        for (int lane = 0; lane < 4; ++lane)
          sum[q][lane] += k_neon::super_block(tokens[2 * q + lane % 2][b].d, d[lane / 2], 0.0f, totals[lane], 0);
      }
    }
    for (int q = 0; q < pairs; ++q)
      for (int lane = 0; lane < 4; ++lane) res[q][lane] = sum[q][lane];
  }
};

// Rows in pairs against tokens in fours, then pairs (each pair of rows unpacked once per block
// for all of them); a last odd row or token through `dot`, which gives the same bits.
template <class Kernel>
void rows_i8mm(const void* w, std::size_t w_row_bytes, int rows, const void* a, std::size_t a_stride, int nt, std::int64_t n,
               float* out, std::size_t out_stride, DotFn dot) {
  using Block = typename Kernel::Block;
  using Act = typename Kernel::Act;
  const std::int64_t blocks = n / Kernel::block_elems;
  const auto* wb = static_cast<const std::byte*>(w);
  const auto* ab = static_cast<const std::byte*>(a);
  auto row = [&](int r) { return reinterpret_cast<const Block*>(wb + std::size_t(r) * w_row_bytes); };
  auto token = [&](int t) { return reinterpret_cast<const Act*>(ab + std::size_t(t) * a_stride); };
  auto put = [&](int r, int t, float v) { out[std::size_t(r) + std::size_t(t) * out_stride] = v; };
  auto put_pairs = [&](int r, int t, const float (*res)[4], int pairs) {
    for (int q = 0; q < pairs; ++q) {
      put(r, t + 2 * q, res[q][0]), put(r, t + 2 * q + 1, res[q][1]);
      put(r + 1, t + 2 * q, res[q][2]), put(r + 1, t + 2 * q + 1, res[q][3]);
    }
  };
  int r = 0;
  for (; r + 2 <= rows; r += 2) {
    int t = 0;
    float res[2][4];
    for (; t + 4 <= nt; t += 4) {
      const Act* tokens[4] = {token(t), token(t + 1), token(t + 2), token(t + 3)};
      Kernel::template run<2>(row(r), row(r + 1), tokens, blocks, res);
      put_pairs(r, t, res, 2);
    }
    for (; t + 2 <= nt; t += 2) {
      const Act* tokens[2] = {token(t), token(t + 1)};
      Kernel::template run<1>(row(r), row(r + 1), tokens, blocks, res);
      put_pairs(r, t, res, 1);
    }
    for (; t < nt; ++t) put(r, t, dot(row(r), token(t), n)), put(r + 1, t, dot(row(r + 1), token(t), n));
  }
  for (; r < rows; ++r)
    for (int t = 0; t < nt; ++t) put(r, t, dot(row(r), token(t), n));
}

}  // namespace

void rows_q8_0_q8_0_i8mm(const void* w, std::size_t w_row_bytes, int rows, const void* a, std::size_t a_stride, int nt,
                         std::int64_t n, float* out, std::size_t out_stride) {
  rows_i8mm<Q8Blocks<BlockQ8_0>>(w, w_row_bytes, rows, a, a_stride, nt, n, out, out_stride, dot_q8_0_q8_0_dotprod);
}

void rows_q4_0_q8_0_i8mm(const void* w, std::size_t w_row_bytes, int rows, const void* a, std::size_t a_stride, int nt,
                         std::int64_t n, float* out, std::size_t out_stride) {
  rows_i8mm<Q8Blocks<BlockQ4_0>>(w, w_row_bytes, rows, a, a_stride, nt, n, out, out_stride, dot_q4_0_q8_0_dotprod);
}

void rows_q4_k_q8_k_i8mm(const void* w, std::size_t w_row_bytes, int rows, const void* a, std::size_t a_stride, int nt,
                         std::int64_t n, float* out, std::size_t out_stride) {
  rows_i8mm<Q4KBlocks>(w, w_row_bytes, rows, a, a_stride, nt, n, out, out_stride, dot_q4_k_q8_k_dotprod);
}

void rows_q6_k_q8_k_i8mm(const void* w, std::size_t w_row_bytes, int rows, const void* a, std::size_t a_stride, int nt,
                         std::int64_t n, float* out, std::size_t out_stride) {
  rows_i8mm<Q6KBlocks>(w, w_row_bytes, rows, a, a_stride, nt, n, out, out_stride, dot_q6_k_q8_k_dotprod);
}

}  // namespace trilemma::engine
