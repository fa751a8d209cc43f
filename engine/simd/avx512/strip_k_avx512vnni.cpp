// AVX-512 VNNI strip kernels for the k-quants Q4_K and Q6_K: strips of 16 rows in the x16 layout
// (quant/x16_layout.hpp) against Q8_K activation rows (the panel's `rows`), in slabs of up to 8
// tokens. Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni -ffp-contract=off; called
// only when the CPU has them.
//
// Lane r of every vector is row r. Per group of codes sharing a scale (Q4_K: 32, Q6_K: 16) and
// token, vpdpbusd multiply 4 unsigned codes of all 16 rows by a broadcast 4-byte piece of the
// token's signed codes and leave the group's exact integer dot in every lane; one vpmulld by the
// rows' scales adds it to the super-block's integer sum. Q4_K's mins term (its 8 mins x the
// token's sub-block sums) and Q6_K's offset (-32 x its 16 scales x the token's 16-code sums) are
// vpdpwssd on int16 pairs per super-block. The ggml-layout dots unpack a row's scales and codes
// per row and token; here the unpacking serves 16 rows and a slab of tokens.
//
// Same bits as the `_ref` dot (quant/k_super_block.hpp): the integer sums are exact, and each
// super-block's float step is the reference's, y.d * (d * sum - dmin * mins), in its order and
// unfused (-ffp-contract=off), added to one accumulator per row and token in super-block order.
// So decode, a batched prefill and the reference agree bit for bit (tested).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "engine/quant/blocks.hpp"
#include "engine/quant/kernels.hpp"
#include "engine/quant/q8_panel.hpp"
#include "engine/quant/x16_layout.hpp"
#include "engine/simd/avx512/q4_k_strip_step.hpp"
#include "engine/simd/avx512/strip_slabs.hpp"

namespace trilemma::engine {
namespace {

// Super-block s of each token of a slab (rows `stride` bytes apart from act).
template <int nt>
[[gnu::always_inline]] inline void token_blocks(const std::byte* act, std::size_t stride, std::int64_t s, const BlockQ8K* (&y)[nt]) {
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) y[j] = reinterpret_cast<const BlockQ8K*>(act + std::size_t(j) * stride) + s;
}

struct Q4K {
  static constexpr std::size_t codes_per_super = k_q4_k_strip_codes;
  static constexpr std::size_t super_stride = k_q4_k_strip_codes;  // super-block s's codes at s * this
  // Super-block s of a strip with `supers` of them, against nt tokens: acc[j] += its float.
  template <int nt>
  [[gnu::always_inline]] static void super_block(const std::uint8_t* strip_codes, const std::uint16_t* strip_scales, std::int64_t supers,
                                                 std::int64_t s, const std::byte* act, std::size_t stride, __m512 (&acc)[nt]);
};

template <int nt>
[[gnu::always_inline]] inline void Q4K::super_block(const std::uint8_t* strip_codes, const std::uint16_t* strip_scales, std::int64_t,
                                                    std::int64_t s, const std::byte* act, std::size_t stride, __m512 (&acc)[nt]) {
  const std::uint8_t* codes = strip_codes + std::size_t(s) * k_q4_k_strip_codes;
  const Q4KStripScales scale(strip_scales + std::size_t(s) * k_q4_k_strip_scales);
  const BlockQ8K* y[nt];
  token_blocks(act, stride, s, y);
  __m512i sum[nt] = {};  // the super-block's integer sums, from zero
  const __m512i low4 = _mm512_set1_epi8(0x0F);
#pragma GCC unroll 1
  for (int c = 0; c < 4; ++c) {
    const std::uint8_t* chunk = codes + 512 * c;  // 64-byte aligned
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {  // low nibbles: sub-block 2c; high: 2c + 1
      __m512i w[8];
#pragma GCC unroll 8
      for (int p = 0; p < 8; ++p) {
        const __m512i v = _mm512_load_si512(chunk + 64 * p);
        w[p] = _mm512_and_si512(h == 0 ? v : _mm512_srli_epi16(v, 4), low4);
      }
#pragma GCC unroll 8
      for (int j = 0; j < nt; ++j) {
        const std::int8_t* q = y[j]->qs + 64 * c + 32 * h;
        __m512i dot = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int p = 0; p < 8; ++p) {
          std::int32_t piece;  // codes 4p..4p+3 of the sub-block, through memcpy: the row holds bytes
          std::memcpy(&piece, q + 4 * p, 4);
          dot = _mm512_dpbusd_epi32(dot, w[p], _mm512_set1_epi32(piece));
        }
        sum[j] = _mm512_add_epi32(sum[j], _mm512_mullo_epi32(dot, scale.sc[2 * c + h]));
      }
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) acc[j] = _mm512_add_ps(acc[j], scale.step(sum[j], *y[j]));
}

struct Q6K {
  static constexpr std::size_t codes_per_super = k_q6_k_x16_super_codes + 2 * k_x16_rows;  // codes, then d
  static constexpr std::size_t super_stride = k_q6_k_x16_super_codes;
  template <int nt>
  [[gnu::always_inline]] static void super_block(const std::uint8_t* strip_codes, const std::uint16_t* strip_scales, std::int64_t supers,
                                                 std::int64_t s, const std::byte* act, std::size_t stride, __m512 (&acc)[nt]);
};

// (Unaligned loads: a Q6_K strip is 3104 bytes per super-block, so with an odd count of
// super-blocks every other strip starts 32 bytes into a cache line.)
// Codes 4p..4p+3 of quarter qq of a half (ggml's unpack_q6_k): ql vector p (qq 0, 2) or 8 + p
// (qq 1, 3), low nibbles (qq 0, 1) or high (qq 2, 3), and qh vector p's bits 2qq, 2qq + 1 as bits 4-5.
template <int qq>
[[gnu::always_inline]] inline __m512i q6_k_codes(const std::uint8_t* half, int p) {
  const __m512i ql = _mm512_loadu_si512(half + 64 * (qq % 2 == 0 ? p : 8 + p));
  const __m512i qh = _mm512_loadu_si512(half + 1024 + 64 * p);
  const __m512i low = _mm512_and_si512(qq < 2 ? ql : _mm512_srli_epi16(ql, 4), _mm512_set1_epi8(0x0F));
  const __m512i high = qq == 2 ? qh : qq < 2 ? _mm512_slli_epi16(qh, 4 - 2 * qq) : _mm512_srli_epi16(qh, 2);
  return _mm512_or_si512(low, _mm512_and_si512(high, _mm512_set1_epi8(0x30)));
}

template <int qq, int nt>
[[gnu::always_inline]] inline void q6_k_quarter(const std::uint8_t* half, int gg, int at, __m512i scale,
                                                const BlockQ8K* const (&y)[nt], __m512i (&sum)[nt]) {
  __m512i w[4];
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) w[i] = q6_k_codes<qq>(half, 4 * gg + i);
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) {
    const std::int8_t* q = y[j]->qs + at;  // the group's 16 codes
    __m512i dot = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      std::int32_t piece;
      std::memcpy(&piece, q + 4 * i, 4);
      dot = _mm512_dpbusd_epi32(dot, w[i], _mm512_set1_epi32(piece));
    }
    sum[j] = _mm512_add_epi32(sum[j], _mm512_mullo_epi32(dot, scale));
  }
}

template <int nt>
[[gnu::always_inline]] inline void Q6K::super_block(const std::uint8_t* strip_codes, const std::uint16_t* strip_scales, std::int64_t supers,
                                                    std::int64_t s, const std::byte* act, std::size_t stride, __m512 (&acc)[nt]) {
  const std::uint8_t* codes = strip_codes + std::size_t(s) * k_q6_k_x16_super_codes;
  const auto* d16 = reinterpret_cast<const std::uint16_t*>(strip_codes + std::size_t(supers) * k_q6_k_x16_super_codes) + s * k_x16_rows;
  const auto* pairs = reinterpret_cast<const __m256i*>(strip_scales + std::size_t(s) * 8 * k_x16_rows);
  const BlockQ8K* y[nt];
  token_blocks(act, stride, s, y);
  __m512i sum[nt] = {};  // the super-block's integer sums, from zero
#pragma GCC unroll 1
  for (int h = 0; h < 2; ++h) {
    const std::uint8_t* half = codes + 1536 * h;
#pragma GCC unroll 1
    for (int gg = 0; gg < 2; ++gg) {
      // Group g = 8h + 2qq + gg (16 codes) has scale g: int16 element g % 2 of pair vector g / 2.
      const auto scale = [&](int qq) {
        const int g = 8 * h + 2 * qq + gg;
        const __m512i pair = _mm512_cvtepi8_epi16(_mm256_loadu_si256(pairs + g / 2));
        return g % 2 == 0 ? _mm512_srai_epi32(_mm512_slli_epi32(pair, 16), 16) : _mm512_srai_epi32(pair, 16);
      };
      const int at = 128 * h + 16 * gg;
      q6_k_quarter<0, nt>(half, gg, at, scale(0), y, sum);
      q6_k_quarter<1, nt>(half, gg, at + 32, scale(1), y, sum);
      q6_k_quarter<2, nt>(half, gg, at + 64, scale(2), y, sum);
      q6_k_quarter<3, nt>(half, gg, at + 96, scale(3), y, sum);
    }
  }
  // The codes are unsigned (code + 32): sum - 32 * sum_g scale_g * (the token's 16-code sums).
  const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(d16)));
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) {
    __m512i offset = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      std::int32_t bsums;  // the token's 16-code sums 2k, 2k + 1
      std::memcpy(&bsums, y[j]->bsums + 2 * k, 4);
      offset = _mm512_dpwssd_epi32(offset, _mm512_cvtepi8_epi16(_mm256_loadu_si256(pairs + k)), _mm512_set1_epi32(bsums));
    }
    const __m512i exact = _mm512_sub_epi32(sum[j], _mm512_slli_epi32(offset, 5));
    // The reference's step with dmin = 0 and mins = 0: y.d * (d * sum - 0), and x - 0 is x.
    acc[j] = _mm512_add_ps(acc[j], _mm512_mul_ps(_mm512_set1_ps(y[j]->d), _mm512_mul_ps(d, _mm512_cvtepi32_ps(exact))));
  }
}

template <class F, int nt>
void strip_n(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t supers, const std::byte* act, std::size_t stride,
             float* out, std::size_t out_stride) {
  __m512 acc[nt];
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) acc[j] = _mm512_setzero_ps();
  for (std::int64_t s = 0; s < supers; ++s) {
    if constexpr (nt == 1)  // decode: the next super-block's codes requested now, as the Q8_0 strips do
      for (std::size_t l = 0; l < F::super_stride; l += 64)
        _mm_prefetch(reinterpret_cast<const char*>(codes + std::size_t(s + 1) * F::super_stride) + l, _MM_HINT_T0);
    F::template super_block<nt>(codes, scales, supers, s, act, stride, acc);
  }
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) _mm512_storeu_ps(out + std::size_t(j) * out_stride, acc[j]);
}

template <class F>
void strips(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int count, const Q8Panel& panel, int t0, int nt,
            float* out, std::size_t out_stride) {
  const std::int64_t supers = blocks / 8;
  const std::size_t strip_bytes = std::size_t(supers) * F::codes_per_super, strip_scales = std::size_t(supers) * 8 * k_x16_rows;
  for_strip_slabs(count, strip_bytes, nt, [&](int s, int t, int n) {
    const std::uint8_t* c = codes + std::size_t(s) * strip_bytes;
    const std::uint16_t* sc = scales + std::size_t(s) * strip_scales;
    const std::byte* act = panel.rows + std::size_t(t0 + t) * panel.row_stride;
    float* o = out + std::size_t(t) * out_stride + std::size_t(s) * k_x16_rows;
    with_slab_tokens(n, [&]<int nt_>() { strip_n<F, nt_>(c, sc, supers, act, panel.row_stride, o, out_stride); });
  });
}

}  // namespace

void strip_q4_k_x16_avx512vnni(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int count,
                               const Q8Panel& panel, int t0, int nt, float* out, std::size_t out_stride) {
  strips<Q4K>(codes, scales, blocks, count, panel, t0, nt, out, out_stride);
}
void strip_q6_k_x16_avx512vnni(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int count,
                               const Q8Panel& panel, int t0, int nt, float* out, std::size_t out_stride) {
  strips<Q6K>(codes, scales, blocks, count, panel, t0, nt, out, out_stride);
}

}  // namespace trilemma::engine
