#include "engine/quant/x16_layout.hpp"

#include <cstring>

#include "engine/quant/blocks.hpp"

namespace trilemma::engine {
namespace {

// A block's code bytes in 4-byte pieces; piece k of the 16 rows fills vector k of the block.
template <class Block>
void pack_strip(const std::byte* rows, std::size_t row_bytes, std::uint8_t* codes, std::uint16_t* scales, std::int64_t n) {
  constexpr int pieces = int(sizeof(Block::qs)) / 4;
  for (std::int64_t b = 0; b < n / 32; ++b, codes += 64 * pieces, scales += k_x16_rows)
    for (int r = 0; r < k_x16_rows; ++r) {
      const auto& block = reinterpret_cast<const Block*>(rows + std::size_t(r) * row_bytes)[b];
      scales[r] = block.d;
      for (int k = 0; k < pieces; ++k) std::memcpy(codes + 64 * k + 4 * r, block.qs + 4 * k, 4);
    }
}

}  // namespace

void pack_strip_q4_k_x16(const std::byte* rows, std::size_t row_bytes, std::uint8_t* codes, std::uint16_t* scales,
                         std::int64_t n) {
  for (std::int64_t b = 0; b < n / k_qk_k; ++b, codes += k_x16_rows * sizeof(BlockQ4K::qs), scales += 8 * k_x16_rows) {
    auto* fields = reinterpret_cast<std::uint8_t*>(scales + 2 * k_x16_rows);  // 3 vectors of 16 words
    for (int r = 0; r < k_x16_rows; ++r) {
      const auto& block = reinterpret_cast<const BlockQ4K*>(rows + std::size_t(r) * row_bytes)[b];
      scales[r] = block.d;
      scales[k_x16_rows + r] = block.dmin;
      for (int k = 0; k < int(sizeof(block.qs)) / 4; ++k) std::memcpy(codes + 64 * k + 4 * r, block.qs + 4 * k, 4);
      std::uint32_t words[4];
      k_scales_mins(block.scales, words);
      std::uint8_t value[16];
      std::memcpy(value, words, 16);
      for (int v = 0; v < 3; ++v) {
        std::uint32_t word = std::uint32_t((value[15] >> (2 * v)) & 3u) << 30;
        for (int i = 0; i < 5; ++i) word |= std::uint32_t(value[5 * v + i]) << (6 * i);
        std::memcpy(fields + 64 * v + 4 * r, &word, 4);
      }
    }
  }
}

void pack_strip_q6_k_x16(const std::byte* rows, std::size_t row_bytes, std::uint8_t* codes, std::uint16_t* scales,
                         std::int64_t n) {
  const std::int64_t supers = n / k_qk_k;
  auto* d = reinterpret_cast<std::uint16_t*>(codes + std::size_t(supers) * k_q6_k_x16_super_codes);
  for (std::int64_t b = 0; b < supers; ++b, codes += k_q6_k_x16_super_codes, scales += 8 * k_x16_rows, d += k_x16_rows) {
    auto* sc = reinterpret_cast<std::int8_t*>(scales);
    for (int r = 0; r < k_x16_rows; ++r) {
      const auto& block = reinterpret_cast<const BlockQ6K*>(rows + std::size_t(r) * row_bytes)[b];
      d[r] = block.d;
      for (int h = 0; h < 2; ++h) {
        std::uint8_t* half = codes + 1536 * h;
        for (int p = 0; p < 16; ++p) std::memcpy(half + 64 * p + 4 * r, block.ql + 64 * h + 4 * p, 4);
        for (int p = 0; p < 8; ++p) std::memcpy(half + 1024 + 64 * p + 4 * r, block.qh + 32 * h + 4 * p, 4);
      }
      for (int k = 0; k < 8; ++k) sc[32 * k + 2 * r] = block.scales[2 * k], sc[32 * k + 2 * r + 1] = block.scales[2 * k + 1];
    }
  }
}

void pack_strip_q4_0_x16(const std::byte* rows, std::size_t row_bytes, std::uint8_t* codes, std::uint16_t* scales,
                         std::int64_t n) {
  pack_strip<BlockQ4_0>(rows, row_bytes, codes, scales, n);
}

void pack_strip_q8_0_x16(const std::byte* rows, std::size_t row_bytes, std::uint8_t* codes, std::uint16_t* scales,
                         std::int64_t n) {
  pack_strip<BlockQ8_0>(rows, row_bytes, codes, scales, n);
}

}  // namespace trilemma::engine
