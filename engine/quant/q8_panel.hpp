// Activations packed for the x4 tiles (simd/avx512/tile_avx512vnni.cpp): Q8_0 rows regrouped
// by 4 blocks in the x4 code order (x4_layout.hpp), with what the tiles need precomputed once
// per token instead of once per weight row. Per token and group g of 4 blocks:
//   s8   [128]  codes: lo = codes 0..15 of blocks 0..3, then hi = codes 16..31
//   u8   [128]  the same + 128 as unsigned bytes (the sign bit flipped)
//   init [16]   int32 lane 4k + i: -8 * (codes 4i..4i+3 + codes 16+4i..16+4i+3 of block k), the
//               Q4_0 zero point of exactly the codes vpdpbusd sums into that lane, so the
//               unsigned-nibble tile leaves the lanes of the signed one (bit-identical floats)
//   dy   [4]    float scales of the 4 blocks
//   zero [4]    int32 -8 * (sum of block k's codes): the Q4_0 zero point of a whole block, for
//               the x16 strips (x16_layout.hpp), whose lanes hold whole rows
// 356 bytes per 128 activations; a kernel touches only what it uses (Q8_0: u8 + dy, Q4_0 tile:
// s8 + init + dy, Q4_0 strip: s8 + zero + dy), which for 8 tokens of a 5632-wide row stays
// within L2.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trilemma::engine {

struct Q8Panel {
  int tokens = 0;
  std::int64_t groups = 0;
  std::vector<std::int8_t> s8;
  std::vector<std::uint8_t> u8;
  std::vector<std::int32_t> init;
  std::vector<float> dy;
  std::vector<std::int32_t> zero;
  // The codes again, block-major: block b's 32 codes of token t at tile_codes_of(b, t), the
  // tokens of a block back to back (tile_tokens = tokens + 15 slots, the ones past `tokens`
  // unspecified). An AMX tile of 16 tokens is then 512 contiguous bytes
  // (simd/amx/strip_amx.cpp); loaded from the rows, 16 or 32 lines apart, it cost the Q4_0 and
  // Q8_0 strips 6-15% (strip_bench).
  int tile_tokens = 0;
  std::vector<std::int8_t> tile_codes;
  // The Q8_0 rows the panel was packed from (token t at rows + t * row_stride), alive while the
  // kernels run.
  const std::byte* rows = nullptr;
  std::size_t row_stride = 0;

  const std::int8_t* s8_of(int t) const { return s8.data() + std::size_t(t) * std::size_t(groups) * 128; }
  const std::uint8_t* u8_of(int t) const { return u8.data() + std::size_t(t) * std::size_t(groups) * 128; }
  const std::int32_t* init_of(int t) const { return init.data() + std::size_t(t) * std::size_t(groups) * 16; }
  const float* dy_of(int t) const { return dy.data() + std::size_t(t) * std::size_t(groups) * 4; }
  std::int8_t* tile_codes_of(std::int64_t b, int t) { return tile_codes.data() + (std::size_t(b) * std::size_t(tile_tokens) + std::size_t(t)) * 32; }
  const std::int8_t* tile_codes_of(std::int64_t b, int t) const {
    return tile_codes.data() + (std::size_t(b) * std::size_t(tile_tokens) + std::size_t(t)) * 32;
  }
};

// Sizes the panel for `tokens` rows of `blocks` Q8_0 blocks. REQUIRES blocks % 4 == 0.
void resize_q8_panel(Q8Panel& panel, int tokens, std::int64_t blocks);
// Packs one Q8_0 row as token t (tokens may be packed concurrently).
void pack_q8_panel_token(const std::byte* row, int t, Q8Panel& panel);
// Its AVX-512 twin, the same bytes (engine/simd/avx512/q8_panel_avx512.cpp; x86-64 builds only,
// AVX-512 F/BW/VL CPUs only).
void pack_q8_panel_token_avx512(const std::byte* row, int t, Q8Panel& panel);
// Both, for `tokens` rows `stride` bytes apart.
void pack_q8_panel(const std::byte* rows, std::size_t stride, int tokens, std::int64_t blocks, Q8Panel& out);

}  // namespace trilemma::engine
