// KV formats and strategies, speculative decoding and evaluate() on the real stories260K model.
// Needs ../shared/models: exits 77 when it is absent.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>

#include "engine/engine.hpp"
#include "engine/kv/kv_pages.hpp"
#include "engine/model/loaders.hpp"
#include "engine/model/transformer.hpp"
#include "shared_data.hpp"

using namespace trilemma;
using namespace trilemma::engine;
using trilemma::testing::shared_file;

namespace {

const bool k_have_shared = (trilemma::testing::require_shared_or_skip("models/stories260K.bin"), true);

std::vector<int> expected_ids() {
  std::ifstream in(shared_file("models/stories260K.greedy.ids"));
  std::vector<int> ids;
  for (int id; in >> id;) ids.push_back(id);
  return ids;
}

GenerateOptions stories(int steps) {
  GenerateOptions o;
  o.model_path = shared_file("models/stories260K.bin");
  o.tokenizer_path = shared_file("models/tok512.bin");
  o.steps = steps;
  o.threads = 2;
  return o;
}

int first_divergence(const std::vector<int>& a, const std::vector<int>& b) {
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (a[i] != b[i]) return int(i);
  return a.size() == b.size() ? -1 : int(std::min(a.size(), b.size()));
}

EvalOptions eval_options() {
  EvalOptions e;
  e.model_path = shared_file("models/stories260K.bin");
  e.tokenizer_path = shared_file("models/tok512.bin");
  e.text_path = shared_file("models/eval-stories.txt");
  e.context = 256;
  e.threads = 2;
  return e;
}

}  // namespace

TEST_CASE("kv on stories260K: greedy ids per KV format and strategy against the fp32 reference", "[kv][shared]") {
  const auto expected = expected_ids();
  REQUIRE(expected.size() == 256);
  // Lossless enough: the 256 reference ids exactly. Otherwise at least this many first ids.
  const std::map<TensorType, int> exact_prefix = {
      {TensorType::f32, 256}, {TensorType::f16, 256}, {TensorType::q8_0, 100}, {TensorType::q4_0, 16}};
  for (TensorType format : kv_formats()) {
    std::vector<int> contiguous_tokens;
    for (KvStrategy strategy : {KvStrategy::contiguous, KvStrategy::paged, KvStrategy::sliding, KvStrategy::offload}) {
      GenerateOptions o = stories(256);
      o.kv.format = format, o.kv.strategy = strategy;
      if (strategy == KvStrategy::sliding) o.kv.options.sliding.window = 512, o.kv.options.sliding.sinks = 4;  // window >= context: full attention
      if (strategy == KvStrategy::offload) o.kv.options.offload.resident_bytes = 3 * 2 * 16 * kv_row_bytes(format, 32);  // 3 pages
      auto r = generate(o, nullptr);
      INFO((r.ok() ? "" : r.error().to_string()));
      REQUIRE(r.ok());
      const int div = first_divergence(r->tokens, expected);
      CAPTURE(r->kv, div);
      const int want = exact_prefix.at(format);
      if (want == 256) CHECK(div == -1);
      else CHECK((div == -1 || div >= want));
      // Every strategy that shows the same positions gives the same tokens as contiguous.
      if (strategy == KvStrategy::contiguous) contiguous_tokens = r->tokens;
      else CHECK(r->tokens == contiguous_tokens);
      if (strategy == KvStrategy::offload) {
        CHECK(r->kv_allocated_bytes <= o.kv.options.offload.resident_bytes);
        CHECK(r->kv_spilled_bytes > 0);
        CHECK(r->kv_slow_read_bytes > 0);
      }
    }
  }
}

TEST_CASE("kv on stories260K: sliding with W >= context and offload give the contiguous logits bit for bit", "[kv][shared]") {
  ThreadPool pool(2);
  auto m = load_llama2c(shared_file("models/stories260K.bin"), std::nullopt, pool);
  REQUIRE(m.ok());
  const auto ids = expected_ids();
  std::vector<int> prompt = {1};
  prompt.insert(prompt.end(), ids.begin(), ids.begin() + 199);
  const auto& s = m->shape;
  const auto logits = [&](KvConfig c) {
    c.layers = int(s.layers), c.heads = int(s.heads), c.kv_heads = int(s.kv_heads), c.head_dim = int(s.head_dim);
    c.capacity = 200, c.isa = detect_isa();
    auto cache = make_kv_cache(c);
    REQUIRE(cache.ok());
    Transformer tf(*m, pool, detect_isa(), std::move(cache).value());
    auto out = tf.forward(prompt, 0, true);
    REQUIRE(out.ok());
    return std::vector<float>(out->begin(), out->end());
  };
  for (TensorType format : kv_formats()) {
    CAPTURE(info(format).name);
    KvConfig c;
    c.format = format;
    const auto want = logits(c);
    KvConfig sliding = c;
    sliding.strategy = KvStrategy::sliding, sliding.options.sliding.window = 200;
    CHECK(std::memcmp(logits(sliding).data(), want.data(), want.size() * 4) == 0);
    for (std::uint64_t pages : {0, 1, 7}) {
      KvConfig off = c;
      off.strategy = KvStrategy::offload, off.options.offload.resident_bytes = pages * 2 * 16 * kv_row_bytes(format, 32);
      CAPTURE(pages);
      CHECK(std::memcmp(logits(off).data(), want.data(), want.size() * 4) == 0);
    }
    KvConfig narrow = sliding;
    narrow.options.sliding.window = 64;  // a real window: different logits after position 64
    const auto got = logits(narrow);
    CHECK(std::memcmp(got.data(), want.data(), 64 * 512 * 4) == 0);
    CHECK(std::memcmp(got.data(), want.data(), want.size() * 4) != 0);
  }
}

TEST_CASE("speculative on stories260K: greedy speculation emits the 256 reference ids for every draft source", "[speculative][shared]") {
  const auto expected = expected_ids();
  ModelShape random_draft;  // a separate model with the same vocabulary (untrained: low acceptance)
  random_draft.layers = 1, random_draft.hidden = 32, random_draft.heads = 4, random_draft.kv_heads = 4, random_draft.head_dim = 8;
  random_draft.ffn = 64, random_draft.vocab = 512, random_draft.context = 512;
  struct Case {
    DraftKind kind;
    int layers;
    std::optional<TensorType> weights;
    std::optional<std::filesystem::path> path;
    std::optional<ModelShape> shape;
  };
  for (const Case& c : {Case{DraftKind::model, 0, std::nullopt, shared_file("models/stories260K.gguf"), std::nullopt},
                        Case{DraftKind::model, 0, std::nullopt, std::nullopt, random_draft},
                        Case{DraftKind::self, 0, TensorType::q4_0, std::nullopt, std::nullopt},
                        Case{DraftKind::self, 0, TensorType::tq2_t, std::nullopt, std::nullopt},
                        Case{DraftKind::layers, 2, std::nullopt, std::nullopt, std::nullopt}}) {
    GenerateOptions o = stories(256);
    o.draft = c.kind, o.draft_layers = c.layers, o.draft_weights = c.weights, o.draft_len = 4;
    o.draft_model_path = c.path, o.draft_synthetic_shape = c.shape;
    if (c.path) o.draft_tokenizer_path = std::nullopt;  // the GGUF's own vocabulary, compared piece by piece
    auto r = generate(o, nullptr);
    INFO((r.ok() ? "" : r.error().to_string()));
    REQUIRE(r.ok());
    WARN(r->draft << ": acceptance " << r->acceptance_rate << ", tokens per target pass " << r->tokens_per_pass);
    CHECK(first_divergence(r->tokens, expected) == -1);
  }
}

TEST_CASE("evaluate on stories260K: the reference configuration has zero KL; quantized KV and windows cost some", "[eval][shared]") {
  EvalOptions e = eval_options();
  auto ref = evaluate(e);
  INFO((ref.ok() ? "" : ref.error().to_string()));
  REQUIRE(ref.ok());
  CHECK(ref->scored > 400);
  CHECK(ref->kl_mean == 0.0);
  CHECK(ref->top1_agreement == 1.0);
  CHECK(ref->perplexity == ref->reference_perplexity);
  CHECK(ref->perplexity > 1.0);
  CHECK(ref->perplexity < 50.0);  // a trained model on text of its own style
  e.kv.format = TensorType::q8_0;
  auto q8 = evaluate(e);
  REQUIRE(q8.ok());
  e.kv.format = TensorType::q4_0;
  auto q4 = evaluate(e);
  REQUIRE(q4.ok());
  e.kv.format = TensorType::f32, e.kv.strategy = KvStrategy::sliding, e.kv.options.sliding.window = 64;
  auto w64 = evaluate(e);
  REQUIRE(w64.ok());
  e.kv.options.sliding.sinks = 4;
  auto w64s = evaluate(e);
  REQUIRE(w64s.ok());
  CAPTURE(q8->kl_mean, q4->kl_mean, w64->kl_mean, w64s->kl_mean);
  CHECK(q8->kl_mean > 0.0);
  CHECK(q8->kl_mean < q4->kl_mean);
  CHECK(q8->top1_agreement > 0.95);
  CHECK(w64->kl_mean > 0.0);
  CHECK(w64s->kl_mean < w64->kl_mean);  // attention sinks help (StreamingLLM)
  CHECK(ref->reference_perplexity == q4->reference_perplexity);
  e = eval_options();
  e.text_path = "/nonexistent/text.txt";
  CHECK(evaluate(e).error().kind == ErrorKind::io);
}
