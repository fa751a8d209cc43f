#include "engine/model/matmul.hpp"

#include <algorithm>
#include <array>

#include "engine/quant/blocks.hpp"

namespace trilemma::engine {
namespace {
// 48 tokens of a 5632-wide f32 activation are 1 MiB: within L2 beside the rows.
constexpr int k_rows_tokens = 48;
}  // namespace

void Matmul::run(const float* x, int n, std::int64_t cols, std::span<const MatmulJob> jobs) {
  // Which activation formats are needed, each quantized once.
  std::array<TensorType, 2> act_types{};
  int act_count = 0;
  struct Prepared {
    const Matrix* w;
    float* y;
    DotFn dot;
    TileFn tile;  // nullptr when the format has no tile for this ISA
    RowsFn rows_fn;  // nullptr when the format has no rows x tokens kernel for this ISA
    int act;
    std::int64_t row_begin;
    std::size_t row_bytes, code_bytes;  // per row: ggml layout, and x4 codes
    const std::uint8_t* codes;          // x4 only: row 0's codes and scales
    const std::uint16_t* scales;
  };
  std::vector<Prepared> prepared;
  std::int64_t total_rows = 0;
  for (const MatmulJob& job : jobs) {
    const FormatKernels& k = *find_kernels(job.w->type);
    int slot = 0;
    while (slot < act_count && act_types[std::size_t(slot)] != k.activation) ++slot;
    if (slot == act_count) act_types[std::size_t(act_count++)] = k.activation;
    // x4 matrices exist only when this ISA's tile does (pack_for_isa); others use the dot.
    const Matrix& w = *job.w;
    prepared.push_back({&w, job.y, select_dot(k, m_isa), w.x4 ? select_tile(k, m_isa) : nullptr, select_rows(k, m_isa), slot, total_rows,
                        w.row_bytes(), w.x4 ? x4_code_bytes(w.row_bytes(), w.cols / 32) : 0, w.x4 ? w.x4_codes(0) : nullptr,
                        w.x4 ? w.x4_scales(0) : nullptr});
    total_rows += job.w->rows;
  }
  std::array<std::size_t, 2> act_row_bytes{};
  for (int s = 0; s < act_count; ++s) {
    const FormatKernels& ak = *find_kernels(act_types[std::size_t(s)]);
    act_row_bytes[std::size_t(s)] = tensor_bytes(ak.weight, std::uint64_t(cols));
    auto& buf = m_act[s];
    const std::size_t stride = act_row_bytes[std::size_t(s)];
    buf.resize(stride * std::size_t(n));
    // Tiles read Q8_0 activations regrouped once into a panel (quant/q8_panel.hpp).
    // x4 rows are multiples of 128, so cols / 32 is a multiple of 4 here.
    const bool tiled = std::any_of(prepared.begin(), prepared.end(), [&](const Prepared& p) { return p.act == s && p.tile != nullptr; });
    if (tiled) resize_q8_panel(m_panel, n, cols / k_qk8_0);
    m_pool.parallel_for(n, 4, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t t = begin; t < end; ++t) {
        std::byte* row = buf.data() + std::size_t(t) * stride;
        ak.quantize(x + std::size_t(t) * std::size_t(cols), row, cols);
        if (tiled) pack_q8_panel_token(row, int(t), m_panel);
      }
    });
  }
  // The pool hands out long runs of rows first (streaming) and short ones last (balance).
  const std::int64_t grain = n <= 2 ? 16 : 4;
  m_pool.parallel_for(total_rows, grain, [&](std::int64_t begin, std::int64_t end) {
    for (const Prepared& p : prepared) {  // the chunk's rows, job by job
      const std::int64_t first = std::max(begin, p.row_begin) - p.row_begin;
      const std::int64_t last = std::min(end, p.row_begin + p.w->rows) - p.row_begin;
      const std::byte* act = m_act[p.act].data();
      const std::size_t stride = act_row_bytes[std::size_t(p.act)], rows = std::size_t(p.w->rows);
      if (first >= last) continue;
      if (p.tile != nullptr) {
        const std::size_t scale_stride = std::size_t(cols / 32);
        for (int t = 0; t < n; t += 8)
          p.tile(p.codes + std::size_t(first) * p.code_bytes, p.code_bytes, p.scales + std::size_t(first) * scale_stride,
                 scale_stride, int(last - first), m_panel, t, std::min(8, n - t), p.y + std::size_t(t) * rows + std::size_t(first),
                 rows);
        continue;
      }
      if (p.rows_fn != nullptr) {
        // Tokens in slices of k_rows_tokens, so a slice's activations stay in L2 while the
        // chunk's rows pass over them.
        const auto* xf = reinterpret_cast<const float*>(act);
        const std::size_t x_stride = stride / sizeof(float);
        for (int t = 0; t < n; t += k_rows_tokens)
          p.rows_fn(p.w->data + std::size_t(first) * p.row_bytes, p.row_bytes, int(last - first), xf + std::size_t(t) * x_stride,
                    x_stride, std::min(k_rows_tokens, n - t), cols, p.y + std::size_t(t) * rows + std::size_t(first), rows);
        continue;
      }
      for (std::int64_t r = first; r < last; ++r) {
        const std::byte* w_row = p.w->data + std::size_t(r) * p.row_bytes;
        for (int t = 0; t < n; ++t) p.y[std::size_t(t) * rows + std::size_t(r)] = p.dot(w_row, act + std::size_t(t) * stride, cols);
      }
    }
  });
}

}  // namespace trilemma::engine

namespace trilemma::engine {

std::uint64_t Matmul::scratch_bytes() const {
  return m_act[0].capacity() + m_act[1].capacity() + m_panel.s8.capacity() + m_panel.u8.capacity() +
         4 * (m_panel.init.capacity() + m_panel.dy.capacity());
}

}  // namespace trilemma::engine
