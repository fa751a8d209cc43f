// AMX-INT8 strip kernel for Q4_K: the x16 strips of the VNNI kernel
// (simd/avx512/strip_k_avx512vnni.cpp) with each sub-block's integer dots on the tile unit.
// Compiled with -mamx-tile -mamx-int8, AVX-512 and -ffp-contract=off; called only when
// cpu_features().amx_int8 (CPU, XCR0 and the kernel's permission all granted).
//
// One TDPBSUD multiplies a sub-block (32 codes) of up to 16 tokens by the same sub-block of 16 rows:
//   A (tokens, signed): 16 rows x 32 bytes, straight from the tokens' Q8_K rows (panel.rows);
//   B (weights, unsigned): 8 rows x 64 bytes, the x16 vectors of the sub-block's chunk with the
//               low or high nibbles kept (lane r: row r's codes 4p..4p+3), widened in L1;
//   C: 16 tokens x 16 rows of exact int32 sub-block dots, stored, then multiplied by the rows'
//               6-bit scales into the super-block's integer sums by the vector units.
// Sub-blocks run outermost for a pair of strips: each B tile serves every 16-token slab of a pass
// of up to 64 tokens, and a step's products are stored while the previous step's are scaled.
// At the end of a super-block the float step is the VNNI kernel's (q4_k_strip_step.hpp) on the
// same integer sums: the results equal the VNNI kernel's, and the `_ref` dot's, bit for bit.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "engine/quant/blocks.hpp"
#include "engine/quant/kernels.hpp"
#include "engine/quant/q8_panel.hpp"
#include "engine/quant/x16_layout.hpp"
#include "engine/simd/amx/tile_config.hpp"
#include "engine/simd/avx512/q4_k_strip_step.hpp"

namespace trilemma::engine {
namespace {

// Below this many tokens the VNNI strips run instead (tuned with strip_bench).
constexpr int k_min_tokens = 16;

template <int ns>
using SlabInts = std::int32_t[ns][k_slab][16];  // [strip][token][row]
template <int ns>
using SlabFloats = float[ns][k_slab][16];

// `ns` (1 or 2) strips against the pass's tokens.
template <int ns>
void strips_pass(const std::uint8_t* codes, std::size_t strip_bytes, const std::uint16_t* scales, std::size_t strip_scales,
                 std::int64_t supers, const PassRows& pass, std::size_t stride, float* out, std::size_t out_stride) {
  alignas(64) SlabFloats<ns> acc[k_pass_slabs];
  alignas(64) SlabInts<ns> sums[k_pass_slabs];
  alignas(64) SlabInts<ns> dots[2];
  alignas(64) std::uint8_t wide[ns][512];
  const long a_stride = long(stride);
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const auto tokens_of = [&](int k) { return std::min(k_slab, pass.nt - k * k_slab); };
  for (std::int64_t s = 0; s < supers; ++s) {
    // The super-block's scales of each strip (spilled: only one sub-block's are live at a time).
    alignas(64) std::int32_t sc[ns][8][16];
    for (int i = 0; i < ns; ++i) {
      const Q4KStripScales scale(scales + std::size_t(i) * strip_scales + std::size_t(s) * k_q4_k_strip_scales);
      for (int j = 0; j < 8; ++j) _mm512_store_si512(sc[i][j], scale.sc[j]);
    }
    // The step before: its slab and sub-block, scaled once the next step is multiplied.
    int prev_k = -1, prev_j = 0;
    unsigned step = 0;  // steps so far in this super-block: tiles and dots alternate by its parity
    const auto finish_prev = [&] {
      const SlabInts<ns>& d = dots[(step - 1) % 2];
      for (int i = 0; i < ns; ++i) {
        const __m512i scale = _mm512_load_si512(sc[i][prev_j]);
        for (int t = 0; t < tokens_of(prev_k); ++t) {
          const __m512i v = _mm512_mullo_epi32(_mm512_load_si512(d[i][t]), scale);
          _mm512_store_si512(sums[prev_k][i][t], prev_j == 0 ? v : _mm512_add_epi32(_mm512_load_si512(sums[prev_k][i][t]), v));
        }
      }
    };
    for (int j = 0; j < 8; ++j) {
      const int c = j / 2, h = j % 2;
      for (int i = 0; i < ns; ++i) {
        const std::uint8_t* chunk = codes + std::size_t(i) * strip_bytes + std::size_t(s) * k_q4_k_strip_codes + 512 * std::size_t(c);
#pragma GCC unroll 8
        for (int p = 0; p < 8; ++p) {
          const __m512i v = _mm512_load_si512(chunk + 64 * p);
          _mm512_store_si512(wide[i] + 64 * p, _mm512_and_si512(h == 0 ? v : _mm512_srli_epi16(v, 4), low4));
        }
        if (i == 0) _tile_loadd(4, wide[0], 64);
        else _tile_loadd(5, wide[1], 64);
      }
      const std::size_t a_offset = std::size_t(s) * sizeof(BlockQ8K) + offsetof(BlockQ8K, qs) + 32 * std::size_t(j);
      for (int k = 0; k < pass.slabs; ++k) {
        if (step % 2 == 0) {
          TRILEMMA_AMX_MULTIPLY(_tile_dpbsud, 2, 0, 1, pass.rows[k] + a_offset, a_stride);
          TRILEMMA_AMX_STORE(0, 1, dots[0]);
        } else {
          TRILEMMA_AMX_MULTIPLY(_tile_dpbsud, 3, 6, 7, pass.rows[k] + a_offset, a_stride);
          TRILEMMA_AMX_STORE(6, 7, dots[1]);
        }
        if (prev_k >= 0) finish_prev();
        prev_k = k, prev_j = j, ++step;
      }
    }
    finish_prev();
    // The super-block's float step, token by token: the VNNI kernel's.
    for (int i = 0; i < ns; ++i) {
      const Q4KStripScales scale(scales + std::size_t(i) * strip_scales + std::size_t(s) * k_q4_k_strip_scales);
      for (int k = 0; k < pass.slabs; ++k)
        for (int t = 0; t < tokens_of(k); ++t) {
          const auto& y = reinterpret_cast<const BlockQ8K*>(pass.rows[k] + std::size_t(t) * stride)[s];
          const __m512 v = scale.step(_mm512_load_si512(sums[k][i][t]), y);
          _mm512_store_ps(acc[k][i][t], s == 0 ? _mm512_add_ps(_mm512_setzero_ps(), v) : _mm512_add_ps(_mm512_load_ps(acc[k][i][t]), v));
        }
    }
  }
  for (int k = 0; k < pass.slabs; ++k)
    for (int i = 0; i < ns; ++i)
      for (int t = 0; t < tokens_of(k); ++t)
        _mm512_storeu_ps(out + std::size_t(k * k_slab + t) * out_stride + std::size_t(i) * k_x16_rows, _mm512_load_ps(acc[k][i][t]));
}

}  // namespace

void strip_q4_k_x16_amx(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int count, const Q8Panel& panel,
                        int t0, int nt, float* out, std::size_t out_stride) {
  if (nt < k_min_tokens) return strip_q4_k_x16_avx512vnni(codes, scales, blocks, count, panel, t0, nt, out, out_stride);
  const std::int64_t supers = blocks / 8;
  const std::size_t strip_bytes = std::size_t(supers) * k_q4_k_strip_codes, strip_scales = std::size_t(supers) * k_q4_k_strip_scales;
  const std::size_t stride = panel.row_stride;
  thread_local std::vector<std::byte> padded;  // per worker thread, reused across calls
  configure_block_tiles();
  for (int t = 0; t < nt; t += k_pass) {
    const PassRows pass = make_pass(panel.rows, stride, t0 + t, nt - t, padded);
    for (int s = 0; s < count; s += 2) {
      const std::uint8_t* c = codes + std::size_t(s) * strip_bytes;
      const std::uint16_t* sc = scales + std::size_t(s) * strip_scales;
      float* o = out + std::size_t(t) * out_stride + std::size_t(s) * k_x16_rows;
      if (s + 1 < count) strips_pass<2>(c, strip_bytes, sc, strip_scales, supers, pass, stride, o, out_stride);
      else strips_pass<1>(c, strip_bytes, sc, strip_scales, supers, pass, stride, o, out_stride);
    }
  }
  _tile_release();
}

}  // namespace trilemma::engine
