#include "engine/quant/x4_layout.hpp"

#include <cstring>

#include "engine/quant/blocks.hpp"

namespace trilemma::engine {

void pack_row_q8_0_x4(const void* ggml_row, std::uint8_t* codes, std::uint16_t* scales, std::int64_t n) {
  const auto* b = static_cast<const BlockQ8_0*>(ggml_row);
  for (std::int64_t g = 0; g < n / k_x4_elems; ++g, b += 4, codes += 128) {
    for (int k = 0; k < 4; ++k) {
      *scales++ = b[k].d;
      std::memcpy(codes + 16 * k, b[k].qs, 16);
      std::memcpy(codes + 64 + 16 * k, b[k].qs + 16, 16);
    }
  }
}

void pack_row_q4_0_x4(const void* ggml_row, std::uint8_t* codes, std::uint16_t* scales, std::int64_t n) {
  const auto* b = static_cast<const BlockQ4_0*>(ggml_row);
  for (std::int64_t g = 0; g < n / k_x4_elems; ++g, b += 4, codes += 64) {
    for (int k = 0; k < 4; ++k) {
      *scales++ = b[k].d;
      std::memcpy(codes + 16 * k, b[k].qs, 16);
    }
  }
}

}  // namespace trilemma::engine
