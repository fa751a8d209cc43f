// AMX-INT8 strip kernels: the x16 strips (quant/x16_layout.hpp) of the AVX-512 VNNI kernels
// (simd/avx512/strip_avx512vnni.cpp), multiplied on the tile unit. Compiled with -mamx-tile
// -mamx-int8 and AVX-512; called only when cpu_features().amx_int8 (CPU, XCR0 and the kernel's
// permission all granted).
//
// One TDPBSSD multiplies a block (32 codes) of up to 16 tokens by the same block of 16 weight rows:
//   A (tokens): 16 rows x 32 bytes, token j's codes, 512 contiguous bytes of the panel's
//               block-major copy (panel.tile_codes);
//   B (weights): 8 rows x 64 bytes, row q = the x16 layout's zmm q of a Q8_0 block (lane r: row
//               r's codes 4q..4q+3), exactly the "4 bytes per column" order TDPBSSD reads.
//   C: 16 tokens x 16 rows of exact int32 block dots, stored, then scaled by the vector units.
// Blocks run outermost for a pair of strips: each block's two B tiles load once and serve every
// 16-token slab of a pass of up to 64 tokens (Q4_0 blocks are widened to that Q8_0 form, nibble - 8, in L1 one
// block ahead), each slab's A tile serves both strips, and a slab's sums are stored while the previous
// slab's are scaled.
// The block's scales are applied as in the VNNI kernel, to the same int32 sums, in the same
// order (convert, 16 row scales x the token's scale, FMA into the even or odd chain): the
// results equal the VNNI kernel's bit for bit, so decode (which stays on VNNI below a few tokens)
// and an AMX prefill agree exactly.
//
// Measured (strip_bench, one thread, 5632 x 2048 and 2048 x 5632, 64 tokens, 2-vCPU Xeon):
// VNNI / AMX time 1.8-1.9x for Q8_0, 1.5-1.6x for Q4_0 (session 25: A tiles from the panel's
// block-major copy, Q4_0 widened a block ahead: the 1.1B prefill +9% for Q4_0). The scaling takes about half the time: one
// convert, multiply and FMA per 16 outputs per block (plus the accumulator's load and store),
// which the per-block scales make unavoidable; the tile unit alone runs 2x faster than this.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>

#include "engine/quant/kernels.hpp"
#include "engine/quant/q8_panel.hpp"
#include "engine/quant/x16_layout.hpp"
#include "engine/simd/amx/tile_config.hpp"

namespace trilemma::engine {
namespace {

constexpr std::size_t k_q8_block_bytes = 512;  // one Q8_0 block of 16 rows in the x16 layout
constexpr std::size_t k_q4_block_bytes = 256;  // one Q4_0 block of 16 rows
// Below this many tokens the VNNI strips are faster (strip_bench, 5632 x 2048, one thread,
// AMX / VNNI time: q8_0 0.92x at 4 tokens, 1.3x at 8, 1.9x at 16 and 64; q4_0 0.86x at 8 tokens,
// 1.26x at 16, 1.47x at 64).
constexpr int k_min_tokens_q8_0 = 8, k_min_tokens_q4_0 = 16;


template <int ns>
using SlabSums = std::int32_t[ns][k_slab][16];  // [strip][token][row]: one block's exact dots
template <int ns>
using SlabAcc = float[2][ns][k_slab][16];       // [even/odd block][strip][token][row]

// acc[chain of b][s][j] += block b's int32 dots c[s][j] x (16 row scales x token j's scale), for
// the slab's first nt tokens: the VNNI kernel's float steps, in its order.
template <int ns>
__attribute__((always_inline)) inline void finish(const SlabSums<ns>& c, const __m512 (&dx)[ns], const float* dy, std::size_t dy_stride,
                                                  int nt, std::int64_t b, SlabAcc<ns>& acc) {
  float(&chain)[ns][k_slab][16] = acc[b % 2];
  const bool fresh = b < 2;  // the chain's first block: it starts from zero, as the VNNI kernel's does
#pragma GCC unroll 2
  for (int s = 0; s < ns; ++s)
#pragma GCC unroll 4
    for (int j = 0; j < nt; ++j) {
      const __m512 sc = _mm512_mul_ps(dx[s], _mm512_set1_ps(dy[std::size_t(j) * dy_stride]));
      const __m512 prior = fresh ? _mm512_setzero_ps() : _mm512_load_ps(chain[s][j]);
      _mm512_store_ps(chain[s][j], _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(c[s][j])), sc, prior));
    }
}

// A Q4_0 block of 16 rows (zmm q holds rows' bytes 4q..4q+3: low nibbles = codes 4q.., high =
// codes 16 + 4q..) as the Q8_0 block of the same values: zmm q <- low nibbles of q, zmm 4 + q <-
// high nibbles of q, each minus 8.
__attribute__((always_inline)) inline void widen_q4_0_block(const std::uint8_t* q4, std::uint8_t* q8) {
  const __m512i low4 = _mm512_set1_epi8(0x0F), eight = _mm512_set1_epi8(8);
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    const __m512i v = _mm512_load_si512(q4 + 64 * q);
    _mm512_store_si512(q8 + 64 * q, _mm512_sub_epi8(_mm512_and_si512(v, low4), eight));
    _mm512_store_si512(q8 + 64 * (4 + q), _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(v, 4), low4), eight));
  }
}

// `ns` (1 or 2) strips (q8: Q8_0 x16 codes; else Q4_0, widened block by block) against the
// pass's tokens. Block by block: B loads once and serves every slab; slab k's products are
// stored while slab k - 1's are scaled, so the vector units work beside the tile unit.
template <int ns, bool q8>
void strips_pass(const std::uint8_t* codes, std::size_t strip_bytes, const std::uint16_t* scales, std::int64_t blocks,
                 const Q8Panel& panel, int t0, const PassRows& pass, float* out, std::size_t out_stride) {
  alignas(64) SlabAcc<ns> acc[k_pass_slabs];  // each chain written first by its first block
  alignas(64) SlabSums<ns> sums[2];
  // Q4_0 blocks widened one block ahead: a tile load right after the stores that wrote its bytes
  // waits for them to leave the store buffer.
  alignas(64) std::uint8_t wide[2][ns][k_q8_block_bytes];
  if constexpr (!q8)
    for (int s = 0; s < ns; ++s) widen_q4_0_block(codes + std::size_t(s) * strip_bytes, wide[0][s]);
  const std::size_t dy_stride = std::size_t(panel.groups) * 4;  // token t, block b: dy[t * stride + b]
  const float* dy0 = panel.dy.data() + std::size_t(t0) * dy_stride;
  // The step before: its slab, block and scales, to scale once the next slab is multiplied.
  int prev_k = -1;
  std::int64_t prev_b = 0;
  unsigned step = 0;  // (block, slab) steps so far: tiles and sums alternate by its parity
  __m512 dx[ns], prev_dx[ns];
  const auto finish_prev = [&] {
    const int nt = std::min(k_slab, pass.nt - prev_k * k_slab);
    finish<ns>(sums[(step - 1) % 2], prev_dx, dy0 + std::size_t(prev_k * k_slab) * dy_stride + std::size_t(prev_b), dy_stride, nt,
               prev_b, acc[prev_k]);
  };
  for (std::int64_t b = 0; b < blocks; ++b) {
    for (int s = 0; s < ns; ++s) {
      const std::uint8_t* w = codes + std::size_t(s) * strip_bytes;
      const std::uint8_t* block;
      if constexpr (q8)
        block = w + k_q8_block_bytes * std::size_t(b);
      else
        block = wide[b % 2][s];
      dx[s] = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales + std::size_t(s) * std::size_t(blocks) * k_x16_rows + 16 * b)));
      if (s == 0) _tile_loadd(4, block, 64);
      else _tile_loadd(5, block, 64);
    }
    if constexpr (!q8)
      if (b + 1 < blocks)
        for (int s = 0; s < ns; ++s) widen_q4_0_block(codes + std::size_t(s) * strip_bytes + k_q4_block_bytes * std::size_t(b + 1), wide[(b + 1) % 2][s]);
    for (int k = 0; k < pass.slabs; ++k) {
      if (step % 2 == 0) {
        TRILEMMA_AMX_MULTIPLY(_tile_dpbssd, 2, 0, 1, panel.tile_codes_of(b, t0 + k * k_slab), 32);
        TRILEMMA_AMX_STORE(0, 1, sums[0]);
      } else {
        TRILEMMA_AMX_MULTIPLY(_tile_dpbssd, 3, 6, 7, panel.tile_codes_of(b, t0 + k * k_slab), 32);
        TRILEMMA_AMX_STORE(6, 7, sums[1]);
      }
      if (prev_k >= 0) finish_prev();
      prev_k = k, prev_b = b, ++step;
      for (int s = 0; s < ns; ++s) prev_dx[s] = dx[s];
    }
  }
  finish_prev();
  for (int k = 0; k < pass.slabs; ++k)
    for (int s = 0; s < ns; ++s)
      for (int j = 0; j < std::min(k_slab, pass.nt - k * k_slab); ++j)
        _mm512_storeu_ps(out + std::size_t(k * k_slab + j) * out_stride + std::size_t(s) * k_x16_rows,
                         blocks > 1 ? _mm512_add_ps(_mm512_load_ps(acc[k][0][s][j]), _mm512_load_ps(acc[k][1][s][j]))
                                    : _mm512_add_ps(_mm512_load_ps(acc[k][0][s][j]), _mm512_setzero_ps()));
}

// `count` strips against tokens t0 .. t0 + nt - 1: passes of up to k_pass tokens, each over
// every strip pair.
template <bool q8>
void strips(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int count, const Q8Panel& panel, int t0,
            int nt, float* out, std::size_t out_stride) {
  const std::size_t strip_bytes = std::size_t(blocks) * (q8 ? k_q8_block_bytes : k_q4_block_bytes);
  configure_block_tiles();
  for (int t = 0; t < nt; t += k_pass) {
    const PassRows pass = pass_of(nt - t);  // A tiles come from panel.tile_codes, not the rows
    for (int s = 0; s < count; s += 2) {
      const std::uint8_t* c = codes + std::size_t(s) * strip_bytes;
      const std::uint16_t* sc = scales + std::size_t(s) * std::size_t(blocks) * k_x16_rows;
      float* o = out + std::size_t(t) * out_stride + std::size_t(s) * k_x16_rows;
      if (s + 1 < count) strips_pass<2, q8>(c, strip_bytes, sc, blocks, panel, t0 + t, pass, o, out_stride);
      else strips_pass<1, q8>(c, strip_bytes, sc, blocks, panel, t0 + t, pass, o, out_stride);
    }
  }
  _tile_release();
}

}  // namespace

void strip_q4_0_x16_amx(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int count, const Q8Panel& panel,
                        int t0, int nt, float* out, std::size_t out_stride) {
  if (nt < k_min_tokens_q4_0) return strip_q4_0_x16_avx512vnni(codes, scales, blocks, count, panel, t0, nt, out, out_stride);
  strips<false>(codes, scales, blocks, count, panel, t0, nt, out, out_stride);
}
void strip_q8_0_x16_amx(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int count, const Q8Panel& panel,
                        int t0, int nt, float* out, std::size_t out_stride) {
  if (nt < k_min_tokens_q8_0) return strip_q8_0_x16_avx512vnni(codes, scales, blocks, count, panel, t0, nt, out, out_stride);
  strips<true>(codes, scales, blocks, count, panel, t0, nt, out, out_stride);
}

}  // namespace trilemma::engine
