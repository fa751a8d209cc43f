// AMX-BF16 f16 rows (the `rows_amx` column of quant/kernel_table.cpp): f16 weight rows in ggml
// layout against the bf16 panel of f32 activations (quant/bf16_panel.hpp), any token count.
// Compiled with -mamx-tile -mamx-bf16 and AVX-512; called only when
// cpu_features().amx_bf16 (CPU, XCR0 and the kernel's permission all granted).
//
// Weights are the A tiles and tokens the B tiles: A = 16 rows x 32 elements, the rows as they
// lie in memory, converted in L1 to their bf16 halves (f16 -> f32, hi = the upper 16 bits,
// lo = the exact rest, whose lower 16 bits are zero); B = the panel's tiles; C = 16 rows x 16
// tokens of f32 sums, kept in the tile unit over the whole row (no per-block scales, unlike the
// integer formats). Per k-step, per C tile: C += A_hi B_hi, C += A_lo B_hi, C += A_hi B_lo.
//
// Batch invariance: a (row, token) sum is one column of one C tile, built by the same sequence of
// TDPBF16PS over the same k-steps whichever tokens and rows share the tile, so decode (one
// token, the others' columns ignored) and any batch give the same floats bit for bit. Against the f32 dot the products differ by <= 2^-14 |w x| each (the
// dropped lo x lo term; quant/bf16_panel.hpp), inside k_bf16_split_tolerance.
//
// More than 16 tokens: one strip of 16 rows against up to four 16-token slabs per pass (tiles
// 0-3 C, 4/5 A hi/lo, 6/7 B hi/lo), each strip's conversion serving 64 tokens. Up to 16 tokens:
// two strips against one slab, each with A tiles of its own (0/1 C, 2/3 and 4/5 A, 6/7 B), the B
// tiles loaded once per k-step. The matmul calls it only for prompts of 16 tokens or more
// (Matmul's Bits::any): one token runs faster on the FMA rows (docs/engine.md).
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "engine/quant/bf16_panel.hpp"
#include "engine/quant/kernels.hpp"
#include "engine/simd/amx/tile_config.hpp"

namespace trilemma::engine {
namespace {

constexpr int k_rows = 16;  // weight rows per strip: A's rows, C's rows
// The kernel reads 16-32 rows side by side, 64 bytes of each per k-step: more streams than the
// hardware prefetchers follow well, so each row's line this far ahead is asked for explicitly.
constexpr std::size_t k_prefetch_bytes = 1024;

void configure_float_tiles() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) cfg.rows[t] = 16, cfg.colsb[t] = 64;
  __asm__ volatile("ldtilecfg %0" : : "m"(cfg));  // see configure_block_tiles
}

// One strip's k-step as A tiles: row r's 32 f16 (fewer past n, zeros past `valid` rows) split
// into hi and lo bf16 rows.
struct alignas(64) StripStage {
  std::uint16_t hi[k_rows][32], lo[k_rows][32];
};

__attribute__((always_inline)) inline void stage_strip(const std::byte* w, std::size_t w_row_bytes, int valid, std::int64_t k0,
                                                       __mmask32 mask, const __m512i& pick_odd, StripStage& st) {
  const __m512i hi_mask = _mm512_set1_epi32(int(0xFFFF0000u));
#pragma GCC unroll 16
  for (int r = 0; r < k_rows; ++r) {
    if (r < valid) _mm_prefetch(reinterpret_cast<const char*>(w + std::size_t(r) * w_row_bytes) + 2 * k0 + k_prefetch_bytes, _MM_HINT_T0);
    const __m512i h16 = r < valid ? _mm512_maskz_loadu_epi16(mask, reinterpret_cast<const std::uint16_t*>(w + std::size_t(r) * w_row_bytes) + k0)
                                  : _mm512_setzero_si512();
    const __m512 a = _mm512_cvtph_ps(_mm512_castsi512_si256(h16)), b = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h16, 1));
    const __m512i ah = _mm512_and_si512(_mm512_castps_si512(a), hi_mask), bh = _mm512_and_si512(_mm512_castps_si512(b), hi_mask);
    const __m512i al = _mm512_castps_si512(_mm512_sub_ps(a, _mm512_castsi512_ps(ah)));
    const __m512i bl = _mm512_castps_si512(_mm512_sub_ps(b, _mm512_castsi512_ps(bh)));
    _mm512_store_si512(st.hi[r], _mm512_permutex2var_epi16(ah, pick_odd, bh));
    _mm512_store_si512(st.lo[r], _mm512_permutex2var_epi16(al, pick_odd, bl));
  }
}

// A stored C tile (16 rows x 16 tokens) to out: token j's `valid` rows at out + j * out_stride.
__attribute__((always_inline)) inline void scatter_sums(const float (&sums)[k_rows][16], float* out, std::size_t out_stride, int valid,
                                                        int tokens) {
  const __m512i column = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi32(16));
  const __mmask16 rows = valid >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << valid) - 1);
  for (int j = 0; j < tokens; ++j)
    _mm512_mask_storeu_ps(out + std::size_t(j) * out_stride, rows, _mm512_i32gather_ps(column, &sums[0][j], 4));
}
// The tile intrinsics name their registers by stringizing, hence macros.
#define TRILEMMA_STORE_C(c, out, valid, tokens) \
  do {                                          \
    alignas(64) float sums[k_rows][16];         \
    _tile_stored(c, sums, 64);                  \
    scatter_sums(sums, out, out_stride, valid, tokens); \
  } while (0)

// The three products of one k-step into C tile c: A in tiles 4/5, B in 6/7.
#define TRILEMMA_BF16X3(c)      \
  do {                          \
    _tile_dpbf16ps(c, 4, 6);    \
    _tile_dpbf16ps(c, 5, 6);    \
    _tile_dpbf16ps(c, 4, 7);    \
  } while (0)

// The mask of k-step s's elements (all 32 but in a short last step).
__attribute__((always_inline)) inline __mmask32 kstep_mask(const Bf16Panel& panel, std::int64_t s) {
  const std::int64_t left = std::min<std::int64_t>(k_bf16_kstep, panel.n - s * k_bf16_kstep);
  return left >= 32 ? ~__mmask32(0) : __mmask32((1u << left) - 1);
}

// One strip (rows valid of 16) against K slabs of tokens from slab g0; `last_tokens` in the last.
// Each k-step is staged one step ahead: a tile load straight after the stores that wrote its
// bytes waits for them to leave the store buffer.
template <int K>
void strip_slabs(const std::byte* w, std::size_t w_row_bytes, int valid, const Bf16Panel& panel, int g0, int last_tokens, float* out,
                 std::size_t out_stride, const __m512i& pick_odd) {
  StripStage stage[2];
  _tile_zero(0);
  if constexpr (K > 1) _tile_zero(1);
  if constexpr (K > 2) _tile_zero(2);
  if constexpr (K > 3) _tile_zero(3);
  stage_strip(w, w_row_bytes, valid, 0, kstep_mask(panel, 0), pick_odd, stage[0]);
  for (std::int64_t s = 0; s < panel.ksteps; ++s) {
    const StripStage& st = stage[s % 2];
    _tile_loadd(4, st.hi, 64);
    _tile_loadd(5, st.lo, 64);
#define TRILEMMA_SLAB(c)                              \
  if constexpr (K > c) {                              \
    _tile_loadd(6, panel.tile(g0 + c, s, 0), 64);     \
    _tile_loadd(7, panel.tile(g0 + c, s, 1), 64);     \
    TRILEMMA_BF16X3(c);                               \
  }
    TRILEMMA_SLAB(0) TRILEMMA_SLAB(1) TRILEMMA_SLAB(2) TRILEMMA_SLAB(3)
#undef TRILEMMA_SLAB
    if (s + 1 < panel.ksteps)
      stage_strip(w, w_row_bytes, valid, (s + 1) * k_bf16_kstep, kstep_mask(panel, s + 1), pick_odd, stage[(s + 1) % 2]);
  }
  const auto tokens = [&](int c) { return c == K - 1 ? last_tokens : k_bf16_slab; };
  TRILEMMA_STORE_C(0, out, valid, tokens(0));
  if constexpr (K > 1) TRILEMMA_STORE_C(1, out + 16 * out_stride, valid, tokens(1));
  if constexpr (K > 2) TRILEMMA_STORE_C(2, out + 32 * out_stride, valid, tokens(2));
  if constexpr (K > 3) TRILEMMA_STORE_C(3, out + 48 * out_stride, valid, tokens(3));
}

// S (1 or 2) strips (the last with `last_valid` rows) against one slab g of `tokens` tokens,
// staged one k-step ahead as above. Each strip has A tiles of its own (2/3 and 4/5; C in 0/1,
// B in 6/7), so one strip's loads need not wait for the other's products to read their tiles.
template <int S>
void strips_slab(const std::byte* w, std::size_t w_row_bytes, int last_valid, const Bf16Panel& panel, int g, int tokens, float* out,
                 std::size_t out_stride, const __m512i& pick_odd) {
  StripStage stage[2][S];
  _tile_zero(0);
  if constexpr (S > 1) _tile_zero(1);
  const auto valid = [&](int q) { return q == S - 1 ? last_valid : k_rows; };
  for (int q = 0; q < S; ++q)
    stage_strip(w + std::size_t(q * k_rows) * w_row_bytes, w_row_bytes, valid(q), 0, kstep_mask(panel, 0), pick_odd, stage[0][q]);
  for (std::int64_t s = 0; s < panel.ksteps; ++s) {
    const StripStage(&now)[S] = stage[s % 2];
    _tile_loadd(2, now[0].hi, 64);
    _tile_loadd(3, now[0].lo, 64);
    if constexpr (S > 1) {
      _tile_loadd(4, now[1].hi, 64);
      _tile_loadd(5, now[1].lo, 64);
    }
    _tile_loadd(6, panel.tile(g, s, 0), 64);
    _tile_loadd(7, panel.tile(g, s, 1), 64);
    _tile_dpbf16ps(0, 2, 6);
    if constexpr (S > 1) _tile_dpbf16ps(1, 4, 6);
    _tile_dpbf16ps(0, 3, 6);
    if constexpr (S > 1) _tile_dpbf16ps(1, 5, 6);
    _tile_dpbf16ps(0, 2, 7);
    if constexpr (S > 1) _tile_dpbf16ps(1, 4, 7);
    if (s + 1 < panel.ksteps)
      for (int q = 0; q < S; ++q)
        stage_strip(w + std::size_t(q * k_rows) * w_row_bytes, w_row_bytes, valid(q), (s + 1) * k_bf16_kstep, kstep_mask(panel, s + 1), pick_odd,
                    stage[(s + 1) % 2][q]);
  }
  TRILEMMA_STORE_C(0, out, valid(0), tokens);
  if constexpr (S > 1) TRILEMMA_STORE_C(1, out + k_rows, valid(1), tokens);
}

}  // namespace

void rows_f16_bf16_amx(const void* w, std::size_t w_row_bytes, int rows, const Bf16Panel& panel, int t0, int nt, float* out,
                       std::size_t out_stride) {
  const auto* wb = static_cast<const std::byte*>(w);
  const int strips = (rows + k_rows - 1) / k_rows, g0 = t0 / k_bf16_slab;
  const auto valid_of = [&](int strip) { return std::min(k_rows, rows - strip * k_rows); };
  const __m512i pick_odd = _mm512_load_si512(k_bf16_upper_words);
  configure_float_tiles();
  if (nt <= k_bf16_slab) {
    for (int q = 0; q < strips; q += 2) {
      const std::byte* wq = wb + std::size_t(q * k_rows) * w_row_bytes;
      float* o = out + std::size_t(q * k_rows);
      if (q + 1 < strips) strips_slab<2>(wq, w_row_bytes, valid_of(q + 1), panel, g0, nt, o, out_stride, pick_odd);
      else strips_slab<1>(wq, w_row_bytes, valid_of(q), panel, g0, nt, o, out_stride, pick_odd);
    }
  } else {
    for (int t = 0; t < nt; t += 4 * k_bf16_slab) {
      const int pass = std::min(4 * k_bf16_slab, nt - t), slabs = (pass + k_bf16_slab - 1) / k_bf16_slab;
      const int last_tokens = pass - (slabs - 1) * k_bf16_slab, g = g0 + t / k_bf16_slab;
      for (int q = 0; q < strips; ++q) {
        const std::byte* wq = wb + std::size_t(q * k_rows) * w_row_bytes;
        float* o = out + std::size_t(t) * out_stride + std::size_t(q * k_rows);
        switch (slabs) {
          case 4: strip_slabs<4>(wq, w_row_bytes, valid_of(q), panel, g, last_tokens, o, out_stride, pick_odd); break;
          case 3: strip_slabs<3>(wq, w_row_bytes, valid_of(q), panel, g, last_tokens, o, out_stride, pick_odd); break;
          case 2: strip_slabs<2>(wq, w_row_bytes, valid_of(q), panel, g, last_tokens, o, out_stride, pick_odd); break;
          default: strip_slabs<1>(wq, w_row_bytes, valid_of(q), panel, g, last_tokens, o, out_stride, pick_odd); break;
        }
      }
    }
  }
  _tile_release();
}

}  // namespace trilemma::engine
