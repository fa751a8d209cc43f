// A model shape from a Hugging Face `config.json` (transformers' PretrainedConfig keys).
#pragma once
#include <string>

#include "models/model.hpp"
#include "types/result.hpp"

namespace trilemma::models {

Result<Model> model_from_hf_config(const std::string& path);
Result<Model> parse_hf_config(const std::string& json_text, const std::string& file);

}  // namespace trilemma::models
