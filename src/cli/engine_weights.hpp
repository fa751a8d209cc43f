// What `run`, `eval` and `export` hand the engine for a --weights name: one tensor type for every
// matrix (q8_0, f16, a tensor type such as q6_k or tq3_t), or a llama.cpp recipe whose name is
// not a tensor type (q4_k_m, q5_k_m, q3_k_m), laid out tensor by tensor on the model's shape by
// the planner's own tensor plan (memory::plan_tensors: the recipe's layer rules and row-size
// fallbacks), so the engine runs the mix the planner sized.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "types/model_shape.hpp"
#include "types/result.hpp"
#include "types/tensor_type.hpp"
#include "types/weight_format.hpp"

namespace trilemma::cli {

struct EngineWeights {
  std::optional<TensorType> all;                             // every matrix (a recipe: its bulk type)
  std::map<std::string, TensorType, std::less<>> by_tensor;  // a recipe's type per matrix
  std::optional<WeightFormat> recipe;
  std::string name;                                          // as asked: "q4_k_m"
};

// Whether --weights `name` is a recipe that needs the model's shape (engine_weights below).
bool is_engine_recipe(const std::string& name);

// `shape` is needed for a recipe only (nullopt: a llama2.c checkpoint, whose shape the CLI does
// not read; the error says to give a GGUF or a catalog id). Errors name the flag and list what
// the engine runs.
Result<EngineWeights> engine_weights(const std::string& name, const std::optional<ModelShape>& shape);

// "f32, f16, q8_0, q4_0, ..., and the llama.cpp recipes q5_k_m, q4_k_m, q3_k_m": for help and
// errors; the recipes alone ("q5_k_m, q4_k_m, q3_k_m"): those whose every type has kernels.
std::string engine_weight_names();
std::string engine_recipe_names();

}  // namespace trilemma::cli
