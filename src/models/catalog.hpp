// The built-in catalog (models/*.yaml, schema: models/README.md) and resolution of a model
// argument: a catalog id, a .gguf file, a config.json file, or a YAML file in the catalog schema.
#pragma once
#include <string>
#include <vector>

#include "models/model.hpp"
#include "types/result.hpp"

namespace trilemma::models {

Result<Model> parse_model_yaml(const std::string& yaml_text, const std::string& file, const std::string& expected_id);

Result<std::vector<Model>> builtin_models();

Result<Model> resolve_model(const std::string& id_or_path);

}  // namespace trilemma::models
