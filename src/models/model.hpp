// A model as the planner sees it: a shape plus what is known of its origin. Shapes come from the
// built-in catalog (models/*.yaml), a GGUF header, or a Hugging Face config.json.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "types/model_shape.hpp"
#include "types/tensor_type.hpp"
#include "types/weight_format.hpp"

namespace trilemma::models {

// One tensor as stored in a GGUF file: the planner uses real per-tensor types and sizes.
struct StoredTensor {
  std::string name;
  std::uint64_t elems = 0;
  std::uint64_t bytes = 0;
  std::string type;  // tensor type name ("q4_k"), or "ggml-type-N" when unknown to the table
};

// A mean KL divergence measured for this model's weights in one format against full precision
// (trilemma eval, or llama.cpp's llama-perplexity --kl-divergence): the accuracy model scales its
// prediction for every format of the model by measured / predicted at the measured format.
struct MeasuredLoss {
  WeightFormat weights = WeightFormat::q4_k_m;
  bool imatrix = false; // quantized with an importance matrix ("q4_k_m+imatrix=...")
  double kld = 0;       // nats
  std::string source;   // the flag value or file it came from
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
  // Family and generation as data/measurements names them (llama3.1, qwen2.5): the accuracy model
  // looks up the pre-training tokens by it. Empty: unknown (the plan says it extrapolates).
  std::string family;
  ModelShape shape;
  std::optional<double> published_total, published_active;
  std::vector<ModelSource> sources;
  std::string notes;
  std::string origin;  // "models/x.yaml", a GGUF path, a config.json path
  std::string path;    // the weights file when the model came from a file (GGUF); else empty
  std::vector<StoredTensor> stored_tensors;  // GGUF only
  std::string stored_format;                 // GGUF only: dominant tensor type, e.g. "q4_k"
  std::vector<MeasuredLoss> measured_loss;   // from --measured-kl; empty: the prior alone
};

}  // namespace trilemma::models
