#include "engine/quant/q8_panel.hpp"

#include <cstring>

#include "engine/quant/blocks.hpp"
#include "engine/quant/fp16.hpp"

namespace trilemma::engine {

void resize_q8_panel(Q8Panel& panel, int tokens, std::int64_t blocks) {
  panel.tokens = tokens;
  panel.groups = blocks / 4;
  const std::size_t total = std::size_t(tokens) * std::size_t(panel.groups);
  panel.s8.resize(total * 128);
  panel.u8.resize(total * 128);
  panel.init.resize(total * 16);
  panel.dy.resize(total * 4);
  panel.zero.resize(total * 4);
  panel.tile_tokens = tokens + 15;  // a 16-token tile from any token before `tokens` stays inside
  panel.tile_codes.resize(std::size_t(blocks) * std::size_t(panel.tile_tokens) * 32);
}

void pack_q8_panel_token(const std::byte* row, int t, Q8Panel& out) {
  const auto* y = reinterpret_cast<const BlockQ8_0*>(row);
  const std::size_t g_count = std::size_t(out.groups);
  for (std::size_t g = 0; g < g_count; ++g) {
    const std::size_t at = std::size_t(t) * g_count + g;
    std::int8_t* s8 = &out.s8[at * 128];
    std::uint8_t* u8 = &out.u8[at * 128];
    std::int32_t* init = &out.init[at * 16];
    for (std::size_t k = 0; k < 4; ++k) {
      const BlockQ8_0& b = y[4 * g + k];
      for (std::size_t lane = 0; lane < 4; ++lane) init[4 * k + lane] = 0;
      for (std::size_t j = 0; j < 32; ++j) {
        const std::size_t pos = (j < 16 ? 0 : 64) + 16 * k + j % 16;
        s8[pos] = b.qs[j];
        u8[pos] = std::uint8_t(b.qs[j] + 128);
        init[4 * k + (j % 16) / 4] -= 8 * b.qs[j];  // the int32 lane that code j lands in
      }
      std::memcpy(out.tile_codes_of(std::int64_t(4 * g + k), t), b.qs, 32);
      out.dy[at * 4 + k] = fp16_to_fp32(b.d);
      out.zero[at * 4 + k] = init[4 * k] + init[4 * k + 1] + init[4 * k + 2] + init[4 * k + 3];
    }
  }
}

void pack_q8_panel(const std::byte* rows, std::size_t stride, int tokens, std::int64_t blocks, Q8Panel& out) {
  resize_q8_panel(out, tokens, blocks);
  for (int t = 0; t < tokens; ++t) pack_q8_panel_token(rows + std::size_t(t) * stride, t, out);
  out.rows = rows, out.row_stride = stride;
}

}  // namespace trilemma::engine
