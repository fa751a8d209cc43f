#include <catch2/catch.hpp>

#include "types/model_shape.hpp"

using namespace trilemma;

namespace {
ModelShape llama2_7b() {
  ModelShape s;
  s.layers = 32; s.hidden = 4096; s.heads = 32; s.kv_heads = 32; s.head_dim = 128;
  s.ffn = 11008; s.vocab = 32000; s.context = 4096;
  return s;
}
}  // namespace

TEST_CASE("types::count_parameters: Llama-2-7B is 6.74 B parameters", "[types]") {
  const auto c = count_parameters(llama2_7b());
  // Meta's model card states 7B; the checkpoint holds 6,738,415,616 parameters.
  CHECK(c.total() == Approx(6738415616.0).epsilon(1e-9));
  CHECK(c.embedding == 32000.0 * 4096);
  CHECK(c.output == 32000.0 * 4096);
}

TEST_CASE("types::count_parameters: Mixtral reads 2 of 8 experts per token", "[types]") {
  ModelShape s;
  s.layers = 32; s.hidden = 4096; s.heads = 32; s.kv_heads = 8; s.head_dim = 128;
  s.vocab = 32000; s.context = 32768;
  s.moe = {8, 2, 0, 14336};
  const auto c = count_parameters(s);
  // Mistral AI: 46.7B total, 12.9B active. Their active count includes the whole embedding
  // matrix; ours counts what a token reads, which is one row of it.
  CHECK(c.total() == Approx(46.7e9).epsilon(0.01));
  CHECK(c.active_per_token + c.embedding == Approx(12.9e9).epsilon(0.01));
  CHECK(c.active_per_token < 0.3 * c.total());
}

TEST_CASE("types::validate_shape: names the offending field", "[types]") {
  auto s = llama2_7b();
  CHECK(validate_shape(s).empty());
  s.kv_heads = 5;
  CHECK(validate_shape(s).rfind("kv_heads", 0) == 0);
  s = llama2_7b();
  s.head_dim = 0;
  CHECK(validate_shape(s).rfind("head_dim", 0) == 0);
}

TEST_CASE("types::validate_shape: sizes beyond any model are refused before they can wrap", "[types]") {
  // A crafted GGUF's key_length of 1073741832 made heads x head_dim wrap in 32 bits (issue 14).
  auto s = llama2_7b();
  s.head_dim = 1073741832;
  CHECK(validate_shape(s).rfind("head_dim: 1073741832 is beyond any model", 0) == 0);
  s = llama2_7b();
  s.heads = 1024, s.kv_heads = 1024, s.head_dim = 2048;  // each in bounds, the product not
  CHECK(validate_shape(s).rfind("heads x head_dim", 0) == 0);
  for (auto field : {&ModelShape::layers, &ModelShape::hidden, &ModelShape::ffn, &ModelShape::vocab, &ModelShape::context}) {
    s = llama2_7b();
    s.*field = 0xffffffffu;
    CHECK_FALSE(validate_shape(s).empty());
  }
  // The largest published shapes pass.
  s = llama2_7b();
  s.layers = 126, s.hidden = 16384, s.heads = 128, s.kv_heads = 8, s.head_dim = 128, s.ffn = 53248, s.vocab = 262144,
  s.context = 10'000'000;
  CHECK(validate_shape(s).empty());
}
