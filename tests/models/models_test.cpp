#include <catch2/catch.hpp>

#include "models/catalog.hpp"
#include "models/hf_config.hpp"
#include "models/measured_loss.hpp"

using namespace trilemma;

TEST_CASE("models::builtin_models: 20+ models whose counts match the publishers'", "[models]") {
  auto all = models::builtin_models();
  REQUIRE(all.ok());
  CHECK(all->size() >= 20);
  for (const auto& m : *all) {
    CAPTURE(m.id);
    REQUIRE(m.published_total);
    const double ratio = count_parameters(m.shape).total() / *m.published_total;
    // Llama-2-7B is published as "7B" for 6.74B parameters; everything else is within 2%.
    CHECK(ratio == Approx(1.0).margin(m.id == "llama-2-7b" ? 0.04 : 0.02));
    CHECK_FALSE(m.sources.empty());
  }
}

TEST_CASE("models::resolve_model: unknown names are an input error with suggestions", "[models]") {
  auto m = models::resolve_model("llama-3.2");
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().kind == ErrorKind::input);
  CHECK(m.error().message.find("llama-3.2-1b") != std::string::npos);
}

TEST_CASE("models::parse_hf_config: a Qwen2.5-0.5B config.json", "[models]") {
  const std::string json = R"({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
    "hidden_size": 896, "intermediate_size": 4864, "num_attention_heads": 14, "num_hidden_layers": 24,
    "num_key_value_heads": 2, "vocab_size": 151936, "max_position_embeddings": 32768,
    "rope_theta": 1000000.0, "tie_word_embeddings": true, "use_sliding_window": false, "sliding_window": 32768})";
  auto m = models::parse_hf_config(json, "qwen/config.json");
  REQUIRE(m.ok());
  CHECK(m->shape.head_dim == 64);
  CHECK(m->shape.attention_bias);
  CHECK(m->shape.rope_layout == RopeLayout::neox);
  CHECK(m->shape.sliding_window == 0);
  CHECK(count_parameters(m->shape).total() == Approx(0.494e9).epsilon(0.01));
}

TEST_CASE("models::parse_hf_config: Qwen2-MoE counts its shared expert", "[models]") {
  // Qwen2-57B-A14B's config.json (hf.co/Qwen/Qwen2-57B-A14B): 64 routed experts of 2560, 8 per
  // token, and a shared expert of 20480 that every token runs. Published: 57B total, 14B active.
  const std::string json = R"({"architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe",
    "hidden_size": 3584, "intermediate_size": 18944, "moe_intermediate_size": 2560,
    "shared_expert_intermediate_size": 20480, "num_experts": 64, "num_experts_per_tok": 8,
    "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 28, "vocab_size": 151936,
    "max_position_embeddings": 131072, "rope_theta": 1000000.0, "tie_word_embeddings": false})";
  auto m = models::parse_hf_config(json, "qwen2-57b/config.json");
  INFO((m.ok() ? "" : m.error().to_string()));
  REQUIRE(m.ok());
  CHECK(m->shape.moe.shared_experts == 8u);
  const auto c = count_parameters(m->shape);
  CHECK(c.total() == Approx(57.4e9).epsilon(0.02));
  CHECK(c.active_per_token == Approx(14.2e9).epsilon(0.05));
  // A shared expert that is not a whole number of routed experts is refused by name.
  std::string odd = json;
  odd.replace(odd.find("20480"), 5, "20000");
  auto bad = models::parse_hf_config(odd, "c.json");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().where == "shared_expert_intermediate_size");
}

TEST_CASE("models::parse_hf_config: bad input names the key", "[models]") {
  SECTION("malformed JSON") {
    auto m = models::parse_hf_config("{\"hidden_size\": 12", "c.json");
    REQUIRE_FALSE(m.ok());
    CHECK(m.error().to_string().rfind("c.json:1:", 0) == 0);  // line:column, as YAML's (issue 50)
    CHECK(m.error().to_string().find("malformed JSON") != std::string::npos);
  }
  SECTION("missing key") {
    auto m = models::parse_hf_config(R"({"hidden_size": 64, "num_attention_heads": 8, "vocab_size": 10, "max_position_embeddings": 16})", "c.json");
    REQUIRE_FALSE(m.ok());
    CHECK(m.error().where == "num_hidden_layers");
  }
  SECTION("wrong type") {
    auto m = models::parse_hf_config(R"({"num_hidden_layers": "many", "hidden_size": 64})", "c.json");
    REQUIRE_FALSE(m.ok());
    CHECK(m.error().message.find("whole number") != std::string::npos);
  }
  SECTION("a model_type that is not a string (fuzz finding: a JSON type error escaped)") {
    auto m = models::parse_hf_config(R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 8,
      "vocab_size": 10, "max_position_embeddings": 16, "model_type": 151936})", "c.json");
    REQUIRE_FALSE(m.ok());
    CHECK(m.error().where == "model_type");
  }
  SECTION("a vocabulary size beyond int, written as a float (fuzz finding: an undefined conversion)") {
    auto m = models::parse_hf_config(R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 8,
      "vocab_size": 151930999999.0, "max_position_embeddings": 16})", "c.json");
    REQUIRE_FALSE(m.ok());
    CHECK(m.error().where == "vocab_size");
  }
  SECTION("impossible shape") {
    auto m = models::parse_hf_config(R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 8,
      "num_key_value_heads": 3, "vocab_size": 10, "max_position_embeddings": 16, "intermediate_size": 32})", "c.json");
    REQUIRE_FALSE(m.ok());
    CHECK(m.error().message.find("kv_heads") != std::string::npos);
  }
}

TEST_CASE("models::parse_model_yaml: unknown keys and bad shapes are refused", "[models]") {
  const std::string base = R"(id: tiny
name: Tiny
publisher: Test
architecture: llama
tokenizer_family: test
shape: {layers: 2, hidden: 64, heads: 8, kv_heads: 4, head_dim: 8, ffn: 128, vocab: 100, tied_embeddings: true,
        context: 128, rope_theta: 10000, rope_layout: adjacent, attention_bias: false, ffn_gated: true}
params: {published_total: 1.0e+5, source: https://example.org}
sources: [{fields: [shape], url: https://example.org}]
)";
  REQUIRE(models::parse_model_yaml(base, "models/tiny.yaml", "tiny").ok());
  auto typo = models::parse_model_yaml(base + "notez: x\n", "models/tiny.yaml", "tiny");
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.error().message == "notez: unknown key");
  std::string bad = base;
  bad.replace(bad.find("kv_heads: 4"), 11, "kv_heads: 3");
  auto shape = models::parse_model_yaml(bad, "models/tiny.yaml", "tiny");
  REQUIRE_FALSE(shape.ok());
  CHECK(shape.error().message.find("shape.kv_heads") != std::string::npos);
}

TEST_CASE("models::parse_measured_kl: a value, llama-perplexity output, or trilemma eval JSON", "[models]") {
  auto v = models::parse_measured_kl("q4_k_m=0.0313");
  REQUIRE(v.ok());
  CHECK(v->weights == WeightFormat::q4_k_m);
  CHECK(v->kld == Approx(0.0313));
  // The last "Mean    KLD:" line counts, with or without llama.cpp's timestamp prefix.
  auto log = models::kld_from_llama_perplexity(
      "====== KL divergence statistics ======\nMean    KLD:   0.5 ±   0.1\n0.13.291.205 I Mean    KLD:   0.012345 ±   0.000456\n"
      "Maximum KLD:  11.2\n",
      "kld.log");
  REQUIRE(log.ok());
  CHECK(*log == Approx(0.012345));
  CHECK_FALSE(models::kld_from_llama_perplexity("Final estimate: PPL = 6.1\n", "ppl.log").ok());
  CHECK_FALSE(models::kld_from_llama_perplexity("Mean    KLD:   nan\n", "bad.log").ok());
  CHECK_FALSE(models::parse_measured_kl("q4_k_m=0").ok());
  CHECK_FALSE(models::parse_measured_kl("q4_k_m=1e400").ok());
  CHECK_FALSE(models::parse_measured_kl("bf16=0.001").ok());
  CHECK(models::parse_measured_kl("nope=0.1").error().kind == ErrorKind::usage);
  const auto missing = models::parse_measured_kl("/nonexistent/eval.json");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().file == "/nonexistent/eval.json");
}
