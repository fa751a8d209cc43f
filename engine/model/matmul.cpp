#include "engine/model/matmul.hpp"

#include <algorithm>
#include <array>

#include "engine/quant/blocks.hpp"

namespace trilemma::engine {
namespace {
// 48 tokens of a 5632-wide f32 activation are 1 MiB: within L2 beside the rows.
constexpr int k_rows_tokens = 48;
// The pool hands out units of 16 rows, so every chunk of an x16 matrix is whole strips.
constexpr std::int64_t k_unit_rows = k_x16_rows;
// Weight bytes per row block of the multi-token dots: half of a 48 KiB L1 data cache.
constexpr std::size_t k_multi_block_bytes = 16 * 1024;
std::int64_t units_of(std::int64_t rows) { return (rows + k_unit_rows - 1) / k_unit_rows; }
}  // namespace

void Matmul::run(const float* x, int n, std::int64_t cols, std::span<const MatmulJob> jobs, Bits bits) {
  const bool tiles = bits == Bits::any && n >= k_min_tile_tokens;
  // Which activation formats are needed, each quantized once.
  std::array<TensorType, k_max_activation_formats> act_types{};
  int act_count = 0;
  struct Prepared {
    const Matrix* w;
    float* y;
    DotFn dot;
    TileFn tile;  // nullptr when the format has no tile for this ISA
    StripFn strip;  // x16 matrices only
    RowsFn rows_fn;  // nullptr when the format has no rows x tokens kernel for this ISA
    PanelRowsFn rows_amx;  // the AMX float rows over m_bf16, where the CPU allows them
    DotMultiFn multi;  // nullptr when the format's dot has no multi-token twin for this ISA
    RowsQ8Fn rows_q8;  // the i8mm rows, where the CPU has them
    int act;
    std::int64_t unit_begin;            // in units of k_unit_rows, over all jobs
    std::size_t row_bytes, code_bytes;  // per row: ggml layout, and x4 codes
    const std::uint8_t* codes;          // x4 and x16 only: row 0's codes and scales
    const std::uint16_t* scales;
  };
  std::vector<Prepared> prepared;
  std::int64_t total_units = 0;
  for (const MatmulJob& job : jobs) {
    const FormatKernels& k = *find_kernels(job.w->type);
    int slot = 0;
    while (slot < act_count && act_types[std::size_t(slot)] != k.activation) ++slot;
    if (slot == act_count) act_types[std::size_t(act_count++)] = k.activation;
    // x4 and x16 matrices exist only when this ISA's kernel does (pack_for_isa); others use the dot.
    const Matrix& w = *job.w;
    const bool x4 = w.layout == WeightLayout::x4, x16 = w.layout == WeightLayout::x16;
    prepared.push_back({&w, job.y, select_dot(k, m_isa), x4 ? select_tile(k, m_isa) : nullptr, x16 ? select_strip(k, m_isa) : nullptr,
                        select_rows(k, m_isa), tiles ? select_rows_amx(k, m_isa) : nullptr, select_dot_multi(k, m_isa), select_rows_i8mm(k, m_isa), slot, total_units, w.row_bytes(), x4 ? x4_code_bytes(w.row_bytes(), w.cols / 32) : 0,
                        x4 ? w.x4_codes(0) : x16 ? w.x16_codes(0) : nullptr, x4 ? w.x4_scales(0) : x16 ? w.x16_scales(0) : nullptr});
    total_units += units_of(job.w->rows);
  }
  const bool bf16 = std::any_of(prepared.begin(), prepared.end(), [](const Prepared& p) { return p.rows_amx != nullptr; });
  if (bf16) {
    resize_bf16_panel(m_bf16, n, cols);
    const PackBf16TokenFn pack = select_pack_bf16_panel_token(m_isa);
    m_pool.parallel_for(n, 4, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t t = begin; t < end; ++t) pack(x + std::size_t(t) * std::size_t(cols), int(t), m_bf16);
    });
  }
  std::array<std::size_t, k_max_activation_formats> act_row_bytes{};
  for (int s = 0; s < act_count; ++s) {
    const FormatKernels& ak = *find_kernels(act_types[std::size_t(s)]);
    act_row_bytes[std::size_t(s)] = tensor_bytes(ak.weight, std::uint64_t(cols));
    auto& buf = m_act[s];
    const std::size_t stride = act_row_bytes[std::size_t(s)];
    buf.resize(stride * std::size_t(n));
    // Tiles and strips read Q8_0 activations regrouped once into a panel (quant/q8_panel.hpp);
    // x4 rows are multiples of 128, so cols / 32 is a multiple of 4 here. The k-quant strips
    // read the Q8_K rows as they are.
    Q8Panel& panel = m_panel[s];
    const bool tiled = act_types[std::size_t(s)] == TensorType::q8_0 &&
                       std::any_of(prepared.begin(), prepared.end(),
                                   [&](const Prepared& p) { return p.act == s && (p.tile != nullptr || p.strip != nullptr); });
    if (tiled) resize_q8_panel(panel, n, cols / k_qk8_0);
    panel.tokens = n, panel.rows = buf.data(), panel.row_stride = stride;
    const QuantizeRowFn quantize = select_quantize(ak, m_isa);
    const PackPanelTokenFn pack_token = select_pack_q8_panel_token(m_isa);
    m_pool.parallel_for(n, 4, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t t = begin; t < end; ++t) {
        std::byte* row = buf.data() + std::size_t(t) * stride;
        quantize(x + std::size_t(t) * std::size_t(cols), row, cols);
        if (tiled) pack_token(row, int(t), panel);
      }
    });
  }
  // The pool hands out long runs of rows first (streaming) and short ones last (balance), in
  // units of 16 rows (a matrix's last unit may be short).
  m_pool.parallel_for(total_units, 1, [&](std::int64_t begin, std::int64_t end) {
    for (const Prepared& p : prepared) {  // the chunk's rows, job by job
      const std::int64_t first = (std::max(begin, p.unit_begin) - p.unit_begin) * k_unit_rows;
      const std::int64_t last = std::min((std::min(end, p.unit_begin + units_of(p.w->rows)) - p.unit_begin) * k_unit_rows, p.w->rows);
      const std::byte* act = m_act[p.act].data();
      const std::size_t stride = act_row_bytes[std::size_t(p.act)], rows = std::size_t(p.w->rows);
      if (first >= last) continue;
      if (p.strip != nullptr) {
        const std::int64_t blocks = cols / 32, strip0 = first / k_x16_rows;
        p.strip(p.codes + std::size_t(strip0) * x16_strip_code_bytes(p.row_bytes, blocks), p.scales + std::size_t(strip0 * k_x16_rows * blocks),
                blocks, int((last - first) / k_x16_rows), m_panel[p.act], 0, n, p.y + std::size_t(first), rows);
        continue;
      }
      if (p.tile != nullptr) {
        const std::size_t scale_stride = std::size_t(cols / 32);
        for (int t = 0; t < n; t += 8)
          p.tile(p.codes + std::size_t(first) * p.code_bytes, p.code_bytes, p.scales + std::size_t(first) * scale_stride,
                 scale_stride, int(last - first), m_panel[p.act], t, std::min(8, n - t), p.y + std::size_t(t) * rows + std::size_t(first),
                 rows);
        continue;
      }
      if (p.rows_amx != nullptr) {
        p.rows_amx(p.w->data + std::size_t(first) * p.row_bytes, p.row_bytes, int(last - first), m_bf16, 0, n, p.y + std::size_t(first), rows);
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
      if (p.rows_q8 != nullptr && n > 1) {  // the dot's bits, two rows x two tokens per instruction
        for (int t = 0; t < n; t += k_rows_tokens)
          p.rows_q8(p.w->data + std::size_t(first) * p.row_bytes, p.row_bytes, int(last - first), act + std::size_t(t) * stride, stride,
                    std::min(k_rows_tokens, n - t), cols, p.y + std::size_t(t) * rows + std::size_t(first), rows);
        continue;
      }
      if (p.multi != nullptr && n > 1) {  // each row unpacked once per k_dot_multi_tokens tokens
        // Rows in blocks of about k_multi_block_bytes, so a block and one token group's
        // activations stay in L1 while the group passes over the block's rows.
        const std::int64_t block = std::clamp<std::int64_t>(std::int64_t(k_multi_block_bytes / p.row_bytes), 1, k_unit_rows);
        float out[k_dot_multi_tokens];
        for (std::int64_t r0 = first; r0 < last; r0 += block)
          for (int t = 0; t < n; t += k_dot_multi_tokens) {
            const int nt = std::min(k_dot_multi_tokens, n - t);
            for (std::int64_t r = r0; r < std::min(last, r0 + block); ++r) {
              p.multi(p.w->data + std::size_t(r) * p.row_bytes, act + std::size_t(t) * stride, stride, nt, cols, out);
              for (int j = 0; j < nt; ++j) p.y[std::size_t(t + j) * rows + std::size_t(r)] = out[j];
            }
          }
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
  std::uint64_t act = 0;
  for (const auto& a : m_act) act += a.capacity();
  for (const Q8Panel& p : m_panel)
    act += p.s8.capacity() + p.u8.capacity() + p.tile_codes.capacity() + 4 * (p.init.capacity() + p.dy.capacity() + p.zero.capacity());
  return act + 2 * m_bf16.data.capacity();
}

}  // namespace trilemma::engine
