// The planner's tensor plan (memory::plan_tensors: a recipe's layer rules and row-size
// fallbacks) against the files llama.cpp's own `llama-quantize` wrote: stories260K in each
// recipe of ../shared/models/llama-quantize/. Every matrix must get the type llama-quantize gave
// it; the memory model sizes weights from this plan, and `run`/`export --weights q4_k_m` build
// the engine's weights from it. Exits 77 when ../shared is absent.
#include <catch2/catch.hpp>

#include <map>

#include "memory/tensor_layout.hpp"
#include "models/gguf_shape.hpp"
#include "shared_data.hpp"

using namespace trilemma;
using trilemma::testing::shared_file;

namespace {

const bool k_have_shared = (trilemma::testing::require_shared_or_skip("models/llama-quantize"), true);

}  // namespace

TEST_CASE("memory::plan_tensors: each recipe types every matrix as llama-quantize does", "[memory][shared]") {
  const std::map<std::string, WeightFormat> recipes = {
      {"Q2_K", WeightFormat::q2_k},     {"Q3_K_M", WeightFormat::q3_k_m}, {"Q4_K_M", WeightFormat::q4_k_m},
      {"Q5_K_M", WeightFormat::q5_k_m}, {"Q6_K", WeightFormat::q6_k},     {"Q4_0", WeightFormat::q4_0},
      {"Q8_0", WeightFormat::q8_0},
  };
  for (const auto& [file_recipe, format] : recipes) {
    CAPTURE(file_recipe);
    const auto path = shared_file("models/llama-quantize/stories260K-" + file_recipe + ".gguf");
    auto model = models::model_from_gguf(path.string());
    REQUIRE(model.ok());
    std::map<std::string, std::string> stored;
    for (const auto& t : model->stored_tensors) stored[t.name] = t.type;
    std::size_t matrices = 0;
    for (const auto& t : memory::plan_tensors(model->shape, format)) {
      if (t.role == memory::TensorRole::norm || t.role == memory::TensorRole::bias) continue;
      CAPTURE(t.name);
      REQUIRE(stored.count(t.name) == 1);
      CHECK(stored.at(t.name) == std::string(info(t.type).name));
      ++matrices;
    }
    CHECK(matrices == 7 * model->shape.layers + (model->shape.tied_embeddings ? 1 : 2));
  }
}
