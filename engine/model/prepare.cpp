#include "engine/model/prepare.hpp"

#include <vector>

#include "engine/quant/kernel_table.hpp"

namespace trilemma::engine {

TensorType storage_type(TensorType target, std::int64_t cols) {
  return cols % info(target).block_elems == 0 ? target : TensorType::f32;
}

Result<Matrix> build_matrix(Model& model, const std::string& name, std::int64_t rows, std::int64_t cols,
                            TensorType target, ThreadPool& pool, const RowSource& source) {
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
  return build_matrix(model, name, src.rows, src.cols, *target, pool,
                      [&](std::int64_t r, float* row) { from->dequantize(src.row(r), row, src.cols); });
}

Result<const float*> prepare_norm(Model& model, const std::string& name, const Matrix& src) {
  if (src.type == TensorType::f32) return reinterpret_cast<const float*>(src.data);
  const FormatKernels* from = find_kernels(src.type);
  if (from == nullptr)
    return make_error(ErrorKind::input, model.name, name,
                      "tensor type " + std::string(info(src.type).name) + " has no kernels in this engine");
  auto* out = reinterpret_cast<float*>(model.storage->allocate(std::size_t(src.cols) * 4));
  from->dequantize(src.data, out, src.cols);
  return static_cast<const float*>(out);
}

}  // namespace trilemma::engine
