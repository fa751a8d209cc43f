// Turning source tensors (mapped file data in any supported format) into the Model's run-time
// weights. The fallback rule (docs/formats.md): a matrix whose row length is not a multiple of
// the target format's block is stored as f32 instead, and the Model lists it in `fallbacks`.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "engine/model/model.hpp"
#include "engine/quant/kernel_table.hpp"
#include "engine/runtime/thread_pool.hpp"
#include "types/result.hpp"

namespace trilemma::engine {

// Fills one row of floats: source(r, out[cols]). Called from several threads at once.
using RowSource = std::function<void(std::int64_t row, float* out)>;

// Called with each run of rows [begin, end) once they are written (several threads at once).
using RowsDone = std::function<void(std::int64_t begin, std::int64_t end)>;

// A new rows x cols matrix in `target` (or its f32 fallback), quantized row by row from
// `source` so no full-precision copy of the matrix is ever held.
Result<Matrix> build_matrix(Model& model, const std::string& name, std::int64_t rows, std::int64_t cols,
                            TensorType target, ThreadPool& pool, const RowSource& source, const RowsDone& rows_done = {});

// `src` as it is (target nullopt or equal), or converted row by row into `target`.
// Errors when src.type or target has no kernels in this engine.
Result<Matrix> prepare_matrix(Model& model, const std::string& name, const Matrix& src,
                              std::optional<TensorType> target, ThreadPool& pool);

// A norm vector as f32 (converted into owned memory when stored otherwise).
Result<const float*> prepare_norm(Model& model, const std::string& name, const Matrix& src);

// Rewrites every layer matrix and the classifier whose format has an x4 tile for `isa` and
// whose rows are a multiple of 128 into the x4 layout. Owned buffers are repacked in place;
// mapped data, and a classifier tied to the embedding (which row lookups read in ggml layout),
// are copied. Call before running with `isa`; a model packed this way needs that ISA's tiles.
void pack_for_isa(Model& model, Isa isa, ThreadPool& pool);

// The format a matrix of `cols` columns gets when `target` is requested: target, or f32.
TensorType storage_type(TensorType target, std::int64_t cols);

}  // namespace trilemma::engine
