// What the AMX strip kernels share (simd/amx/strip_amx.cpp for Q8_0 / Q4_0, strip_k_amx.cpp for
// Q4_K): the tile configuration (one block of 32 codes per multiply), the passes of token slabs,
// and the multiply / store steps. Include only from files compiled with -mamx-tile -mamx-int8.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace trilemma::engine {

inline constexpr int k_slab = 16;           // tokens per A tile: its 16 rows
inline constexpr int k_pass = 4 * k_slab;    // tokens whose sums a strip pair keeps at once
inline constexpr int k_pass_slabs = k_pass / k_slab;

// Palette 1. Tiles 0/1 and 6/7: C of strips 0/1 (16 tokens x 16 int32) for even and odd
// steps; 2/3: A of even and odd steps (16 tokens x 32 codes); 4/5: B of strips 0/1 (8 x 64 bytes).
struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {};
  std::uint8_t rows[16] = {};
};

inline void configure_block_tiles() {
  TileConfig cfg;
  for (int c : {0, 1, 6, 7}) cfg.rows[c] = k_slab, cfg.colsb[c] = 64;
  for (int a : {2, 3}) cfg.rows[a] = k_slab, cfg.colsb[a] = 32;
  for (int b : {4, 5}) cfg.rows[b] = 8, cfg.colsb[b] = 64;
  // Not _tile_loadconfig: GCC 12's wrapper declares an 8-byte memory operand, so the stores to
  // the rest of the 64-byte configuration can be dropped as dead (then tilezero faults, #UD).
  __asm__ volatile("ldtilecfg %0" : : "m"(cfg));
}

// Where a pass's token rows are: slab k's 16 activation rows start at rows[k] and are the
// activations' row stride apart.
struct PassRows {
  const std::byte* rows[k_pass_slabs];
  int slabs = 0, nt = 0;  // slabs, and tokens in all of them
};

// How many tokens and slabs the pass of up to k_pass tokens out of `left` holds (rows unset).
inline PassRows pass_of(int left) {
  PassRows pass;
  pass.nt = std::min(k_pass, left);
  pass.slabs = (pass.nt + k_slab - 1) / k_slab;
  return pass;
}

// The pass of up to k_pass tokens from token `first` of `left` (rows `stride` bytes apart from
// `rows`). A short last slab is copied into `padded`, 16 rows with zeros after the tokens, so
// every A tile loads 16 readable rows.
inline PassRows make_pass(const std::byte* rows, std::size_t stride, int first, int left, std::vector<std::byte>& padded) {
  PassRows pass = pass_of(left);
  for (int k = 0; k < pass.slabs; ++k) {
    const int tokens = std::min(k_slab, pass.nt - k * k_slab);
    const std::byte* row = rows + std::size_t(first + k * k_slab) * stride;
    if (tokens < k_slab) {
      padded.assign(std::size_t(k_slab) * stride, std::byte{0});
      std::memcpy(padded.data(), row, std::size_t(tokens) * stride);
      row = padded.data();
    }
    pass.rows[k] = row;
  }
  return pass;
}

}  // namespace trilemma::engine

// One step of the strip kernels: A (tile A) <- 16 token rows at `src`, `stride` bytes apart;
// C0 = A x B (tile 4) and, for a strip pair (a constexpr `ns` of 2 in the caller), C1 = A x B
// (tile 5), by DP (_tile_dpbssd: signed codes; _tile_dpbsud: unsigned weights). The tile
// intrinsics name their registers by stringizing, hence macros.
#define TRILEMMA_AMX_MULTIPLY(DP, A, C0, C1, src, stride) \
  do {                                                    \
    _tile_loadd(A, (src), (stride));                      \
    _tile_zero(C0);                                       \
    DP(C0, A, 4);                                         \
    if constexpr (ns == 2) {                              \
      _tile_zero(C1);                                     \
      DP(C1, A, 5);                                       \
    }                                                     \
  } while (0)
// C0 (and C1) to sums[0] (and sums[1]), 16 rows of 64 bytes each.
#define TRILEMMA_AMX_STORE(C0, C1, sums)                     \
  do {                                                       \
    _tile_stored(C0, (sums)[0], 64);                         \
    if constexpr (ns == 2) _tile_stored(C1, (sums)[1], 64);  \
  } while (0)
