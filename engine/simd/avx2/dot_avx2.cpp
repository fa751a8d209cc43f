// AVX2 + FMA + F16C dot products (the `_avx2` column of quant/kernel_table.cpp). This file is
// compiled with -mavx2 -mfma -mf16c and called only after cpu_features() says so.
// Each kernel follows its `_ref` twin block for block: integer sums per Q8_0 block are exact,
// only the order of the float accumulation differs. Block layouts: quant/blocks.hpp.
#include <immintrin.h>

#include <cstring>

#include "engine/quant/blocks.hpp"
#include "engine/quant/fp16.hpp"
#include "engine/quant/kernels.hpp"

#include "engine/simd/avx2/avx2_common.hpp"
#include "engine/simd/avx2/multi_token.hpp"

#include <cstddef>

namespace trilemma::engine {
namespace {

using avx2::fp16;
using avx2::hsum;
using avx2::reduce;
using avx2::token_block;

// Signed int8 x signed int8, 32 lanes, summed to 8 int32 lanes (ggml's mul_sum_i8_pairs).
__m256i dot_i8(__m256i x, __m256i y) {
  const __m256i ax = _mm256_sign_epi8(x, x);
  const __m256i sy = _mm256_sign_epi8(y, x);
  return _mm256_madd_epi16(_mm256_maddubs_epi16(ax, sy), _mm256_set1_epi16(1));
}

// Unsigned codes (< 64) x signed int8.
__m256i dot_u8(__m256i q, __m256i y) { return _mm256_madd_epi16(_mm256_maddubs_epi16(q, y), _mm256_set1_epi16(1)); }

__m256i set_m128i(__m128i hi, __m128i lo) { return _mm256_insertf128_si256(_mm256_castsi128_si256(lo), hi, 1); }

// 32 bits -> 32 bytes of 0xFF (bit set) or 0x00 (ggml's bytes_from_bits_32).
__m256i bytes_from_bits_32(const std::uint8_t* x) {
  std::uint32_t x32;
  std::memcpy(&x32, x, 4);
  const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
  __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(int(x32)), shuf);
  bytes = _mm256_or_si256(bytes, _mm256_set1_epi64x(0x7fbfdfeff7fbfdfe));
  return _mm256_cmpeq_epi8(bytes, _mm256_set1_epi64x(-1));
}

// load(i) gives weights i..i+7 as floats, at(i) weight i (for the tail of fewer than 8).
template <class Load, class At>
float dot_float(const float* y, std::int64_t n, Load load, At at) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  std::int64_t i = 0;
  for (; i + 32 <= n; i += 32)
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) acc[k] = _mm256_fmadd_ps(load(i + 8 * k), _mm256_loadu_ps(y + i + 8 * k), acc[k]);
  for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(load(i), _mm256_loadu_ps(y + i), acc[0]);
  float sum = hsum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  for (; i < n; ++i) sum += at(i) * y[i];
  return sum;
}

}  // namespace

float dot_f32_f32_avx2(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const float*>(w);
  const auto* y = static_cast<const float*>(a);
  return dot_float(
      y, n, [x](std::int64_t i) { return _mm256_loadu_ps(x + i); }, [x](std::int64_t i) { return x[i]; });
}

float dot_f16_f32_avx2(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const std::uint16_t*>(w);
  const auto* y = static_cast<const float*>(a);
  return dot_float(
      y, n, [x](std::int64_t i) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))); },
      [x](std::int64_t i) { return fp16(x[i]); });
}

float dot_bf16_f32_avx2(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const std::uint16_t*>(w);
  const auto* y = static_cast<const float*>(a);
  return dot_float(
      y, n,
      [x](std::int64_t i) {
        const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
      },
      [x](std::int64_t i) { return bf16_to_fp32(x[i]); });
}

namespace {

// Signed codes of Q8_0 / Q4_0 weight block i, as 32 int8 lanes.
__m256i codes(const BlockQ8_0& b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)); }
__m256i codes(const BlockQ4_0& b) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
  return _mm256_sub_epi8(_mm256_and_si256(set_m128i(_mm_srli_epi16(v, 4), v), _mm256_set1_epi8(0x0F)), _mm256_set1_epi8(8));
}

// The 32 nibbles of a Q4_0-style block, element order (low nibbles, then high), unsigned.
__m256i nibbles(const std::uint8_t* qs) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  return _mm256_and_si256(set_m128i(_mm_srli_epi16(v, 4), v), _mm256_set1_epi8(0x0F));
}
// Q5_0/Q5_1 codes 0..31: the nibbles with the fifth bit from qh.
__m256i codes5(const std::uint8_t* qs, const std::uint8_t* qh) {
  return _mm256_or_si256(nibbles(qs), _mm256_and_si256(bytes_from_bits_32(qh), _mm256_set1_epi8(0x10)));
}
__m256i codes(const BlockQ5_0& b) { return _mm256_sub_epi8(codes5(b.qs, b.qh), _mm256_set1_epi8(16)); }
// IQ4_NL: each nibble looks its level up in a 16-entry table (one shuffle).
__m256i codes(const BlockIq4Nl& b) {
  const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(k_iq4nl_values));
  return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(table), nibbles(b.qs));
}
// Unsigned codes of the min/max formats.
__m256i unsigned_codes(const BlockQ4_1& b) { return nibbles(b.qs); }
__m256i unsigned_codes(const BlockQ5_1& b) { return codes5(b.qs, b.qh); }

// x = d * q + m blocks: dy * (d * sum(q * y) + m * sum(y)) per block, as the reference.
template <class Block>
float dot_min_blocks_q8_0(const Block* x, const BlockQ8_0* y, std::int64_t nb) {
  const __m256i ones = _mm256_set1_epi8(1);
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  for (std::int64_t i = 0; i < nb; ++i) {
    avx2::prefetch_ahead<1>(x + i);
    const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].qs));
    const float dy = fp16(y[i].d);
    acc0 = _mm256_fmadd_ps(_mm256_set1_ps(dy * fp16(x[i].d)), _mm256_cvtepi32_ps(dot_u8(unsigned_codes(x[i]), qy)), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_set1_ps(dy * fp16(x[i].m)), _mm256_cvtepi32_ps(dot_u8(ones, qy)), acc1);
  }
  return hsum(_mm256_add_ps(acc0, acc1));
}

// One weight row against one Q8_0 activation row; two blocks per step on two accumulators
// so the FMA latency chain does not bound the stream rate (decode is a memory stream).
template <class Block>
float dot_blocks_q8_0(const Block* x, const BlockQ8_0* y, std::int64_t nb) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  std::int64_t i = 0;
  for (; i + 2 <= nb; i += 2) {
    avx2::prefetch_ahead<1>(x + i);
    const __m256i p0 = dot_i8(codes(x[i]), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].qs)));
    const __m256i p1 = dot_i8(codes(x[i + 1]), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i + 1].qs)));
    acc0 = _mm256_fmadd_ps(_mm256_set1_ps(fp16(x[i].d) * fp16(y[i].d)), _mm256_cvtepi32_ps(p0), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_set1_ps(fp16(x[i + 1].d) * fp16(y[i + 1].d)), _mm256_cvtepi32_ps(p1), acc1);
  }
  if (i < nb) {
    const __m256i p0 = dot_i8(codes(x[i]), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[i].qs)));
    acc0 = _mm256_fmadd_ps(_mm256_set1_ps(fp16(x[i].d) * fp16(y[i].d)), _mm256_cvtepi32_ps(p0), acc0);
  }
  return hsum(_mm256_add_ps(acc0, acc1));
}

}  // namespace

float dot_q8_0_q8_0_avx2(const void* w, const void* a, std::int64_t n) {
  return dot_blocks_q8_0(static_cast<const BlockQ8_0*>(w), static_cast<const BlockQ8_0*>(a), n / k_qk8_0);
}
float dot_q4_0_q8_0_avx2(const void* w, const void* a, std::int64_t n) {
  return dot_blocks_q8_0(static_cast<const BlockQ4_0*>(w), static_cast<const BlockQ8_0*>(a), n / k_qk4_0);
}
float dot_q5_0_q8_0_avx2(const void* w, const void* a, std::int64_t n) {
  return dot_blocks_q8_0(static_cast<const BlockQ5_0*>(w), static_cast<const BlockQ8_0*>(a), n / k_qk4_0);
}
float dot_iq4_nl_q8_0_avx2(const void* w, const void* a, std::int64_t n) {
  return dot_blocks_q8_0(static_cast<const BlockIq4Nl*>(w), static_cast<const BlockQ8_0*>(a), n / k_qk4_0);
}
float dot_q4_1_q8_0_avx2(const void* w, const void* a, std::int64_t n) {
  return dot_min_blocks_q8_0(static_cast<const BlockQ4_1*>(w), static_cast<const BlockQ8_0*>(a), n / k_qk4_0);
}
float dot_q5_1_q8_0_avx2(const void* w, const void* a, std::int64_t n) {
  return dot_min_blocks_q8_0(static_cast<const BlockQ5_1*>(w), static_cast<const BlockQ8_0*>(a), n / k_qk4_0);
}
namespace {

// Q4_K / Q5_K against Q8_K: per super-block, each 32-code sub-block's maddubs pair sums are
// weighted by its 6-bit scale in the madd and summed in int32 across the super-block; one
// convert and FMA per 256 codes. The min term is the 16 activation sums (bsums) against the
// mins, one madd. Codes are unsigned (0..15, 0..31), so maddubs takes them as they are.
// Q4_K / Q5_K against Q8_K, for NT tokens at once (the single dot is NT = 1, so each token's
// result is the same bits either way): per super-block, each 32-code sub-block's maddubs pair
// sums are weighted by its 6-bit scale in the madd and summed in int32 across the super-block;
// one convert and FMA per 256 codes. The min term is the activations' sums per 32 (pairs of
// bsums) against the 8 mins, one madd. Codes are unsigned (0..15, 0..31), so maddubs takes
// them as they are. The codes and scales are unpacked once for all NT tokens.
template <class Block, int NT>
void dot_k_quant(const Block* b, const BlockQ8K* y, std::size_t stride, std::int64_t blocks, float* out) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), ones8 = _mm256_set1_epi8(1);
  __m256 acc[NT];
  __m128 acc_min[NT];
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps(), acc_min[t] = _mm_setzero_ps();
  for (std::int64_t i = 0; i < blocks; ++i) {
    avx2::prefetch_ahead<NT>(b + i);
    std::uint32_t words[4];  // into a register by value: a 16-byte reload of four 4-byte stores would stall
    k_scales_mins(b[i].scales, words);
    const __m256i sm = _mm256_cvtepu8_epi16(_mm_setr_epi32(int(words[0]), int(words[1]), int(words[2]), int(words[3])));
    // The scales (int16) in both lanes, so one byte shuffle broadcasts sub-block j's.
    const __m256i scales = _mm256_broadcastsi128_si256(_mm256_castsi256_si128(sm));
    __m256i qh;
    if constexpr (sizeof(Block) == sizeof(BlockQ5K)) qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qh));
    __m256i isum[NT];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qs + 32 * p));
      __m256i q[2] = {_mm256_and_si256(v, low4), _mm256_and_si256(_mm256_srli_epi16(v, 4), low4)};
      if constexpr (sizeof(Block) == sizeof(BlockQ5K)) {
        // Bit 2p of qh[l] is code 64p + l's fifth bit, bit 2p + 1 code 64p + 32 + l's.
        q[0] = _mm256_or_si256(q[0], _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * p), ones8), 4));
        q[1] = _mm256_or_si256(q[1], _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * p + 1), ones8), 4));
      }
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const int j = 2 * p + h;
        const __m256i scale = _mm256_shuffle_epi8(scales, _mm256_set1_epi16(std::int16_t(0x0100 * (2 * j + 1) + 2 * j)));
#pragma GCC unroll 4
        for (int t = 0; t < NT; ++t) {
          const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(token_block(y, stride, t, i)->qs + 32 * j));
          isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(_mm256_maddubs_epi16(q[h], qy), scale));
        }
      }
    }
    const __m128i mins8 = _mm256_extracti128_si256(sm, 1);
    const float d = fp16(b[i].d), dmin = fp16(b[i].dmin);
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) {
      const BlockQ8K* yt = token_block(y, stride, t, i);
      const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yt->bsums));
      const __m128i sums32 = _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(yt->d * d), _mm256_cvtepi32_ps(isum[t]), acc[t]);
      acc_min[t] = _mm_fmadd_ps(_mm_set1_ps(-yt->d * dmin), _mm_cvtepi32_ps(_mm_madd_epi16(sums32, mins8)), acc_min[t]);
    }
  }
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t) out[t] = reduce(acc[t], acc_min[t]);
}

// Q6_K against Q8_K for NT tokens (NT = 1: the single dot): 6-bit codes c with value c - 32
// and an int8 scale per 16 codes. Each 32-code piece is rebuilt from its low-nibble and
// two-bit planes as in the reference's unpack; the sign trick takes the signed codes through
// maddubs, madd applies the piece's two scales, and the int32 sums run over the super-block.
template <int NT>
void dot_q6_k(const BlockQ6K* b, const BlockQ8K* y, std::size_t stride, std::int64_t blocks, float* out) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), low2 = _mm256_set1_epi8(3), bias = _mm256_set1_epi8(32);
  __m256 acc[NT];
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
  for (std::int64_t i = 0; i < blocks; ++i) {
    avx2::prefetch_ahead<NT>(b + i);
    const __m256i scales16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].scales)));
    __m256i isum[NT];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i half = avx2::broadcast_half(scales16, h);
      const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].ql + 64 * h));
      const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].ql + 64 * h + 32));
      const __m256i hb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qh + 32 * h));
      const __m256i lows[4] = {_mm256_and_si256(l0, low4), _mm256_and_si256(l1, low4),
                               _mm256_and_si256(_mm256_srli_epi16(l0, 4), low4),
                               _mm256_and_si256(_mm256_srli_epi16(l1, 4), low4)};
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        const __m256i high = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2 * k), low2), 4);
        const __m256i q = _mm256_sub_epi8(_mm256_or_si256(lows[k], high), bias);
        const __m256i aq = _mm256_sign_epi8(q, q), scale = avx2::scale_pair(half, k);
#pragma GCC unroll 4
        for (int t = 0; t < NT; ++t) {
          const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(token_block(y, stride, t, i)->qs + 128 * h + 32 * k));
          isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(_mm256_maddubs_epi16(aq, _mm256_sign_epi8(qy, q)), scale));
        }
      }
    }
    avx2::add_super_block(acc, isum, y, stride, i, fp16(b[i].d));
  }
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t) out[t] = reduce(acc[t], _mm_setzero_ps());
}


// Both halves of a tq block against two Q8_0 blocks; q[h] holds codes 32h..32h+31.
void tq_accumulate(const __m256i q[2], float d, float m, const BlockQ8_0* y, __m256& acc) {
  const __m256i ones8 = _mm256_set1_epi8(1);
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    const __m256i qy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[h].qs));
    const float dy = fp16(y[h].d);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(dy * d), _mm256_cvtepi32_ps(dot_u8(q[h], qy)), acc);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(dy * m), _mm256_cvtepi32_ps(dot_u8(ones8, qy)), acc);
  }
}

void unpack_low2(const std::uint8_t* plane, __m256i q[2]) {
  const __m256i three = _mm256_set1_epi8(3);
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(plane));
  q[0] = _mm256_and_si256(set_m128i(_mm_srli_epi16(v, 2), v), three);
  q[1] = _mm256_and_si256(set_m128i(_mm_srli_epi16(v, 6), _mm_srli_epi16(v, 4)), three);
}

}  // namespace

float dot_tq2_t_q8_0_avx2(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockTq2*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  __m256 acc = _mm256_setzero_ps();
  __m256i q[2];
  for (std::int64_t i = 0; i < n / k_qk_t; ++i, y += 2) {
    unpack_low2(x[i].qs, q);
    tq_accumulate(q, fp16(x[i].d), fp16(x[i].m), y, acc);
  }
  return hsum(acc);
}

float dot_tq3_t_q8_0_avx2(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockTq3*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  const __m256i four = _mm256_set1_epi8(4);
  __m256 acc = _mm256_setzero_ps();
  __m256i q[2];
  for (std::int64_t i = 0; i < n / k_qk_t; ++i, y += 2) {
    unpack_low2(x[i].ql, q);
    q[0] = _mm256_or_si256(q[0], _mm256_and_si256(bytes_from_bits_32(x[i].qh), four));
    q[1] = _mm256_or_si256(q[1], _mm256_and_si256(bytes_from_bits_32(x[i].qh + 4), four));
    tq_accumulate(q, fp16(x[i].d), fp16(x[i].m), y, acc);
  }
  return hsum(acc);
}

float dot_q4_k_q8_k_avx2(const void* w, const void* a, std::int64_t n) {
  float out;
  dot_k_quant<BlockQ4K, 1>(static_cast<const BlockQ4K*>(w), static_cast<const BlockQ8K*>(a), 0, n / k_qk_k, &out);
  return out;
}
void dot_multi_q4_k_q8_k_avx2(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out) {
  avx2::for_token_count(nt, [&]<int NT>() { dot_k_quant<BlockQ4K, NT>(static_cast<const BlockQ4K*>(w), static_cast<const BlockQ8K*>(a), a_stride, n / k_qk_k, out); });
}
float dot_q5_k_q8_k_avx2(const void* w, const void* a, std::int64_t n) {
  float out;
  dot_k_quant<BlockQ5K, 1>(static_cast<const BlockQ5K*>(w), static_cast<const BlockQ8K*>(a), 0, n / k_qk_k, &out);
  return out;
}
void dot_multi_q5_k_q8_k_avx2(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out) {
  avx2::for_token_count(nt, [&]<int NT>() { dot_k_quant<BlockQ5K, NT>(static_cast<const BlockQ5K*>(w), static_cast<const BlockQ8K*>(a), a_stride, n / k_qk_k, out); });
}
float dot_q6_k_q8_k_avx2(const void* w, const void* a, std::int64_t n) {
  float out;
  dot_q6_k<1>(static_cast<const BlockQ6K*>(w), static_cast<const BlockQ8K*>(a), 0, n / k_qk_k, &out);
  return out;
}
void dot_multi_q6_k_q8_k_avx2(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out) {
  avx2::for_token_count(nt, [&]<int NT>() { dot_q6_k<NT>(static_cast<const BlockQ6K*>(w), static_cast<const BlockQ8K*>(a), a_stride, n / k_qk_k, out); });
}

}  // namespace trilemma::engine
