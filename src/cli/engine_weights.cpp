#include "cli/engine_weights.hpp"

#include "engine/engine.hpp"
#include "memory/tensor_layout.hpp"

namespace trilemma::cli {
namespace {

// A weight format the engine runs as a recipe, tensor by tensor (the table's engine_recipe).
std::optional<WeightFormat> recipe_of(const std::string& name) {
  const auto f = weight_format_from_name(name);
  if (!f || !info(*f).engine_recipe) return std::nullopt;
  return f;
}

bool is_matrix(memory::TensorRole r) {
  return r != memory::TensorRole::norm && r != memory::TensorRole::bias && r != memory::TensorRole::router;
}

// The recipe's types the engine has no kernels for, on any shape: its rules' types and the
// fallbacks of rows that do not fit them.
std::string missing_kernels(WeightFormat f) {
  const auto& r = info(f);
  std::string missing;
  for (const TensorType t : {r.bulk, r.attn_v, r.ffn_down, r.attn_output, r.ffn_down_rest, r.attn_v_rest, r.output, r.embedding})
    if (!engine::has_kernels(t) && missing.find(info(t).name) == std::string::npos)
      missing += (missing.empty() ? "" : ", ") + std::string(info(t).name);
  return missing;
}

}  // namespace

bool is_engine_recipe(const std::string& name) { return recipe_of(name).has_value(); }

std::string engine_recipe_names() {
  std::string recipes;
  for (const auto& row : weight_formats())
    if (recipe_of(std::string(row.name)) && missing_kernels(row.format).empty())
      recipes += (recipes.empty() ? "" : ", ") + std::string(row.name);
  return recipes;
}

std::string engine_weight_names() {
  const std::string recipes = engine_recipe_names();
  return engine_weight_format_names() + (recipes.empty() ? "" : ", and the llama.cpp recipes " + recipes);
}

Result<EngineWeights> engine_weights(const std::string& name, const std::optional<ModelShape>& shape) {
  EngineWeights w;
  w.name = name;
  if (const auto recipe = recipe_of(name)) {
    if (const std::string missing = missing_kernels(*recipe); !missing.empty())
      return make_error(ErrorKind::usage, "--weights", "",
                        name + " needs " + missing + ", which the engine has no kernels for; the engine runs " + engine_weight_names());
    if (!shape)
      return make_error(ErrorKind::usage, "--weights", "",
                        name + " is a recipe laid out on the model's shape: give a GGUF file or a catalog id, not a llama2.c checkpoint");
    w.recipe = recipe;
    w.all = info(*recipe).bulk;
    for (const auto& t : memory::plan_tensors(*shape, *recipe))
      if (is_matrix(t.role)) w.by_tensor[t.name] = t.type;
    return w;
  }
  const auto t = tensor_type_from_name(name);
  if (const auto f = weight_format_from_name(name)) {
    if (info(*f).engine_type) w.all = *info(*f).engine_type;
    else if (t) w.all = *t;
    else
      return make_error(ErrorKind::usage, "--weights", "", name + " is not a format the engine runs; it runs " + engine_weight_names());
    return w;
  }
  if (t) {
    w.all = *t;
    return w;
  }
  return make_error(ErrorKind::usage, "--weights", "", "unknown weight format '" + name + "' (the engine runs " + engine_weight_names() + ")");
}

}  // namespace trilemma::cli
