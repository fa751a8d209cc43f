// "x16" run-time layout of a Q4_0 or Q8_0 matrix for the AVX-512 VNNI strip kernel
// (simd/avx512/strip_avx512vnni.cpp): rows in strips of 16, interleaved 4 codes at a time, so one
// 64-byte load holds the same 4 codes (Q4_0: 4 + 4) of 16 rows and one vpdpbusd against a
// broadcast 4-byte piece of the activation block advances 16 row dots at once. The int32 lanes
// then hold whole rows, and a block's conversion to float and its scale cost one instruction each
// per 16 rows (the x4 tile spends them per row: lanes hold 4 partial sums of 4 blocks of one row).
//   codes  Q4_0: [strips][blocks][4][16 rows][4 bytes]: zmm k of a block, lane r = row r's ggml
//          bytes 4k..4k+3 (low nibbles: codes 4k..4k+3, high nibbles: codes 16+4k..16+4k+3)
//          Q8_0: [strips][blocks][8][16 rows][4 bytes]: zmm k, lane r = row r's codes 4k..4k+3
//   scales [strips][blocks][16]: fp16 d of the block in rows 0..15, after all the codes
//   Q4_K (super-blocks of 256, simd/avx512/strip_k_avx512vnni.cpp): the same 2 bytes per 32
//          weights split the same way. Codes [strips][super-blocks][4 chunks][8][16 rows][4 bytes]:
//          vector p of chunk c, lane r = row r's ggml bytes 32c + 4p..32c + 4p + 3 (low nibbles:
//          codes 64c + 4p.., sub-block 2c; high nibbles: 64c + 32 + 4p.., sub-block 2c + 1).
//          The "scales" of a super-block, 16 rows x 16 bytes: fp16 d [16], fp16 dmin [16], then
//          three vectors of 6-bit fields, lane r = row r's values 5v..5v + 4 (values 0-7 the
//          sub-block scales, 8-15 the mins) at bits 6i, and 2 bits of value 15 at bits 30-31
//          (bits 2v, 2v + 1 of it), so a shift and a mask give a value in every lane.
//   Q6_K (super-blocks of 256, 6-bit codes, an int8 scale per 16): 210 bytes per row and
//          super-block, of which the "scales" region holds 16 and the codes region 194. Codes
//          [strips][super-blocks][2 halves][24][16 rows][4 bytes]: per half h, vectors 0-15 of
//          ggml's ql bytes 64h + 4p.., then vectors 16-23 of its qh bytes 32h + 4p.. (as ggml
//          spreads them: ql p and 8 + p with qh p give codes 4p.. of the half's four quarters);
//          then, after every super-block's codes, fp16 d [super-blocks][16 rows]. Scales
//          [strips][super-blocks][8][16 rows][2]: lane r of vector k = row r's scales 2k, 2k + 1,
//          int16 pairs once sign-extended (one vpmovsxbw) for vpdpwssd.
// Same total bytes as ggml's layout. Kernel-private: made at load time, never written to files.
// REQUIRES rows % 16 == 0 and cols % 128 == 0 (the Q8 panel's groups of 4 blocks; 256 for the k-quants).
#pragma once
#include <cstddef>
#include <cstdint>

namespace trilemma::engine {

inline constexpr int k_x16_rows = 16;

// 16 consecutive ggml rows (`row_bytes` apart from `rows`) of n weights to one strip: its codes
// (n / 32 * 16 * code bytes per block) and its scales (n / 32 * 16).
using PackStripFn = void (*)(const std::byte* rows, std::size_t row_bytes, std::uint8_t* codes, std::uint16_t* scales,
                            std::int64_t n);
void pack_strip_q4_0_x16(const std::byte* rows, std::size_t row_bytes, std::uint8_t* codes, std::uint16_t* scales,
                         std::int64_t n);
void pack_strip_q8_0_x16(const std::byte* rows, std::size_t row_bytes, std::uint8_t* codes, std::uint16_t* scales,
                         std::int64_t n);
void pack_strip_q4_k_x16(const std::byte* rows, std::size_t row_bytes, std::uint8_t* codes, std::uint16_t* scales,
                         std::int64_t n);
void pack_strip_q6_k_x16(const std::byte* rows, std::size_t row_bytes, std::uint8_t* codes, std::uint16_t* scales,
                         std::int64_t n);
// Q6_K code bytes per strip and super-block before the strip's d values (2 x 24 vectors).
inline constexpr std::size_t k_q6_k_x16_super_codes = 3072;

// Bytes of one strip's codes for ggml rows of `row_bytes` holding `blocks` blocks (each with one
// fp16 scale, kept apart); the scales of strip s start at s * 16 * blocks in the scale region,
// which follows all the strips' codes.
inline std::size_t x16_strip_code_bytes(std::size_t row_bytes, std::int64_t blocks) {
  return k_x16_rows * (row_bytes - 2 * std::size_t(blocks));
}

}  // namespace trilemma::engine
