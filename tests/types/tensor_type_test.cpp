#include <catch2/catch.hpp>

#include "types/deployment.hpp"
#include "types/tensor_type.hpp"
#include "types/weight_format.hpp"

using namespace trilemma;

TEST_CASE("types::tensor_types: every row has a name that maps back to it", "[types]") {
  for (const auto& row : tensor_types()) {
    CAPTURE(row.name);
    REQUIRE(tensor_type_from_name(row.name) == row.type);
    REQUIRE(row.block_elems > 0);
    REQUIRE(row.block_bytes > 0);
    if (row.gguf_id != k_no_gguf_id) REQUIRE(tensor_type_from_gguf_id(row.gguf_id) == row.type);
  }
}

TEST_CASE("types::bits_per_element: ggml block layouts", "[types]") {
  CHECK(bits_per_element(TensorType::f32) == 32.0);
  CHECK(bits_per_element(TensorType::q8_0) == 8.5);   // 34 bytes / 32 weights
  CHECK(bits_per_element(TensorType::q4_0) == 4.5);   // 18 bytes / 32 weights
  CHECK(bits_per_element(TensorType::q4_k) == 4.5);   // 144 bytes / 256 weights
  CHECK(bits_per_element(TensorType::q6_k) == 6.5625);
  CHECK(bits_per_element(TensorType::tq3_t) == 3.5);
  CHECK(bits_per_element(TensorType::tq2_t) == 2.5);
  CHECK(tensor_bytes(TensorType::q4_0, 4096) == 4096 / 32 * 18);
  CHECK_FALSE(tensor_type_from_name("q4_2").has_value());
  CHECK_FALSE(tensor_type_from_gguf_id(4).has_value());  // removed from ggml: Q4_2
}

TEST_CASE("types: the name lists in help texts and errors are the tables' rows", "[types]") {
  // Every format the engine runs, and only those, in table order; a new row shows up by itself.
  std::string engine, all;
  for (const auto& row : weight_formats()) {
    all += (all.empty() ? "" : ", ") + std::string(row.name);
    if (row.engine_type) engine += (engine.empty() ? "" : ", ") + std::string(row.name);
  }
  CHECK(weight_format_names() == all);
  CHECK(engine_weight_format_names() == engine);
  CHECK(engine.find("q4_0") != std::string::npos);
  CHECK(engine.find("q4_k_m") == std::string::npos);  // a llama.cpp recipe the engine does not run
  CHECK(kv_format_names() == "f32, f16, q8_0, q4_0");
}

TEST_CASE("types::weight_formats: row flags the planner and the loss models read", "[types]") {
  for (const auto& row : weight_formats()) {
    CAPTURE(row.name);
    // Only trilemma's own ternary-style formats wait to be pinned; every runtime format is searched.
    CHECK(row.pinned_only == (row.format == WeightFormat::int3 || row.format == WeightFormat::int2));
    CHECK(full_precision(row.format) ==
          (row.format == WeightFormat::f32 || row.format == WeightFormat::f16 || row.format == WeightFormat::bf16));
  }
}
