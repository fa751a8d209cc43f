// AVX-512 VNNI strip kernel for Q4_K: strips of 16 rows in the x16 layout (quant/x16_layout.hpp)
// against Q8_K activation rows (the panel's `rows`), in slabs of up to 8 tokens. Compiled with
// -mavx512f -mavx512bw -mavx512vl -mavx512vnni -ffp-contract=off; called only when the CPU has them.
//
// Lane r of every vector is row r. Per sub-block (32 codes) and token, eight vpdpbusd multiply
// 4 unsigned codes of all 16 rows by a broadcast 4-byte piece of the token's signed codes and
// leave the sub-block's exact integer dot in every lane; one vpmulld by the rows' 6-bit scales
// adds it to the super-block's integer sum. The mins' term (sum of the 8 mins x the token's
// sub-block sums) is four vpdpwssd per super-block. The ggml-layout dots unpack a row's scales
// and codes per row and token; here the unpacking serves 16 rows and a slab of tokens.
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

namespace trilemma::engine {
namespace {

template <int nt>
__attribute__((always_inline)) inline void super_block(const std::uint8_t* codes, const std::uint16_t* scales, const std::byte* act,
                                                       std::size_t stride, std::int64_t s, __m512 (&acc)[nt]) {
  const Q4KStripScales scale(scales);
  const BlockQ8K* y[nt];
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) y[j] = reinterpret_cast<const BlockQ8K*>(act + std::size_t(j) * stride) + s;
  __m512i sum[nt];
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) sum[j] = _mm512_setzero_si512();
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

template <int nt>
void strip_n(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t supers, const std::byte* act, std::size_t stride,
             float* out, std::size_t out_stride) {
  __m512 acc[nt];
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) acc[j] = _mm512_setzero_ps();
  for (std::int64_t s = 0; s < supers; ++s)
    super_block<nt>(codes + std::size_t(s) * k_q4_k_strip_codes, scales + std::size_t(s) * k_q4_k_strip_scales, act, stride, s, acc);
#pragma GCC unroll 8
  for (int j = 0; j < nt; ++j) _mm512_storeu_ps(out + std::size_t(j) * out_stride, acc[j]);
}

void strip_slab(const std::uint8_t* c, const std::uint16_t* sc, std::int64_t supers, const std::byte* act, std::size_t stride, int nt,
                float* o, std::size_t out_stride) {
  switch (nt) {
    case 1: strip_n<1>(c, sc, supers, act, stride, o, out_stride); break;
    case 2: strip_n<2>(c, sc, supers, act, stride, o, out_stride); break;
    case 3: strip_n<3>(c, sc, supers, act, stride, o, out_stride); break;
    case 4: strip_n<4>(c, sc, supers, act, stride, o, out_stride); break;
    case 5: strip_n<5>(c, sc, supers, act, stride, o, out_stride); break;
    case 6: strip_n<6>(c, sc, supers, act, stride, o, out_stride); break;
    case 7: strip_n<7>(c, sc, supers, act, stride, o, out_stride); break;
    default: strip_n<8>(c, sc, supers, act, stride, o, out_stride); break;
  }
}

// As the Q4_0 / Q8_0 strips: a few strips stay in L2 while every slab of tokens passes.
constexpr std::size_t k_l2_strip_bytes = 256 << 10;

}  // namespace

void strip_q4_k_x16_avx512vnni(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int count,
                               const Q8Panel& panel, int t0, int nt, float* out, std::size_t out_stride) {
  const std::int64_t supers = blocks / 8;
  const std::size_t strip_bytes = std::size_t(supers) * k_q4_k_strip_codes;
  const int per_block = int(std::max<std::size_t>(1, k_l2_strip_bytes / strip_bytes));
  for (int s0 = 0; s0 < count; s0 += per_block)
    for (int t = 0; t < nt; t += 8)
      for (int s = s0; s < std::min(count, s0 + per_block); ++s)
        strip_slab(codes + std::size_t(s) * strip_bytes, scales + std::size_t(s) * std::size_t(supers) * k_q4_k_strip_scales, supers,
                   panel.rows + std::size_t(t0 + t) * panel.row_stride, panel.row_stride, std::min(8, nt - t),
                   out + std::size_t(t) * out_stride + std::size_t(s) * k_x16_rows, out_stride);
}

}  // namespace trilemma::engine
