#include "engine/model/prepare.hpp"

#include <algorithm>
#include <vector>

#include "engine/quant/kernel_table.hpp"

namespace trilemma::engine {

TensorType storage_type(TensorType target, std::int64_t cols) {
  return cols % info(target).block_elems == 0 ? target : TensorType::f32;
}

Result<Matrix> build_matrix(Model& model, const std::string& name, std::int64_t rows, std::int64_t cols,
                            TensorType target, ThreadPool& pool, const RowSource& source, const RowsDone& rows_done) {
  const TensorType to_type = storage_type(target, cols);
  const FormatKernels* to = find_kernels(to_type);
  if (to == nullptr)
    return make_error(ErrorKind::usage, model.name, name,
                      "weights " + std::string(info(to_type).name) + " have no kernels in this engine");
  if (to_type != target)
    model.fallbacks.push_back(name + ": " + std::string(info(target).name) + " -> " + std::string(info(to_type).name) +
                              " (row " + std::to_string(cols) + " not a multiple of " +
                              std::to_string(info(target).block_elems) + ")");
  Matrix out{to_type, rows, cols, nullptr};
  std::byte* dst = model.storage->allocate(out.bytes());
  out.data = dst;
  pool.parallel_for(rows, 16, [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> row(static_cast<std::size_t>(cols));
    for (std::int64_t r = begin; r < end; ++r) {
      source(r, row.data());
      to->quantize(row.data(), dst + std::size_t(r) * out.row_bytes(), cols);
    }
    if (rows_done) rows_done(begin, end);
  });
  return out;
}

Result<Matrix> prepare_matrix(Model& model, const std::string& name, const Matrix& src,
                              std::optional<TensorType> target, ThreadPool& pool) {
  const FormatKernels* from = find_kernels(src.type);
  if (from == nullptr)
    return make_error(ErrorKind::input, model.name, name,
                      "tensor type " + std::string(info(src.type).name) + " has no kernels in this engine");
  if (!target || *target == src.type) return src;
  auto out = build_matrix(
      model, name, src.rows, src.cols, *target, pool, [&](std::int64_t r, float* row) { from->dequantize(src.row(r), row, src.cols); },
      [&](std::int64_t begin, std::int64_t end) {
        model.storage->retire_mapped(src.row(begin), std::size_t(end - begin) * src.row_bytes());
      });
  if (out) model.storage->retire_mapped(src.data, src.bytes());
  return out;
}

namespace {
// Units (rows or strips of 16) packed between two releases of their mapped source pages.
constexpr std::int64_t k_release_units = 16;
}  // namespace

void pack_for_isa(Model& model, Isa isa, ThreadPool& pool) {
  const auto pack = [&](Matrix& w, bool shared) {
    const FormatKernels& k = *find_kernels(w.type);
    if (w.repacked() || w.cols % k_x4_elems != 0) return;
    // The x16 strips where the format has them and the rows fill whole strips, else the x4 tile.
    const bool x16 = k.pack_x16 != nullptr && select_strip(k, isa) != nullptr && w.rows % k_x16_rows == 0;
    if (!x16 && (k.pack_x4 == nullptr || select_tile(k, isa) == nullptr)) return;
    const std::int64_t blocks = w.cols / 32;
    const std::size_t row_bytes = w.row_bytes(), code_bytes = x4_code_bytes(row_bytes, blocks);
    // A unit is what one pack call writes: a row (x4) or a strip of 16 rows (x16).
    const std::int64_t unit_rows = x16 ? k_x16_rows : 1, units = w.rows / unit_rows;
    const Matrix src = w;
    w.layout = x16 ? WeightLayout::x16 : WeightLayout::x4;
    const auto pack_unit = [&](const std::byte* ggml_rows, std::uint8_t* codes, std::uint16_t* scales) {
      if (x16) k.pack_x16(ggml_rows, row_bytes, codes, scales, src.cols);
      else k.pack_x4(ggml_rows, codes, scales, src.cols);
    };
    const auto codes_of = [&](std::int64_t u) {
      return const_cast<std::uint8_t*>(x16 ? w.x16_codes(u) : w.x4_codes(u));
    };
    const auto scales_of = [&](std::int64_t u) {
      return const_cast<std::uint16_t*>(x16 ? w.x16_scales(u) : w.x4_scales(u));
    };
    if (shared || !model.storage->owns(src.data, src.bytes())) {
      w.data = model.storage->allocate(src.bytes());
      pool.parallel_for(units, x16 ? 1 : 16, [&](std::int64_t begin, std::int64_t end) {
        // The tied embedding still reads its rows from the mapping; anything else hands its
        // rows back every k_release_units units as they are copied, so a large matrix (the
        // classifier) is never resident twice, not even while it is copied. Once per pool
        // chunk was too late: the pool's first chunks are long, and the q8_0 TinyLlama file
        // peaked up to 9 MiB higher (1080.5-1089.9 MiB over three runs, against 1080.6-1080.7).
        for (std::int64_t u0 = begin; u0 < end; u0 += k_release_units) {
          const std::int64_t u1 = std::min(end, u0 + k_release_units);
          for (std::int64_t u = u0; u < u1; ++u) pack_unit(src.row(u * unit_rows), codes_of(u), scales_of(u));
          if (!shared)
            model.storage->retire_mapped(src.row(u0 * unit_rows), std::size_t((u1 - u0) * unit_rows) * src.row_bytes());
        }
      });
      if (!shared) model.storage->retire_mapped(src.data, src.bytes());  // the pages runs shared
      return;
    }
    // In place, one pass in unit order: unit u's codes land at u * unit code bytes < u * unit
    // bytes, over units already read; the scales wait in a side buffer (1/9 of the matrix).
    auto* base = reinterpret_cast<std::uint8_t*>(const_cast<std::byte*>(src.data));
    const std::size_t unit_bytes = row_bytes * std::size_t(unit_rows), unit_codes = code_bytes * std::size_t(unit_rows);
    const std::size_t unit_scales = std::size_t(blocks * unit_rows);
    std::vector<std::uint16_t> scales(std::size_t(src.rows) * std::size_t(blocks));
    std::vector<std::byte> unit(unit_bytes);
    for (std::int64_t u = 0; u < units; ++u) {
      std::copy_n(src.data + std::size_t(u) * unit_bytes, unit_bytes, unit.data());
      pack_unit(unit.data(), base + std::size_t(u) * unit_codes, &scales[std::size_t(u) * unit_scales]);
    }
    std::copy(scales.begin(), scales.end(), scales_of(0));
  };
  for (auto& l : model.layers)
    for (Matrix* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3}) pack(*w, false);
  pack(model.classifier, model.classifier.data == model.token_embedding.data);
}

// Norms are copied out of a file mapping even when they are f32 already: read in place, each
// 8 KiB vector kept its whole mapping unit resident (a large folio of the page cache, up to
// 2 MiB on ext4), 36 MiB for TinyLlama's 45 norms, which the memory breakdown counted as 360 KiB.
Result<const float*> prepare_norm(Model& model, const std::string& name, const Matrix& src) {
  const bool file_backed = model.storage->file_backed(src.data, src.bytes());
  if (src.type == TensorType::f32 && !file_backed) return reinterpret_cast<const float*>(src.data);
  const FormatKernels* from = find_kernels(src.type);
  if (from == nullptr)
    return make_error(ErrorKind::input, model.name, name,
                      "tensor type " + std::string(info(src.type).name) + " has no kernels in this engine");
  auto* out = reinterpret_cast<float*>(model.storage->allocate(std::size_t(src.cols) * 4));
  from->dequantize(src.data, out, src.cols);
  // Released, not retired: a norm is a page or two, and retiring it would cut the mapping
  // around it, so the 2 MiB range holding it could no longer be mapped whole for its
  // neighbours read in place (f16 decode 9.8-9.9 tok/s with norms retired, 10.1-10.2 without).
  model.storage->release_mapped(src.data, src.bytes());
  return static_cast<const float*>(out);
}

}  // namespace trilemma::engine
