// Speculative decoding on synthetic models: greedy speculation emits plain greedy's tokens for
// every draft source, and rejection sampling reproduces the target's distribution (chi-square
// with a fixed seed; the same statistic rejects a wrong correction). Needs no shared data.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include "engine/engine.hpp"
#include "engine/kv/kv_pages.hpp"
#include "engine/model/loaders.hpp"
#include "engine/model/prepare.hpp"
#include "engine/model/transformer.hpp"
#include "engine/sampling/distribution.hpp"
#include "engine/speculative/speculative.hpp"
#include "engine/speculative/verify.hpp"
#include "engine_fixtures.hpp"

using namespace trilemma;
using namespace trilemma::engine;
using namespace trilemma::testing;

namespace {

ModelShape small_vocab_shape(int layers) {
  ModelShape s = tiny_shape();
  s.layers = std::uint32_t(layers);
  s.vocab = 12;
  return s;
}

std::unique_ptr<KvCache> cache(const Model& m, int capacity) {
  const auto& s = m.shape;
  return make_contiguous_f32(int(s.layers), capacity, int(s.heads), int(s.kv_heads), int(s.head_dim));
}

// Pearson chi-square of counts against probabilities, bins with expectation < 5 pooled.
std::pair<double, int> chi_square(const std::vector<int>& counts, const std::vector<float>& p, int n) {
  double chi = 0, pooled_e = 0, pooled_o = 0;
  int bins = 0;
  for (std::size_t v = 0; v < p.size(); ++v) {
    const double e = double(p[v]) * n;
    if (e < 5) {
      pooled_e += e, pooled_o += counts[v];
      continue;
    }
    chi += (counts[v] - e) * (counts[v] - e) / e;
    ++bins;
  }
  if (pooled_e >= 1) chi += (pooled_o - pooled_e) * (pooled_o - pooled_e) / pooled_e, ++bins;
  return {chi, bins - 1};
}

// Upper 0.1% point of chi-square with df degrees of freedom (Wilson-Hilferty, z = 3.09).
double chi_critical(int df) {
  const double a = 2.0 / (9.0 * df);
  return df * std::pow(1.0 - a + 3.09 * std::sqrt(a), 3.0);
}

GenerateOptions spec_options() {
  GenerateOptions o;
  o.synthetic_shape = tiny_shape();
  o.synthetic_name = "tiny";
  o.weights = TensorType::q8_0;
  o.threads = 2;
  o.prompt = "hello";
  o.steps = 40;
  o.draft_len = 3;
  o.measure_baseline = true;
  return o;
}

}  // namespace

TEST_CASE("speculative::verify_greedy: accepts the argmax prefix, then corrects or adds a bonus token", "[speculative]") {
  // vocab 3; argmax per row: 2, 0, 1
  const std::vector<float> logits = {0, 1, 5, 9, 0, 0, 0, 3, 1};
  auto v = verify_greedy(std::vector<int>{2, 0}, logits, 3);
  CHECK(v.accepted == 2);
  CHECK(v.tokens == std::vector<int>{2, 0, 1});
  v = verify_greedy(std::vector<int>{2, 1}, logits, 3);
  CHECK(v.accepted == 1);
  CHECK(v.tokens == std::vector<int>{2, 0});
  v = verify_greedy(std::vector<int>{0, 0}, logits, 3);
  CHECK(v.accepted == 0);
  CHECK(v.tokens == std::vector<int>{2});
}

TEST_CASE("speculative: greedy speculation emits plain greedy's tokens for every draft source", "[speculative]") {
  GenerateOptions plain = spec_options();
  plain.measure_baseline = false;
  auto want = generate(plain, nullptr);
  REQUIRE(want.ok());
  REQUIRE(want->tokens.size() >= 10);
  ModelShape draft_shape = tiny_shape();
  draft_shape.layers = 1, draft_shape.hidden = 32, draft_shape.heads = 2, draft_shape.kv_heads = 1, draft_shape.ffn = 64;
  struct Case {
    DraftKind kind;
    int layers;
    std::optional<TensorType> weights;
    std::optional<ModelShape> shape;
  };
  for (const Case& c : {Case{DraftKind::self, 0, TensorType::q4_0, std::nullopt}, Case{DraftKind::layers, 1, std::nullopt, std::nullopt},
                        Case{DraftKind::model, 0, std::nullopt, draft_shape}}) {
    for (int g : {1, 3, 6}) {
      GenerateOptions o = spec_options();
      o.draft = c.kind, o.draft_layers = c.layers, o.draft_weights = c.weights, o.draft_synthetic_shape = c.shape;
      o.draft_len = g;
      std::string streamed;
      auto r = generate(o, [&](std::string_view piece) { streamed += piece; });
      INFO((r.ok() ? "" : r.error().to_string()));
      REQUIRE(r.ok());
      CAPTURE(r->draft, g, r->acceptance_rate, r->tokens_per_pass);
      CHECK(r->tokens == want->tokens);
      CHECK(r->baseline_tokens == want->tokens);
      CHECK(streamed == want->text);
      // Every pass commits a token, except one that ends on a stop token (EOS): nothing is kept.
      const bool stopped = int(r->tokens.size()) < o.steps;
      CHECK(r->target_passes <= int(r->tokens.size()) + (stopped ? 1 : 0));
      CHECK(r->tokens_per_pass >= double(r->tokens.size()) / double(r->tokens.size() + (stopped ? 1 : 0)));
      CHECK(r->tokens_per_pass <= g + 1.0);
      CHECK(r->accepted <= r->drafted);
      CHECK(r->speculative_speedup.has_value());
      CHECK(r->memory.kv_resident > r->kv_allocated_bytes);  // the draft's KV is counted
      if (c.kind == DraftKind::layers) CHECK(r->memory.draft_weights == 0);
      else CHECK(r->memory.draft_weights > 0);
    }
  }
}

TEST_CASE("speculative: greedy speculation emits plain greedy's tokens on the x4 tiles, the f16 prefill tiles, avx2/neon and scalar paths", "[speculative]") {
  // hidden and ffn are multiples of 128, so q8_0 / q4_0 targets run the AVX-512 VNNI tiles,
  // whose batched verify pass must give the single-token decode's logits bit for bit.
  ModelShape target = tiny_shape();
  target.layers = 3, target.hidden = 512, target.heads = 8, target.kv_heads = 2, target.head_dim = 64, target.ffn = 640;
  target.vocab = 512;
  ModelShape draft_shape = target;
  draft_shape.layers = 1, draft_shape.hidden = 128, draft_shape.heads = 2, draft_shape.ffn = 256;
  struct Path {
    const char* isa_cap;  // TRILEMMA_ISA for the run; nullptr = the CPU's best
    bool force_scalar;
  };
  const char* saved = std::getenv("TRILEMMA_ISA");
  const std::string saved_isa = saved != nullptr ? saved : "";
  // The CPU's best column, the one below it (avx2 under avx512vnni, neon under dotprod), scalar.
#if defined(__aarch64__)
  const char* lower = "neon";
#else
  const char* lower = "avx2";
#endif
  for (const Path path : {Path{nullptr, false}, Path{lower, false}, Path{nullptr, true}}) {
    if (path.isa_cap != nullptr) ::setenv("TRILEMMA_ISA", path.isa_cap, 1);
    else ::unsetenv("TRILEMMA_ISA");
    // f16 with a prompt of 16 tokens or more, on the CPU's best column: where it has AMX-BF16 the
    // prompt's prefill takes the tile rows, whose floats differ from decode's; speculation runs the
    // prompt the same way, so its tokens are still plain greedy's.
    for (TensorType weights : {TensorType::q8_0, TensorType::q4_0, TensorType::f16}) {
      if (weights == TensorType::f16 && (path.isa_cap != nullptr || path.force_scalar)) continue;  // the tiles are the best column's
      GenerateOptions plain = spec_options();
      plain.synthetic_shape = target, plain.weights = weights, plain.force_scalar = path.force_scalar;
      plain.measure_baseline = false, plain.steps = 48;
      if (weights == TensorType::f16) plain.prompt = "hello there, friend";
      auto want = generate(plain, nullptr);
      INFO((want.ok() ? "" : want.error().to_string()));
      REQUIRE(want.ok());
      CAPTURE(want->kernels, info(weights).name);
      if (weights == TensorType::f16) CHECK(want->prompt_tokens.size() >= 16);  // Matmul::k_min_tile_tokens
      struct Case {
        DraftKind kind;
        int layers;
        std::optional<TensorType> weights;
        std::optional<ModelShape> shape;
      };
      for (const Case& c : {Case{DraftKind::self, 0, TensorType::q4_0, std::nullopt}, Case{DraftKind::layers, 1, std::nullopt, std::nullopt},
                            Case{DraftKind::model, 0, std::nullopt, draft_shape}}) {
        // Draft lengths 1, 4 and 7 on the best column; one length on the others, whose job is the
        // kernels' batched rows, not the speculation logic (the scalar column costs minutes
        // under ASan and qemu otherwise).
        const bool best = path.isa_cap == nullptr && !path.force_scalar;
        for (int g : best ? std::vector<int>{1, 4, 7} : std::vector<int>{4}) {
          GenerateOptions o = plain;
          o.draft = c.kind, o.draft_layers = c.layers, o.draft_weights = c.weights, o.draft_synthetic_shape = c.shape;
          o.draft_len = g;
          auto r = generate(o, nullptr);
          INFO((r.ok() ? "" : r.error().to_string()));
          REQUIRE(r.ok());
          CAPTURE(r->draft, g, r->acceptance_rate);
          CHECK(r->kernels == want->kernels);
          CHECK(r->tokens == want->tokens);
        }
      }
    }
  }
  if (saved != nullptr) ::setenv("TRILEMMA_ISA", saved_isa.c_str(), 1);
  else ::unsetenv("TRILEMMA_ISA");
}

TEST_CASE("speculative: draft sources that cannot work are errors", "[speculative]") {
  GenerateOptions o = spec_options();
  o.draft = DraftKind::layers;
  o.draft_layers = 2;  // the target has 2
  auto r = generate(o, nullptr);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().where == "draft_layers");
  CHECK(r.error().message == "must be in [1, 1] for a target of 2 layers, got 2");
  o.draft = DraftKind::self;
  r = generate(o, nullptr);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().where == "draft_weights");
  o.draft = DraftKind::model;
  ModelShape other = tiny_shape();
  other.vocab = 320;
  o.draft_synthetic_shape = other;
  r = generate(o, nullptr);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().where == "draft vocabulary");
  CHECK(r.error().message == "the draft model has 320 tokens, the target 300");
  o = spec_options();
  o.draft = DraftKind::layers, o.draft_layers = 1, o.draft_len = 0;
  CHECK(generate(o, nullptr).error().where == "draft_len");
}

TEST_CASE("speculative_decode: the target keeps plain prefill's K/V for the prompt, whatever kernels the prompt takes", "[speculative]") {
  // An f16 target runs a 20-token prompt on the prefill tiles where the CPU has AMX-BF16. Until
  // session 26 speculation ran the prompt's last token inside its first verify pass (decode's
  // kernels), so that position's K/V differed from plain prefill's. Read back through one more
  // decode step, whose logits depend on every stored row.
  ModelShape s = tiny_shape();
  s.layers = 2, s.hidden = 512, s.heads = 8, s.kv_heads = 2, s.head_dim = 64, s.ffn = 640, s.vocab = 512;
  ThreadPool pool(2);
  auto m = make_synthetic(s, "f16", TensorType::f16, 31, pool);
  REQUIRE(m.ok());
  const Isa isa = detect_isa();
  pack_for_isa(*m, isa, pool);
  if (select_rows_amx(*find_kernels(TensorType::f16), isa) == nullptr)
    WARN("no AMX-BF16 f16 rows on this CPU (or TRILEMMA_AMX=0): prompt and decode kernels agree here, so this run cannot tell the two orders apart");
  std::vector<int> prompt;
  for (int i = 0; i < 20; ++i) prompt.push_back((i * 53 + 7) % int(s.vocab));
  Transformer plain(*m, pool, isa, cache(*m, 64)), target(*m, pool, isa, cache(*m, 64)), draft(*m, pool, isa, cache(*m, 64));
  REQUIRE(plain.forward(prompt, 0).ok());
  SpeculativeParams sp;
  sp.draft_len = 3, sp.steps = 1;  // one token: round 1 alone, from the prefill's logits
  auto r = speculative_decode(target, draft, prompt, sp, nullptr);
  REQUIRE(r.ok());
  REQUIRE(r->tokens.size() == 1);
  const int probe = 11;
  auto after_plain = plain.forward({&probe, 1}, int(prompt.size()));
  REQUIRE(after_plain.ok());
  const std::vector<float> want(after_plain->begin(), after_plain->end());
  auto after_spec = target.forward({&probe, 1}, int(prompt.size()));
  REQUIRE(after_spec.ok());
  CHECK(std::memcmp(want.data(), after_spec->data(), want.size() * sizeof(float)) == 0);
}

TEST_CASE("speculative::verify_sampled: first tokens follow the target's distribution; a wrong correction does not", "[speculative]") {
  ThreadPool pool(1);
  auto target = make_synthetic(small_vocab_shape(2), "target", std::nullopt, 21, pool);
  auto draft = make_synthetic(small_vocab_shape(1), "draft", std::nullopt, 22, pool);
  REQUIRE(target.ok());
  REQUIRE(draft.ok());
  const std::vector<int> prefix = {1, 5, 7, 3};
  Transformer t(*target, pool, Isa::scalar, cache(*target, 16)), d(*draft, pool, Isa::scalar, cache(*draft, 16));
  const float temperature = 0.35f;  // sharpens the synthetic logits so p and q differ clearly
  std::vector<float> p, q, p2;
  token_probabilities(*t.forward(prefix, 0), temperature, 1.0f, p);
  token_probabilities(*d.forward(prefix, 0), temperature, 1.0f, q);
  p2 = p;  // the bonus row; irrelevant to the first token
  double tv = 0;
  for (std::size_t v = 0; v < p.size(); ++v) tv += 0.5 * std::fabs(p[v] - q[v]);
  CAPTURE(tv);
  REQUIRE(tv > 0.2);  // the draft is a poor guess: many rejections exercise the correction
  const int n = 60000;
  const std::uint64_t seed = 1234;
  CAPTURE(seed, n);
  Rng rng(seed);
  std::vector<int> right(p.size()), wrong(p.size());
  std::vector<float> both(p);
  both.insert(both.end(), p2.begin(), p2.end());
  for (int i = 0; i < n; ++i) {
    const int drafted = sample_from(q, rng.uniform());
    ++right[std::size_t(verify_sampled(std::vector<int>{drafted}, both, q, int(p.size()), rng).tokens[0])];
    // A wrong correction: on rejection, sample from p itself instead of norm(max(0, p - q)).
    const bool accept = rng.uniform() * q[std::size_t(drafted)] < p[std::size_t(drafted)];
    ++wrong[std::size_t(accept ? drafted : sample_from(p, rng.uniform()))];
  }
  const auto [chi_right, df] = chi_square(right, p, n);
  const auto [chi_wrong, df_wrong] = chi_square(wrong, p, n);
  CAPTURE(chi_right, chi_wrong, df, chi_critical(df));
  CHECK(chi_right < chi_critical(df));
  CHECK(chi_wrong > chi_critical(df_wrong));
}

TEST_CASE("speculative_decode: sampled first tokens follow the target's distribution end to end", "[speculative]") {
  ThreadPool pool(1);
  auto target = make_synthetic(small_vocab_shape(2), "target", std::nullopt, 21, pool);
  auto draft = make_synthetic(small_vocab_shape(1), "draft", std::nullopt, 22, pool);
  REQUIRE(target.ok());
  REQUIRE(draft.ok());
  const std::vector<int> prefix = {1, 5, 7, 3};
  Transformer t(*target, pool, Isa::scalar, cache(*target, 16)), d(*draft, pool, Isa::scalar, cache(*draft, 16));
  SpeculativeParams sp;
  sp.draft_len = 3, sp.steps = 4, sp.temperature = 0.35f;
  std::vector<float> p;
  token_probabilities(*t.forward(prefix, 0), sp.temperature, 1.0f, p);
  const int n = 3000;
  std::vector<int> counts(p.size());
  int accepted = 0, drafted = 0;
  for (int i = 0; i < n; ++i) {
    t.cache().reset(), d.cache().reset();
    sp.seed = 1000 + std::uint64_t(i);
    auto r = speculative_decode(t, d, prefix, sp, nullptr);
    REQUIRE(r.ok());
    REQUIRE(r->tokens.size() == 4);
    ++counts[std::size_t(r->tokens[0])];
    accepted += r->accepted, drafted += r->drafted;
  }
  const auto [chi, df] = chi_square(counts, p, n);
  CAPTURE(chi, df, chi_critical(df), double(accepted) / drafted);
  CHECK(chi < chi_critical(df));
  CHECK(accepted > 0);
  CHECK(accepted < drafted);
}

TEST_CASE("speculative_speedup_model: Leviathan et al.'s formula at its limits", "[speculative]") {
  CHECK(speculative_speedup_model(0.0, 4, 0.0) == Approx(1.0));
  CHECK(speculative_speedup_model(1.0, 4, 0.0) == Approx(5.0));
  CHECK(speculative_speedup_model(0.8, 4, 0.1) == Approx((1 - std::pow(0.8, 5)) / (0.2 * 1.4)));
}
