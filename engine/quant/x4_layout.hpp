// "x4" run-time layout of a Q8_0 or Q4_0 matrix for the AVX-512 VNNI tiles: codes and scales
// split into two regions so every 64-byte code load is aligned (ggml's 34- and 18-byte blocks
// make most 64-byte loads straddle two cache lines, which cost ~20% of streaming speed), and
// codes regrouped by 4 blocks (128 weights) in the order the activation panel uses:
//   codes  [rows][groups]: q8_0: lo[64] = codes 0..15 of blocks 0..3, hi[64] = codes 16..31
//                          q4_0: qs[64] = ggml's 16 nibble bytes of blocks 0..3 in order
//                                (low nibble = code j, high nibble = code j + 16)
//   scales [rows][blocks]: fp16 d, after all the codes
// Same total bytes as ggml's layout. Kernel-private: made at load time, never written to
// files. REQUIRES cols % 128 == 0 (then each code row is a multiple of 64 bytes).
#pragma once
#include <cstddef>
#include <cstdint>

namespace trilemma::engine {

inline constexpr int k_x4_elems = 128;

// One row: codes to `codes` (n / 32 * code bytes per block), scales to `scales` (n / 32).
using PackRowFn = void (*)(const void* ggml_row, std::uint8_t* codes, std::uint16_t* scales, std::int64_t n);
void pack_row_q8_0_x4(const void* ggml_row, std::uint8_t* codes, std::uint16_t* scales, std::int64_t n);
void pack_row_q4_0_x4(const void* ggml_row, std::uint8_t* codes, std::uint16_t* scales, std::int64_t n);

// Where row r's parts are in an x4 matrix of `rows` rows of `row_bytes` (ggml size) and
// `blocks` blocks per row: codes first, scales after all codes.
inline std::size_t x4_code_bytes(std::size_t row_bytes, std::int64_t blocks) { return row_bytes - 2 * std::size_t(blocks); }

}  // namespace trilemma::engine
