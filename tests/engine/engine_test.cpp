// The facade (generate, export_gguf) on synthetic models; needs no shared data.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <utility>
#include <vector>

#include "engine/engine.hpp"
#include "engine/gguf/gguf_file.hpp"
#include "engine/kv/kv_cache.hpp"
#include "engine/model/loaders.hpp"
#include "engine/sampling/sampler.hpp"
#include "engine/model/prepare.hpp"
#include "engine/model/transformer.hpp"
#include "engine/source/model_source.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "engine_fixtures.hpp"

using namespace trilemma;
using namespace trilemma::engine;
using namespace trilemma::testing;
namespace fs = std::filesystem;

namespace {
// The tiny synthetic model in q8_0, greedy.
GenerateOptions tiny_q8_0(int threads) {
  GenerateOptions o;
  o.synthetic_shape = tiny_shape();
  o.synthetic_name = "tiny";
  o.weights = TensorType::q8_0;
  o.threads = threads;
  return o;
}
}  // namespace

TEST_CASE("engine::generate: synthetic q8_0 model, greedy, deterministic and labelled synthetic", "[engine]") {
  GenerateOptions o = tiny_q8_0(2);
  o.prompt = "hello";
  o.steps = 12;
  std::string streamed;
  auto a = generate(o, [&](std::string_view piece) { streamed += piece; });
  REQUIRE(a.ok());
  CHECK(a->synthetic);
  CHECK(a->weights == "q8_0");
  CHECK(a->threads == 2);
  CHECK(a->prompt_tokens.front() == 1);
  // BOS, U+2581's three bytes (the prefixed space: no " " piece), then a byte token per letter,
  // as llama.cpp encodes it (tests/interop).
  CHECK(a->prompt_tokens.size() == 1 + 3 + 5);
  CHECK(a->tokens.size() <= 12);
  CHECK(streamed == a->text);
  CHECK(a->weight_bytes > 0);
  CHECK(a->peak_rss_bytes > 0);
  CHECK(a->fallbacks.empty());
  auto b = generate(o, nullptr);
  REQUIRE(b.ok());
  CHECK(b->tokens == a->tokens);
  o.force_scalar = true;
  auto c = generate(o, nullptr);
  REQUIRE(c.ok());
  CHECK(c->kernels == "scalar");
  CHECK(c->tokens == a->tokens);  // integer dots: scalar and SIMD agree on a synthetic model
}

TEST_CASE("engine::generate: prompt_tokens repeats the text to exactly that many tokens", "[engine]") {
  GenerateOptions o = tiny_q8_0(1);
  o.prompt = "hello";  // 9 tokens with BOS (the case above)
  o.steps = 2;
  o.prompt_tokens = 40;
  auto r = generate(o, nullptr);
  REQUIRE(r.ok());
  REQUIRE(r->prompt_tokens.size() == 40);
  CHECK(r->prompt_tokens.front() == 1);  // one BOS, then the text again and again
  const std::vector<int> once(r->prompt_tokens.begin() + 1, r->prompt_tokens.begin() + 9);
  CHECK(std::search(r->prompt_tokens.begin() + 9, r->prompt_tokens.end(), once.begin() + 3, once.end()) != r->prompt_tokens.end());
  o.prompt_tokens = 5;  // shorter than the text: cut
  auto cut = generate(o, nullptr);
  REQUIRE(cut.ok());
  CHECK(cut->prompt_tokens.size() == 5);
  o.prompt_tokens = int(tiny_shape().context) + 1;
  auto over = generate(o, nullptr);
  REQUIRE_FALSE(over.ok());
  CHECK_THAT(over.error().message, Catch::Contains("exceed the model's context"));
  o.prompt_tokens = 10;
  o.prompt = "";
  auto empty = generate(o, nullptr);
  REQUIRE_FALSE(empty.ok());
  CHECK_THAT(empty.error().message, Catch::Contains("encodes to no tokens"));
}

TEST_CASE("engine::generate: seeded sampling repeats; another seed differs", "[engine]") {
  GenerateOptions o;
  o.synthetic_shape = tiny_shape();
  o.weights = TensorType::f16;
  o.steps = 24;
  o.temperature = 1.5f;
  o.top_p = 0.95f;
  o.seed = 7;
  auto a = generate(o, nullptr);
  auto b = generate(o, nullptr);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->tokens == b->tokens);
  o.seed = 8;
  auto c = generate(o, nullptr);
  REQUIRE(c.ok());
  CHECK(c->tokens != a->tokens);
}

TEST_CASE("engine::generate: tq3_t falls back to f32 where rows are not multiples of 64", "[engine]") {
  GenerateOptions o;
  o.synthetic_shape = tiny_shape();
  o.weights = TensorType::tq3_t;
  o.steps = 4;
  auto r = generate(o, nullptr);
  REQUIRE(r.ok());
  REQUIRE(r->fallbacks.size() == 2);
  CHECK(r->fallbacks[0] == "blk.0.ffn_down.weight: tq3_t -> f32 (row 96 not a multiple of 64)");
  CHECK(r->weights == "tq3_t+mixed");
}

TEST_CASE("engine::generate: bad options and mismatched tokenizers are errors", "[engine]") {
  GenerateOptions o;
  CHECK_FALSE(generate(o, nullptr).ok());  // neither file nor shape
  o.synthetic_shape = tiny_shape();
  o.top_p = 0;
  CHECK(generate(o, nullptr).error().where == "top_p");
  o.top_p = 1;
  const fs::path tok = temp_path("tok.bin");
  write_file(tok, tokenizer_bin(299));
  o.tokenizer_path = tok;
  auto r = generate(o, nullptr);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "tokenizer has 299 tokens, the model's vocabulary is 300");
  fs::remove(tok);
}

TEST_CASE("engine::export_gguf: export then import reproduces every tensor bit for bit", "[engine]") {
  // general.file_type is llama.h's llama_ftype, which llama.cpp prints as the model's type
  // ("llama 1B Q8_0"); the ggml_type of Q8_0 (8) would read as Q5_0.
  const std::vector<std::pair<TensorType, std::uint64_t>> file_types = {{TensorType::f16, 1}, {TensorType::q8_0, 7}, {TensorType::q4_0, 2}};
  for (const auto& [t, file_type] : file_types) {
    CAPTURE(info(t).name);
    ExportOptions o;
    o.synthetic_shape = tiny_shape();
    o.weights = t;
    o.output = temp_path("export.gguf");
    auto r = export_gguf(o);
    REQUIRE(r.ok());
    CHECK(r->synthetic);
    auto file = gguf::GgufFile::open(o.output);
    REQUIRE(file.ok());
    CHECK(file->get_string("general.architecture") == "llama");
    CHECK(file->get_uint("llama.attention.head_count_kv") == 2u);
    CHECK(file->array_length("tokenizer.ggml.tokens") == 300);
    CHECK(file->get_uint("general.file_type") == file_type);
    ThreadPool pool(2);
    auto mem = make_synthetic(tiny_shape(), "tiny", t, k_synthetic_seed, pool);
    auto back = load_gguf_model(*file, std::nullopt, pool);
    REQUIRE(mem.ok());
    REQUIRE(back.ok());
    const auto same = [](const Matrix& a, const Matrix& b) {
      return a.type == b.type && a.rows == b.rows && a.cols == b.cols && std::memcmp(a.data, b.data, a.bytes()) == 0;
    };
    CHECK(same(mem->token_embedding, back->token_embedding));
    CHECK(same(mem->classifier, back->classifier));
    for (std::size_t l = 0; l < 2; ++l) {
      const auto &x = mem->layers[l], &y = back->layers[l];
      CHECK((same(x.wq, y.wq) && same(x.wk, y.wk) && same(x.wv, y.wv) && same(x.wo, y.wo)));
      CHECK((same(x.w1, y.w1) && same(x.w2, y.w2) && same(x.w3, y.w3)));
      CHECK(std::memcmp(x.attn_norm, y.attn_norm, 64 * 4) == 0);
    }
    fs::remove(o.output);
  }
}

TEST_CASE("engine::export_gguf: synthetic weights do not depend on the thread count", "[engine]") {
  ExportOptions o;
  o.synthetic_shape = tiny_shape();
  o.weights = TensorType::q4_0;
  o.output = temp_path("t1.gguf");
  o.threads = 1;
  REQUIRE(export_gguf(o).ok());
  o.output = temp_path("t2.gguf");
  o.threads = 2;
  REQUIRE(export_gguf(o).ok());
  auto a = gguf::GgufFile::open(temp_path("t1.gguf"));
  auto b = gguf::GgufFile::open(temp_path("t2.gguf"));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK((a->bytes().size() == b->bytes().size() &&
         std::memcmp(a->bytes().data(), b->bytes().data(), a->bytes().size()) == 0));
  fs::remove(temp_path("t1.gguf"));
  fs::remove(temp_path("t2.gguf"));
}

TEST_CASE("engine::export_gguf: a failed export leaves no file behind", "[engine]") {
  ExportOptions o;
  o.synthetic_shape = tiny_shape();
  o.output = temp_path("no_such_dir") / "out.gguf";
  auto r = export_gguf(o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().kind == ErrorKind::io);
  CHECK_FALSE(fs::exists(o.output.parent_path()));
  o.output = temp_path("tq.gguf");
  o.weights = TensorType::tq2_t;  // no GGUF id
  REQUIRE_FALSE(export_gguf(o).ok());
  CHECK_FALSE(fs::exists(o.output));
}

TEST_CASE("engine::generate: reports the kernel columns it used", "[engine]") {
  GenerateOptions o;
  ModelShape s = tiny_shape();
  s.hidden = 128, s.head_dim = 32, s.ffn = 256;
  o.synthetic_shape = s;
  o.weights = TensorType::q4_0;
  o.steps = 2;
  auto r = generate(o, nullptr);
  REQUIRE(r.ok());
  const Isa best = detect_isa();
  if (best == Isa::avx512vnni) CHECK(r->kernels == "avx512vnni");
  if (best == Isa::avx2) CHECK(r->kernels == "avx2");
  o.weights = TensorType::q6_k;  // a column at every level: avx2, avx512vnni, neon, dotprod
  s.hidden = 256, s.head_dim = 64, s.ffn = 512;  // every row a multiple of 256: no f32 fallback
  o.synthetic_shape = s;
  r = generate(o, nullptr);
  REQUIRE(r.ok());
  CHECK(r->kernels == isa_name(best));
  o.weights = TensorType::q3_k;  // no AVX-512 column: avx2 on an AVX-512 CPU
  r = generate(o, nullptr);
  REQUIRE(r.ok());
  CHECK(r->kernels == (best == Isa::avx512vnni ? "avx2" : isa_name(best)));
  o.force_scalar = true;
  o.weights = TensorType::q4_0;
  r = generate(o, nullptr);
  REQUIRE(r.ok());
  CHECK(r->kernels == "scalar");
}

TEST_CASE("Sampler: NaN or infinite logits give a token of the vocabulary, never a crash (reliability D1)", "[engine]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const auto& logits : std::vector<std::vector<float>>{{nan, nan, nan}, {1.f, nan, 3.f}, {inf, 0.f, -inf}, {-inf, -inf}}) {
    for (const auto& [t, p] : std::vector<std::pair<float, float>>{{0.8f, 0.9f}, {1.f, 1.f}, {0.f, 1.f}}) {
      engine::Sampler s(t, p, 42);
      const int token = s.sample(logits);
      CHECK(token >= 0);
      CHECK(token < int(logits.size()));
    }
  }
}
