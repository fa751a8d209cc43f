// The KV-cache term: which published rows make the table, how one run's KLD and perplexity rows
// merge, the mid and range, and how the term joins the weights' loss.
#include <catch2/catch.hpp>

#include <cmath>

#include "accuracy/accuracy_model.hpp"
#include "accuracy/kv_loss.hpp"

using namespace trilemma;

namespace {

measurements::LossRow kv_row(const std::string& id, const std::string& model, const std::string& weights,
                             const std::string& k, const std::string& v, const std::string& metric, double value,
                             std::optional<double> baseline = std::nullopt, const std::string& notes = "") {
  measurements::LossRow r;
  r.id = id, r.model = model, r.family = "f", r.base_precision = "f16", r.format = weights;
  r.kv_k = k, r.kv_v = v, r.metric = metric, r.value = value, r.baseline_value = baseline, r.notes = notes;
  r.source_url = "https://example.org/" + model;
  return r;
}

}  // namespace

TEST_CASE("kv loss: the table from rows that isolate the cache", "[accuracy]") {
  constexpr double knee = 1e-4;
  const std::vector<measurements::LossRow> rows = {
      // q4_0 K and V on full weights: +10%, the only plain measurement of both -> the mid.
      kv_row("a/kv-q4_0/ppl", "A", "f16", "q4_0", "q4_0", "ppl", 11.0, 10.0),
      // q4_0 K alone on quantized weights, against the same weights with an f16 cache: counted,
      // but not in the range (a plan quantizes K and V together).
      kv_row("b/k-q4_0/ppl", "B", "q4_0", "q4_0", "", "ppl_delta_pct", 5.0, std::nullopt,
             "baseline = same weights with f16 K cache"),
      // Rotated q4_0 K and V: in the range (10th-90th percentile of K-and-V caches), not the mid.
      kv_row("c/kv-q4_0-hadamard/ppl", "C", "f16", "q4_0", "q4_0", "ppl_delta_pct", 200.0),
      // Weights and cache quantized together against the full model: the cache's share unknown.
      kv_row("d/q4_0-q4_0-q4_0/ppl", "D", "q4_0", "q4_0", "q4_0", "ppl", 12.0, 10.0),
      // MLX bits, a hybrid model, a benchmark score: not this table's.
      kv_row("e/kv4/ppl", "E", "f16", "4", "4", "ppl", 11.0, 10.0),
      kv_row("g/kv-q4_0/ppl", "G", "f16", "q4_0", "q4_0", "ppl", 11.0, 10.0, "hybrid model (linear attention)"),
      kv_row("h/kv-q4_0/mmlu", "H", "f16", "q4_0", "q4_0", "mmlu", 60.0, 61.0),
      // One q8_0 run published as a KLD row and a perplexity row: one measurement.
      kv_row("i/kv-q8_0/kld", "I", "f16", "q8_0", "q8_0", "kld_mean", 0.001),
      kv_row("i/kv-q8_0/ppl", "I", "f16", "q8_0", "q8_0", "ppl", 10.005, 10.0),
  };
  const auto table = accuracy::kv_loss_table(rows, {TensorType::q8_0, TensorType::q4_0, TensorType::q5_1}, knee);
  REQUIRE(table.types.size() == 2);  // q5_1: no measurement
  const auto& q8 = table.types[0];
  const auto& q4 = table.types[1];
  CHECK(q8.type == TensorType::q8_0);
  CHECK(q8.measurements == 1);
  CHECK(q8.kld.mid == Approx(0.001));
  CHECK(q8.ppl_delta_pct.mid == Approx(0.05));
  CHECK(q4.type == TensorType::q4_0);
  CHECK(q4.measurements == 3);
  CHECK(q4.ppl_delta_pct.mid == Approx(10.0));
  CHECK(q4.ppl_delta_pct.low == Approx(10.0));                      // the mid: no K-and-V cache below it
  CHECK(q4.ppl_delta_pct.high == Approx(10.0 + 0.9 * (200.0 - 10.0)));  // 90th percentile of {10, 200}
  CHECK(q4.kld.mid == Approx(accuracy::kld_from_ppl_pct(10.0, knee)));
  CHECK(q4.mid_models == std::vector<std::string>{"A"});
  CHECK(table.skipped.at("weights and KV quantized together against the full model (the KV share is not isolated)") == 1);
  CHECK(table.skipped.at("KV formats that are not llama.cpp cache types (MLX bits, KIVI)") == 1);
  CHECK(table.skipped.at("caches the KV model does not cover (MLA latent, hybrid linear attention)") == 1);
  CHECK(table.skipped.at("KV rows with benchmark scores (not mapped to KLD)") == 1);
}

TEST_CASE("kv loss: the built-in table and the estimate's KV term", "[accuracy]") {
  const auto* q4 = accuracy::builtin_kv_loss(TensorType::q4_0);
  REQUIRE(q4);
  // llama.cpp PR #20995: TinyLlama-1.1B, q4_0 K and V on the same Q4_0 weights, 2.989 vs 2.632.
  CHECK(q4->ppl_delta_pct.mid == Approx((2.989 / 2.632 - 1) * 100));
  // The range: 10th to 90th percentile of the caches with K and V both q4_0 (TinyLlama +13.6%,
  // rotated Qwen3-8B +2.2% and Qwen3-0.6B +254%), not the extremes of every row naming q4_0
  // (a rotated q4_0 K alone on Qwen3-30B-A3B measured +0.92%).
  CHECK(q4->ppl_delta_pct.low == Approx(2.185 + 0.2 * (13.564 - 2.185)).epsilon(0.01));
  CHECK(q4->ppl_delta_pct.high == Approx(13.564 + 0.8 * (254.19 - 13.564)).epsilon(0.01));
  CHECK(q4->ppl_delta_pct.high < 254);
  REQUIRE(accuracy::builtin_kv_loss(TensorType::q8_0));
  CHECK_FALSE(accuracy::builtin_kv_loss(TensorType::f16));

  accuracy::LossTraits small, large;
  small.effective_params = 0.6e9, small.training_tokens = 36e12;
  large.effective_params = 30e9, large.training_tokens = 36e12;
  DeploymentConfig c;
  c.weights = WeightFormat::f16;
  c.kv_type = TensorType::q4_0;
  const auto only_kv = accuracy::estimate_accuracy(small, c, nullptr);
  CHECK(only_kv.ppl_delta_pct.mid == Approx(q4->ppl_delta_pct.mid));
  CHECK(only_kv.kld.mid == Approx(q4->kld.mid));
  // Not scaled by size.
  CHECK(accuracy::estimate_accuracy(large, c, nullptr).ppl_delta_pct.mid == Approx(only_kv.ppl_delta_pct.mid));
  // On quantized weights the perplexity ratios multiply and the KLDs add.
  c.weights = WeightFormat::q4_k_m;
  const auto both = accuracy::estimate_accuracy(large, c, nullptr);
  c.kv_type = TensorType::f16;
  const auto weights = accuracy::estimate_accuracy(large, c, nullptr);
  CHECK(both.ppl_delta_pct.mid ==
        Approx(((1 + weights.ppl_delta_pct.mid / 100) * (1 + q4->ppl_delta_pct.mid / 100) - 1) * 100));
  CHECK(both.kld.mid == Approx(weights.kld.mid + q4->kld.mid));
  CHECK(both.ppl_delta_pct.high > weights.ppl_delta_pct.high);
}
