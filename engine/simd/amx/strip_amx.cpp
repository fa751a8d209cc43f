// AMX-INT8 strip kernels: the x16 strips (quant/x16_layout.hpp) of the AVX-512 VNNI kernels
// (simd/avx512/strip_avx512vnni.cpp), multiplied on the tile unit. Compiled with -mamx-tile
// -mamx-int8 and AVX-512; called only when cpu_features().amx_int8 (CPU, XCR0 and the kernel's
// permission all granted).
//
// One TDPBSSD multiplies a block (32 codes) of up to 16 tokens by the same block of 16 weight rows:
//   A (tokens): 16 rows x 32 bytes, token j's codes loaded straight from its Q8_0 row
//               (panel.rows: 32 contiguous codes per 34-byte block);
//   B (weights): 8 rows x 64 bytes, row q = the x16 layout's zmm q of a Q8_0 block (lane r: row
//               r's codes 4q..4q+3), exactly the "4 bytes per column" order TDPBSSD reads.
//   C: 16 tokens x 16 rows of exact int32 block dots, stored, then scaled by the vector units.
// Two strips share each A tile; the next block's A and B load into a second set of tiles while
// this block multiplies. Q4_0 strips are widened first to that Q8_0 form (nibble - 8), a few
// strips at a time into a per-thread buffer that stays in L2 while every token slab passes.
// The block's scales are applied as in the VNNI kernel, to the same int32 sums, in the same
// order (convert, 16 row scales x the token's scale, FMA into the even or odd chain): the
// results equal the VNNI kernel's bit for bit, so decode (which stays on VNNI below a few tokens)
// and an AMX prefill agree exactly.
//
// Measured (strip_bench, one thread, 5632 x 2048 and 2048 x 5632, 64 tokens, 2-vCPU Xeon):
// AMX/VNNI 2.0x for Q8_0, 1.35-1.4x for Q4_0 (its widening is a fifth of the time). The scaling
// is about half of the rest: one convert, multiply and FMA per 16 outputs per block, which the
// tile unit's per-block stores make unavoidable while the blocks keep their own scales.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "engine/quant/blocks.hpp"
#include "engine/quant/kernels.hpp"
#include "engine/quant/q8_panel.hpp"
#include "engine/quant/x16_layout.hpp"

namespace trilemma::engine {
namespace {

constexpr std::size_t k_q8_block_bytes = 512;  // one Q8_0 block of 16 rows in the x16 layout
constexpr int k_slab = 16;                      // tokens per A tile: its 16 rows
// Below this many tokens the VNNI strips are faster (strip_bench, 5632 x 2048, one thread: Q8_0
// AMX/VNNI 0.96x at 1 token, 1.7x at 4; Q4_0, whose strips are widened first, 0.69x at 8 tokens,
// 1.07x at 16, 1.4x at 64).
constexpr int k_min_tokens_q8_0 = 2, k_min_tokens_q4_0 = 16;
// Blocks ahead of the tile loads that the weights are prefetched into L1.
constexpr std::int64_t k_ahead = 4;
// Widened Q4_0 strips per group: 512 KiB of Q8_0 codes stay in L2 (2 MiB per core on the
// AMX hosts) while the token slabs pass.
constexpr std::size_t k_group_bytes = 512 << 10;

// Palette 1. Tiles 0/1: C of strips 0/1 (nt x 16 int32); 2/3: A of even/odd blocks (nt tokens x
// 32 codes); 4/5 and 6/7: B of strips 0/1 for even/odd blocks (8 x 64 bytes).
struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {};
  std::uint8_t rows[16] = {};
};

void configure(int nt) {
  TileConfig cfg;
  for (int c : {0, 1}) cfg.rows[c] = std::uint8_t(nt), cfg.colsb[c] = 64;
  for (int a : {2, 3}) cfg.rows[a] = std::uint8_t(nt), cfg.colsb[a] = 32;
  for (int b : {4, 5, 6, 7}) cfg.rows[b] = 8, cfg.colsb[b] = 64;
  // Not _tile_loadconfig: GCC 12's wrapper declares an 8-byte memory operand, so the stores to
  // the rest of the 64-byte configuration can be dropped as dead (then tilezero faults, #UD).
  __asm__ volatile("ldtilecfg %0" : : "m"(cfg));
}

template <int ns>
using BlockSums = std::int32_t[ns][k_slab][16];  // [strip][token][row]: one block's exact dots

// acc[s][j] += the block's int32 dots c[s][j] x (16 row scales x token j's scale): the VNNI
// kernel's float steps, in its order.
template <int ns>
__attribute__((always_inline)) inline void finish(const BlockSums<ns>& c, const std::uint16_t* const (&scales)[ns], std::int64_t b,
                                                  const Q8Panel& panel, int t0, int nt, float (&acc)[ns][k_slab][16]) {
  const std::int64_t g = b / 4, k = b % 4;
  const float* dy = panel.dy.data() + (std::size_t(t0) * std::size_t(panel.groups) + std::size_t(g)) * 4 + std::size_t(k);
  const std::size_t dy_stride = std::size_t(panel.groups) * 4;
#pragma GCC unroll 2
  for (int s = 0; s < ns; ++s) {
    const __m512 dx = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales[s] + 16 * b)));
#pragma GCC unroll 4
    for (int j = 0; j < nt; ++j) {
      const __m512 sc = _mm512_mul_ps(dx, _mm512_set1_ps(dy[std::size_t(j) * dy_stride]));
      _mm512_store_ps(acc[s][j], _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(c[s][j])), sc, _mm512_load_ps(acc[s][j])));
    }
  }
}

// Block b's activations into tile A, its weights of strip 0/1 into B0/B1. The tile intrinsics
// name their registers by stringizing, hence macros.
#define TRILEMMA_AMX_LOAD(A, B0, B1, b)                                      \
  do {                                                                      \
    _tile_loadd(A, a + sizeof(BlockQ8_0) * std::size_t(b), a_stride);       \
    _tile_loadd(B0, w[0] + k_q8_block_bytes * std::size_t(b), 64);          \
    if constexpr (ns == 2) _tile_loadd(B1, w[1] + k_q8_block_bytes * std::size_t(b), 64); \
  } while (0)
#define TRILEMMA_AMX_MULTIPLY(A, B0, B1)        \
  do {                                         \
    _tile_zero(0);                             \
    _tile_dpbssd(0, A, B0);                    \
    if constexpr (ns == 2) {                   \
      _tile_zero(1);                           \
      _tile_dpbssd(1, A, B1);                  \
    }                                          \
  } while (0)
#define TRILEMMA_AMX_STORE(sums)                               \
  do {                                                        \
    _tile_stored(0, (sums)[0], 64);                           \
    if constexpr (ns == 2) _tile_stored(1, (sums)[1], 64);    \
  } while (0)

// `ns` (1 or 2) strips of Q8_0 codes in the x16 layout (`strip_bytes` apart) against tokens
// t0 .. t0 + nt - 1 (tiles configured for nt rows). Pipelined: block b + 1's operands load
// (into the other A/B tiles) while block b is multiplied, and block b - 1's stored sums are
// scaled meanwhile, so no stage waits on the one just issued.
template <int ns>
void slab(const std::uint8_t* codes, std::size_t strip_bytes, const std::uint16_t* scales, std::int64_t blocks, const Q8Panel& panel,
          int t0, int nt, float* out, std::size_t out_stride) {
  alignas(64) float acc[2][ns][k_slab][16];  // [even/odd block][strip][token][row]
  std::memset(acc, 0, sizeof acc);
  alignas(64) BlockSums<ns> sums[2];
  const std::uint8_t* w[ns];
  const std::uint16_t* sc[ns];
  for (int s = 0; s < ns; ++s) w[s] = codes + std::size_t(s) * strip_bytes, sc[s] = scales + std::size_t(s) * std::size_t(blocks) * k_x16_rows;
  const std::byte* a = panel.rows + std::size_t(t0) * panel.row_stride + offsetof(BlockQ8_0, qs);
  const auto a_stride = long(panel.row_stride);
  TRILEMMA_AMX_LOAD(2, 4, 5, 0);
  for (std::int64_t b = 0; b < blocks; ++b) {
    // Tile loads wait on L2 (the strips' group lives there): fetch the weights k_ahead blocks ahead into L1.
    if (b + k_ahead < blocks)
      for (int s = 0; s < ns; ++s)
#pragma GCC unroll 8
        for (int line = 0; line < 8; ++line) _mm_prefetch(reinterpret_cast<const char*>(w[s] + k_q8_block_bytes * std::size_t(b + k_ahead)) + 64 * line, _MM_HINT_T0);
    if (b % 2 == 0) {
      if (b + 1 < blocks) TRILEMMA_AMX_LOAD(3, 6, 7, b + 1);
      TRILEMMA_AMX_MULTIPLY(2, 4, 5);
    } else {
      if (b + 1 < blocks) TRILEMMA_AMX_LOAD(2, 4, 5, b + 1);
      TRILEMMA_AMX_MULTIPLY(3, 6, 7);
    }
    TRILEMMA_AMX_STORE(sums[b % 2]);
    if (b >= 1) finish<ns>(sums[(b - 1) % 2], sc, b - 1, panel, t0, nt, acc[(b - 1) % 2]);
  }
  finish<ns>(sums[(blocks - 1) % 2], sc, blocks - 1, panel, t0, nt, acc[(blocks - 1) % 2]);
  for (int s = 0; s < ns; ++s)
    for (int j = 0; j < nt; ++j)
      _mm512_storeu_ps(out + std::size_t(j) * out_stride + std::size_t(s) * k_x16_rows,
                       _mm512_add_ps(_mm512_load_ps(acc[0][s][j]), _mm512_load_ps(acc[1][s][j])));
}
#undef TRILEMMA_AMX_LOAD
#undef TRILEMMA_AMX_MULTIPLY
#undef TRILEMMA_AMX_STORE

// A Q4_0 strip's codes (256 bytes per block: zmm q holds rows' bytes 4q..4q+3, low nibbles =
// codes 4q.., high = codes 16 + 4q..) as the Q8_0 strip of the same values: zmm q <- low
// nibbles of q, zmm 4 + q <- high nibbles of q, each minus 8.
void widen_q4_0_strip(const std::uint8_t* q4, std::int64_t blocks, std::uint8_t* q8) {
  const __m512i low4 = _mm512_set1_epi8(0x0F), eight = _mm512_set1_epi8(8);
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::uint8_t* src = q4 + 256 * std::size_t(b);
    std::uint8_t* dst = q8 + k_q8_block_bytes * std::size_t(b);
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
      const __m512i v = _mm512_load_si512(src + 64 * q);
      _mm512_store_si512(dst + 64 * q, _mm512_sub_epi8(_mm512_and_si512(v, low4), eight));
      _mm512_store_si512(dst + 64 * (4 + q), _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(v, 4), low4), eight));
    }
  }
}

// `count` strips against tokens t0 .. t0 + nt - 1: groups of strips (widened when Q4_0) that
// every token slab passes over before the next group.
template <bool q8>
void strips(const std::uint8_t* codes, const std::uint16_t* scales, std::int64_t blocks, int count, const Q8Panel& panel, int t0,
            int nt, float* out, std::size_t out_stride) {
  const std::size_t wide_bytes = std::size_t(blocks) * k_q8_block_bytes;
  const std::size_t strip_bytes = q8 ? wide_bytes : wide_bytes / 2;
  // Even, so the strips pair up for slab<2> (a matrix's strip count is even but for tiny ones).
  const int per_group = int(std::max<std::size_t>(2, (k_group_bytes / wide_bytes + 1) / 2 * 2));
  thread_local std::vector<std::uint8_t> wide_buffer;  // per worker thread, reused across calls
  std::uint8_t* wide = nullptr;
  if constexpr (!q8) {
    const std::size_t need = wide_bytes * std::size_t(std::min(per_group, count)) + 64;
    if (wide_buffer.size() < need) wide_buffer.resize(need);
    wide = wide_buffer.data() + (64 - reinterpret_cast<std::uintptr_t>(wide_buffer.data()) % 64) % 64;
  }
  int configured = 0;
  for (int s0 = 0; s0 < count; s0 += per_group) {
    const int s1 = std::min(count, s0 + per_group);
    if constexpr (!q8)
      for (int s = s0; s < s1; ++s) widen_q4_0_strip(codes + std::size_t(s) * strip_bytes, blocks, wide + std::size_t(s - s0) * wide_bytes);
    for (int t = 0; t < nt; t += k_slab) {
      const int m = std::min(k_slab, nt - t);
      if (m != configured) configure(m), configured = m;
      for (int s = s0; s < s1; s += 2) {
        const std::uint8_t* c = q8 ? codes + std::size_t(s) * strip_bytes : wide + std::size_t(s - s0) * wide_bytes;
        const std::uint16_t* sc = scales + std::size_t(s) * std::size_t(blocks) * k_x16_rows;
        float* o = out + std::size_t(t) * out_stride + std::size_t(s) * k_x16_rows;
        if (s + 1 < s1) slab<2>(c, q8 ? strip_bytes : wide_bytes, sc, blocks, panel, t0 + t, m, o, out_stride);
        else slab<1>(c, q8 ? strip_bytes : wide_bytes, sc, blocks, panel, t0 + t, m, o, out_stride);
      }
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
