// Where a model comes from (a file or a synthetic shape) and loading it with its tokenizer:
// the part that generate() and export_gguf() share.
#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "engine/model/model.hpp"
#include "engine/model/weight_choice.hpp"
#include "engine/runtime/thread_pool.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "types/result.hpp"

namespace trilemma::engine {

// Synthetic weights always use this seed: the same shape and format give the same bytes.
inline constexpr std::uint64_t k_synthetic_seed = 0x7472696C656D6D61ull;  // "trilemma"

struct ModelSource {
  std::optional<std::filesystem::path> model_path, tokenizer_path;
  std::optional<ModelShape> synthetic_shape;
  std::string synthetic_name;
  WeightChoice weights;
};

struct LoadedModel {
  Model model;
  Tokenizer tokenizer;
};

// GGUF files are recognised by their magic; anything else is read as a llama2.c checkpoint.
// Errors when the tokenizer's vocabulary size differs from the model's.
Result<LoadedModel> load_model(const ModelSource& source, ThreadPool& pool);

}  // namespace trilemma::engine
