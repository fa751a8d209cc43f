#include "engine/quant/x16_layout.hpp"

#include <cstring>

#include "engine/quant/blocks.hpp"

namespace trilemma::engine {

void pack_strip_q4_0_x16(const std::byte* rows, std::size_t row_bytes, std::uint8_t* codes, std::uint16_t* scales,
                         std::int64_t n) {
  const std::int64_t blocks = n / 32;
  for (std::int64_t b = 0; b < blocks; ++b, codes += 256, scales += k_x16_rows)
    for (int r = 0; r < k_x16_rows; ++r) {
      const auto& block = reinterpret_cast<const BlockQ4_0*>(rows + std::size_t(r) * row_bytes)[b];
      scales[r] = block.d;
      for (int k = 0; k < 4; ++k) std::memcpy(codes + 64 * k + 4 * r, block.qs + 4 * k, 4);
    }
}

void pack_strip_q8_0_x16(const std::byte* rows, std::size_t row_bytes, std::uint8_t* codes, std::uint16_t* scales,
                         std::int64_t n) {
  const std::int64_t blocks = n / 32;
  for (std::int64_t b = 0; b < blocks; ++b, codes += 512, scales += k_x16_rows)
    for (int r = 0; r < k_x16_rows; ++r) {
      const auto& block = reinterpret_cast<const BlockQ8_0*>(rows + std::size_t(r) * row_bytes)[b];
      scales[r] = block.d;
      for (int k = 0; k < 8; ++k) std::memcpy(codes + 64 * k + 4 * r, block.qs + 4 * k, 4);
    }
}

}  // namespace trilemma::engine
