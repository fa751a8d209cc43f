// f32 activations split into two bf16 halves and laid out as the B tiles of the AMX-BF16 float
// kernels (simd/amx/rows_f16_amx.cpp), packed once per token per matmul input.
//
// Why two halves: a bf16 keeps 8 significant bits. x = hi + lo + e with hi = x truncated to
// bf16 and lo = bf16(x - hi) rounded to nearest even, so |e| <= 2^-16 |x|; an f16 weight splits
// the same way with e = 0 (its 11 bits fit in hi's 8 and lo's 3). The kernels sum
// w_hi x_hi + w_lo x_hi + w_hi x_lo in f32, dropping only w_lo x_lo (<= 2^-14 |w x|): closer to
// the f32 dot than llama.cpp's f16 path, which rounds the activations to f16 (2^-11).
//
// Layout: tokens in slabs of 16 (a tile's 16 columns), elements in k-steps of 32 (a tile's 16
// rows of 2). Tile (slab g, k-step s, half h) is 512 uint16: row p holds, for token j of the
// slab, elements 2p and 2p + 1 of the k-step at [p * 32 + j * 2 + i], the pair order TDPBF16PS
// reads ("2 bf16 per column"). Elements past n are zero, so a short last k-step adds nothing;
// token slots past `tokens` are left as they are (their columns are never stored).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace trilemma::engine {

inline constexpr int k_bf16_slab = 16;   // tokens per B tile
inline constexpr int k_bf16_kstep = 32;  // elements per k-step: a tile row's 16 pairs
// |kernel - f32 dot| <= this x sum |w_i x_i| for the split kernels: 2^-14 per product (the
// dropped lo x lo term) plus the f32 accumulation's rounding.
inline constexpr float k_bf16_split_tolerance = 1e-4f;

struct Bf16Panel {
  int tokens = 0, slabs = 0;
  std::int64_t n = 0, ksteps = 0;
  std::vector<std::uint16_t> data;

  std::size_t tile_index(int slab, std::int64_t kstep, int half) const {
    return ((std::size_t(slab) * std::size_t(ksteps) + std::size_t(kstep)) * 2 + std::size_t(half)) * 512;
  }
  const std::uint16_t* tile(int slab, std::int64_t kstep, int half) const { return data.data() + tile_index(slab, kstep, half); }
  std::uint16_t* tile(int slab, std::int64_t kstep, int half) { return data.data() + tile_index(slab, kstep, half); }
};

// The VPERMT2W index that keeps the upper 16 bits of 32 f32 lanes held in two registers (a, b):
// word w of the result = word 2w + 1 of (a, b). The SIMD packers and the kernel turn split f32
// halves into bf16 rows with it.
alignas(64) inline constexpr std::uint16_t k_bf16_upper_words[32] = {
    1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 59, 61, 63};

// The split of one f32, bit for bit what every packer writes.
inline std::uint32_t bf16_bits_of(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  return b;
}
inline std::uint16_t bf16_hi(float x) { return std::uint16_t(bf16_bits_of(x) >> 16); }  // truncated
inline std::uint16_t bf16_lo(float x) {
  const std::uint32_t hi = bf16_bits_of(x) & 0xFFFF0000u;
  float hf;
  std::memcpy(&hf, &hi, 4);
  const std::uint32_t lo = bf16_bits_of(x - hf);  // exact: hi and x share sign and exponent range
  return std::uint16_t((lo + 0x7FFFu + ((lo >> 16) & 1u)) >> 16);  // round to nearest even
}

// Sizes the panel for `tokens` tokens of n elements (contents of new slots zero).
void resize_bf16_panel(Bf16Panel& panel, int tokens, std::int64_t n);
// Packs token t's n f32 activations (tokens may be packed concurrently).
void pack_bf16_panel_token(const float* x, int t, Bf16Panel& panel);
// Its AVX-512 twin, the same bytes (engine/simd/avx512/bf16_panel_avx512.cpp; x86-64 builds
// only, AVX-512 F/BW CPUs only).
void pack_bf16_panel_token_avx512(const float* x, int t, Bf16Panel& panel);

}  // namespace trilemma::engine
