// The facade on synthetic models, export/import round trips, and loaders fed bad files built
// in code. Needs no shared data.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/engine.hpp"
#include "engine/gguf/gguf_file.hpp"
#include "engine/model/loaders.hpp"
#include "engine/model_source.hpp"
#include "engine/tokenizer/tokenizer.hpp"

using namespace trilemma;
using namespace trilemma::engine;
namespace fs = std::filesystem;

namespace {

ModelShape tiny_shape() {
  ModelShape s;
  s.layers = 2;
  s.hidden = 64;
  s.heads = 4;
  s.kv_heads = 2;
  s.head_dim = 16;
  s.ffn = 96;  // 96 % 64 != 0: tq formats fall back on ffn_down
  s.vocab = 300;
  s.context = 64;
  s.tied_embeddings = false;
  return s;
}

fs::path temp_path(const std::string& name) { return fs::temp_directory_path() / ("trilemma_engine_test_" + name); }

void write_file(const fs::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

template <class T>
void put(std::vector<std::byte>& b, T v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  b.insert(b.end(), p, p + sizeof(T));
}

// A llama2.c tokenizer.bin with `n` tokens: <unk>, <s>, </s>, then single letters / filler.
std::vector<std::byte> tokenizer_bin(int n) {
  std::vector<std::byte> b;
  put<std::int32_t>(b, 8);
  for (int i = 0; i < n; ++i) {
    const std::string piece = i == 0 ? "<unk>" : i == 1 ? "<s>" : i == 2 ? "</s>" : "t" + std::to_string(i);
    put<float>(b, 0.0f);
    put<std::int32_t>(b, std::int32_t(piece.size()));
    for (char c : piece) b.push_back(std::byte(c));
  }
  return b;
}

}  // namespace

TEST_CASE("engine::generate: synthetic q8_0 model, greedy, deterministic and labelled synthetic", "[engine]") {
  GenerateOptions o;
  o.synthetic_shape = tiny_shape();
  o.synthetic_name = "tiny";
  o.weights = TensorType::q8_0;
  o.threads = 2;
  o.prompt = "hello";
  o.steps = 12;
  std::string streamed;
  auto a = generate(o, [&](std::string_view piece) { streamed += piece; });
  REQUIRE(a.ok());
  CHECK(a->synthetic);
  CHECK(a->weights == "q8_0");
  CHECK(a->threads == 2);
  CHECK(a->prompt_tokens.front() == 1);
  CHECK(a->prompt_tokens.size() == 1 + 5);  // BOS, then a byte token per letter (no " " piece)
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
  for (TensorType t : {TensorType::f16, TensorType::q8_0, TensorType::q4_0}) {
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

TEST_CASE("engine::load_gguf_model: unknown tensor types and wrong dims are refused by name", "[engine]") {
  ExportOptions o;
  o.synthetic_shape = tiny_shape();
  o.weights = TensorType::f16;
  o.output = temp_path("patch.gguf");
  REQUIRE(export_gguf(o).ok());
  auto file = gguf::GgufFile::open(o.output);
  REQUIRE(file.ok());
  std::vector<std::byte> bytes(file->bytes().begin(), file->bytes().end());
  fs::remove(o.output);
  // Patch blk.1.attn_k.weight's type id (after name, n_dims, 2 dims) to an unknown one.
  const std::string name = "blk.1.attn_k.weight";
  const auto it = std::search(bytes.begin(), bytes.end(), reinterpret_cast<const std::byte*>(name.data()),
                              reinterpret_cast<const std::byte*>(name.data() + name.size()));
  REQUIRE(it != bytes.end());
  const std::size_t type_at = std::size_t(it - bytes.begin()) + name.size() + 4 + 16;
  std::vector<std::byte> unknown = bytes;
  const std::uint32_t bad = 4000;
  std::memcpy(&unknown[type_at], &bad, 4);
  auto patched = gguf::GgufFile::parse(unknown, "patched.gguf");
  REQUIRE(patched.ok());  // the header reader lists it
  ThreadPool pool(1);
  auto m = load_gguf_model(*patched, std::nullopt, pool);
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().where == name);
  CHECK(m.error().message == "unknown tensor type id 4000");
  // A kv-head count that disagrees with the tensors.
  std::vector<std::byte> wrong = bytes;
  const std::string key = "llama.attention.head_count_kv";
  const auto k = std::search(wrong.begin(), wrong.end(), reinterpret_cast<const std::byte*>(key.data()),
                             reinterpret_cast<const std::byte*>(key.data() + key.size()));
  const std::uint32_t four = 4;
  std::memcpy(&wrong[std::size_t(k - wrong.begin()) + key.size() + 4], &four, 4);
  auto m2 = load_gguf_model(*gguf::GgufFile::parse(wrong, "wrong.gguf"), std::nullopt, pool);
  REQUIRE_FALSE(m2.ok());
  CHECK(m2.error().where == "blk.0.attn_k.weight");
}

TEST_CASE("engine::load_llama2c: truncated and hostile checkpoints are errors", "[engine]") {
  ThreadPool pool(1);
  const fs::path path = temp_path("ckpt.bin");
  std::vector<std::byte> b;
  for (std::int32_t v : {64, 172, 5, 8, 4, 512, 512}) put(b, v);
  b.resize(b.size() + 1000);  // far too few weights
  write_file(path, b);
  auto r = load_llama2c(path, std::nullopt, pool);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("weights: header needs") == 0);
  std::vector<std::byte> neg;
  for (std::int32_t v : {64, -172, 5, 8, 4, 512, 512}) put(neg, v);
  write_file(path, neg);
  r = load_llama2c(path, std::nullopt, pool);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "header.hidden_dim: must be > 0, got -172");
  std::vector<std::byte> huge;
  for (std::int32_t v : {1 << 30, 1 << 30, 1 << 30, 1, 1, 1 << 30, 1}) put(huge, v);
  write_file(path, huge);
  r = load_llama2c(path, std::nullopt, pool);
  REQUIRE_FALSE(r.ok());
  write_file(path, std::vector<std::byte>(10));
  CHECK_FALSE(load_llama2c(path, std::nullopt, pool).ok());
  fs::remove(path);
}

TEST_CASE("engine::Tokenizer: truncated tokenizer files are errors; every prefix is safe", "[engine]") {
  const fs::path path = temp_path("tok_trunc.bin");
  const auto full = tokenizer_bin(20);
  write_file(path, full);
  REQUIRE(Tokenizer::load_llama2c(path).ok());
  for (std::size_t n = 1; n < full.size(); ++n) {
    write_file(path, std::vector<std::byte>(full.begin(), full.begin() + std::ptrdiff_t(n)));
    auto t = Tokenizer::load_llama2c(path);
    // A prefix that ends exactly between entries is a valid, smaller vocabulary.
    if (t.ok()) CHECK(t->vocab_size() < 20);
  }
  fs::remove(path);
}

TEST_CASE("engine::Tokenizer: byte fallback and merges", "[engine]") {
  const Tokenizer t = Tokenizer::from_pieces({"<unk>", "<s>", "</s>", " ", "a", "b", "ab", " ab", "<0xC3>", "<0xA9>"},
                                             {0, 0, 0, 0, 0, 0, 1, 2, 0, 0}, {}, 1, 2);
  CHECK(t.encode("ab", true, false) == std::vector<int>{1, 7});
  CHECK(t.encode("é", false, true) == std::vector<int>{3, 8, 9, 2});
  CHECK(t.decode(1, 7) == "ab");
  CHECK(t.decode(7, 8) == "\xC3");
  CHECK(t.encode("", true, false) == std::vector<int>{1});
}
