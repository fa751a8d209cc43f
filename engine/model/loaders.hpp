// Model loaders: llama2.c legacy checkpoints, GGUF `llama` files, and synthetic weights.
// `weights` says what each matrix becomes (weight_choice.hpp): kept as stored, or converted
// (with the f32 fallback of prepare.hpp). Norms are always f32.
#pragma once
#include <filesystem>
#include <optional>

#include "engine/gguf/gguf_file.hpp"
#include "engine/model/model.hpp"
#include "engine/model/weight_choice.hpp"
#include "engine/runtime/thread_pool.hpp"
#include "types/result.hpp"

namespace trilemma::engine {

// llama2.c `run.c` checkpoint: 7 x int32 header (dim, hidden_dim, n_layers, n_heads,
// n_kv_heads, vocab_size, seq_len; negative vocab_size = separate classifier at the end),
// then fp32 weights layer-major per kind (see the loader for the order).
Result<Model> load_llama2c(const std::filesystem::path& path, const WeightChoice& weights, ThreadPool& pool);

// GGUF with general.architecture = llama (RoPE on adjacent pairs, as llama.cpp's LLAMA).
Result<Model> load_gguf_model(const gguf::GgufFile& file, const WeightChoice& weights, ThreadPool& pool);

// Whether make_synthetic builds this shape: dense, gated, bias-free llama shapes (the layers the
// synthetic generator writes).
bool synthetic_supported(const ModelShape& shape);

// Deterministic weights for any dense shape, generated row by row straight into `weights`
// (f32 where `weights` names no type), never holding a full-precision copy of the model. Same seed, same bytes.
Result<Model> make_synthetic(const ModelShape& shape, const std::string& name, const WeightChoice& weights,
                             std::uint64_t seed, ThreadPool& pool);

}  // namespace trilemma::engine
