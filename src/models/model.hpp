// A model as the planner sees it: a shape plus what is known of its origin. Shapes come from the
// built-in catalog (models/*.yaml), a GGUF header, or a Hugging Face config.json.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "types/model_shape.hpp"
#include "types/tensor_type.hpp"

namespace trilemma::models {

// One tensor as stored in a GGUF file: the planner uses real per-tensor types and sizes.
struct StoredTensor {
  std::string name;
  std::uint64_t elems = 0;
  std::uint64_t bytes = 0;
  std::string type;  // tensor type name ("q4_k"), or "ggml-type-N" when unknown to the table
};

struct ModelSource {
  std::vector<std::string> fields;
  std::string url;
  std::string note;
};

struct Model {
  std::string id;
  std::string name;
  std::string publisher;
  std::string architecture;
  std::string tokenizer_family;  // models of one family share a vocabulary: drafts for each other
  ModelShape shape;
  std::optional<double> published_total, published_active;
  std::vector<ModelSource> sources;
  std::string notes;
  std::string origin;  // "models/x.yaml", a GGUF path, a config.json path
  std::string path;    // the weights file when the model came from a file (GGUF); else empty
  std::vector<StoredTensor> stored_tensors;  // GGUF only
  std::string stored_format;                 // GGUF only: dominant tensor type, e.g. "q4_k"
};

}  // namespace trilemma::models
