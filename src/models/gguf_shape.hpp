// A model shape from a GGUF file's header (metadata and tensor table), without reading tensors.
// Keys: ggml docs/gguf.md, "LLM" section ({arch}.block_count, .embedding_length, ...).
#pragma once
#include <string>

#include "models/model.hpp"
#include "types/result.hpp"

namespace trilemma::models {

Result<Model> model_from_gguf(const std::string& path);

}  // namespace trilemma::models
