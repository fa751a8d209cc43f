// The fitted loss model: its conversions against hand-computed values, the fit recovering
// known coefficients from exact synthetic data, and the estimate's terms and flags.
#include <catch2/catch.hpp>

#include <cmath>
#include <deque>

#include "accuracy/accuracy_model.hpp"
#include "accuracy/loss_fit.hpp"

using namespace trilemma;
using accuracy::LossMetric;
using accuracy::LossObservation;

namespace {

// Rows must outlive the observations that point at them.
std::deque<measurements::LossRow> g_rows;

LossObservation observation(const std::string& family, const std::string& format, double params, double tokens,
                            double kld) {
  measurements::LossRow r;
  r.model = family + "-" + std::to_string(params), r.format = format, r.family = family;
  g_rows.push_back(r);
  LossObservation o;
  o.row = &g_rows.back();
  o.family = family, o.format = format, o.metric = LossMetric::kld, o.measured = kld;
  o.traits.effective_params = params, o.traits.training_tokens = tokens;
  return o;
}

accuracy::LossTraits traits(double params, std::optional<double> tokens) {
  accuracy::LossTraits t;
  t.effective_params = params, t.training_tokens = tokens;
  return t;
}

}  // namespace

TEST_CASE("accuracy: KLD and perplexity convert through the knee", "[accuracy]") {
  // d = k^2 / (k + knee) = 0.01 / 0.11; PPL increase = exp(d) - 1.
  CHECK(accuracy::ppl_pct_from_kld(0.1, 0.01) == Approx(std::expm1(0.01 / 0.11) * 100));
  CHECK(accuracy::ppl_pct_from_kld(0.1, 0.01) == Approx(9.516).epsilon(1e-3));
  for (double k : {1e-4, 0.003, 0.05, 0.4, 2.0})
    CHECK(accuracy::kld_from_ppl_pct(accuracy::ppl_pct_from_kld(k, 0.002), 0.002) == Approx(k));
  // A large loss moves perplexity by its KLD: ln(PPL_q/PPL) -> KLD.
  CHECK(std::log1p(accuracy::ppl_pct_from_kld(1.0, 0.001) / 100) == Approx(1.0).epsilon(2e-3));
}

TEST_CASE("accuracy: reference bits are Llama-3-8B's file sizes", "[accuracy]") {
  // Q8_0: 7.96 GiB for 8.03e9 weights.
  CHECK(*accuracy::reference_bits("q8_0") == Approx(8.0 * 7.96 * 1073741824.0 / 8.03e9));
  CHECK(*accuracy::reference_bits("q4_k_m") == Approx(4.899).epsilon(1e-3));
  CHECK_FALSE(accuracy::reference_bits("gptq-int4"));
}

namespace {

// Exact synthetic data: ln KLD = level[format family] - 1.1 bits + 0.3 ln(D/15T) - 0.1 ln(P/8B)
// - 0.3 ln(total/active), the k-quants' line through Q4_K_M at 0.03 nats, the legacy formats'
// through Q8_0 at 0.0015.
constexpr double k_slope = -1.1;
double level(const std::string& format) {
  return accuracy::format_family(format) == 0 ? std::log(0.0015) - k_slope * *accuracy::reference_bits("q8_0")
                                              : std::log(0.03) - k_slope * *accuracy::reference_bits("q4_k_m");
}
double exact_kld(const std::string& format, const accuracy::LossTraits& t) {
  return std::exp(level(format) + k_slope * *accuracy::reference_bits(format) + 0.3 * std::log(*t.training_tokens / 15e12) -
                  0.1 * std::log(t.effective_params / 8e9) - 0.3 * std::log(t.experts_ratio));
}

std::vector<LossObservation> exact_observations() {
  std::vector<LossObservation> obs;
  struct Fam { const char* name; double params, tokens, experts; };
  for (const Fam f : {Fam{"a", 7e9, 2e12, 1}, Fam{"b", 8e9, 15e12, 1}, Fam{"c", 1.5e9, 36e12, 1}, Fam{"d", 70e9, 15e12, 1},
                      Fam{"e", 10e9, 20e12, 8}, Fam{"g", 14e9, 10e12, 4}})
    for (const char* format : {"q4_k_m", "q6_k", "q3_k_m", "q8_0", "q4_0"}) {
      auto o = observation(f.name, format, f.params, f.tokens, 0);
      o.traits.experts_ratio = f.experts;
      o.measured = exact_kld(format, o.traits);
      obs.push_back(o);
    }
  return obs;
}

}  // namespace

TEST_CASE("accuracy: the fit recovers the coefficients of exact data", "[accuracy]") {
  const auto obs = exact_observations();
  const auto fit = accuracy::fit_loss(obs);
  CHECK(fit.a_tokens == Approx(0.3).margin(0.01));
  CHECK(fit.a_size == Approx(-0.1).margin(0.01));
  CHECK(fit.a_moe == Approx(-0.3).margin(0.01));
  CHECK(fit.a_bits == Approx(k_slope).margin(0.02));
  CHECK(fit.format_ln_kld.at("q4_k_m") == Approx(std::log(0.03)).margin(0.02));
  CHECK(fit.format_ln_kld.at("q8_0") == Approx(std::log(0.0015)).margin(0.02));
  // Exact data: every held-out family is predicted exactly, so the range collapses to 1.
  CHECK(fit.error.low == Approx(1).margin(0.05));  // the ridge terms bias extreme folds slightly
  CHECK(fit.error.high == Approx(1).margin(0.05));
  const auto t = traits(7e9, 2e12);
  CHECK(*accuracy::predict_kld(fit, "q4_k_m", t) == Approx(exact_kld("q4_k_m", t)).epsilon(0.02));
  // A k-quant never measured is read off the k-quants' line; a format of no family is not.
  CHECK(*accuracy::predict_kld(fit, "q5_k_m", t) == Approx(exact_kld("q5_k_m", t)).epsilon(0.03));
  CHECK_FALSE(accuracy::predict_kld(fit, "gptq-int4", t));
  // Held out, family "c" is predicted from the others alone.
  const auto without_c = accuracy::fit_loss(obs, "c", false);
  CHECK(without_c.points == obs.size() - 5);
  CHECK(*accuracy::predict_kld(without_c, "q8_0", obs[13].traits) == Approx(obs[13].measured).epsilon(0.05));
}

TEST_CASE("accuracy: the fit is robust: one row far off moves the shared coefficients little", "[accuracy]") {
  auto obs = exact_observations();
  // Family "a"'s Q3_K_M published 20x above the model (a transcription slip, another text): in
  // plain least squares its ln 20 = 3.0 residual would pull the size, token and Q3_K_M terms; the
  // Huber weights (k_huber_log_error 0.3) cap its pull at 0.3 / 3.0 of a normal row's.
  obs[2].measured *= 20;
  const auto fit = accuracy::fit_loss(obs, {}, false);
  // (Plain least squares: a_tokens 0.07, a_size -0.16, the other Q3_K_M predictions 40-57% high.)
  CHECK(fit.a_tokens == Approx(0.3).margin(0.05));
  CHECK(fit.a_size == Approx(-0.1).margin(0.02));
  CHECK(fit.format_ln_kld.at("q3_k_m") == Approx(std::log(exact_kld("q3_k_m", traits(8e9, 15e12)))).margin(0.1));
  // Every other family's Q3_K_M is still predicted within 10%.
  for (std::size_t i = 7; i < obs.size(); i += 5)
    CHECK(*accuracy::predict_kld(fit, "q3_k_m", obs[i].traits) == Approx(obs[i].measured).epsilon(0.1));
}

TEST_CASE("accuracy: each metric's range comes from its own held-out errors when there are enough", "[accuracy]") {
  auto obs = exact_observations();  // 30 KLD points, 6 families
  const auto only_kld = accuracy::fit_loss(obs);
  // One metric: its own errors are the pooled ones; a metric without points falls back to them.
  CHECK(only_kld.error_of(LossMetric::kld).low == only_kld.error.low);
  CHECK(only_kld.error_of(LossMetric::kld).high == only_kld.error.high);
  CHECK(only_kld.error_of(LossMetric::ppl_delta_pct).high == only_kld.error.high);
  // Five perplexity rows of one more family, far off what the KLD rows predict (+1000%): they
  // dominate the pooled 90th percentile, the KLD range stays near the exact data's 1, and the
  // perplexity range (5 points, one family: too few) is the pooled one.
  for (const char* format : {"q4_k_m", "q6_k", "q3_k_m", "q8_0", "q4_0"}) {
    auto o = observation("z", format, 8e9, 15e12, 0);
    o.metric = LossMetric::ppl_delta_pct, o.measured = 1000;
    obs.push_back(o);
  }
  const auto mixed = accuracy::fit_loss(obs);
  CHECK(mixed.error.high > 5);
  CHECK(mixed.error_of(LossMetric::kld).high < 0.5 * mixed.error.high);
  CHECK(mixed.error_of(LossMetric::ppl_delta_pct).low == mixed.error.low);
  CHECK(mixed.error_of(LossMetric::ppl_delta_pct).high == mixed.error.high);
}

TEST_CASE("accuracy: a format measured once leans on its family's line", "[accuracy]") {
  auto obs = exact_observations();
  // Q5_K_S measured once, at twice what the line says.
  auto odd = observation("f", "q5_k_s", 8e9, 15e12, 0);
  odd.measured = 2 * exact_kld("q5_k_s", odd.traits);
  obs.push_back(odd);
  const auto fit = accuracy::fit_loss(obs, {}, false);
  const double predicted = *accuracy::predict_kld(fit, "q5_k_s", odd.traits);
  CHECK(predicted > 1.05 * exact_kld("q5_k_s", odd.traits));  // the measurement moves it
  CHECK(predicted < 0.95 * odd.measured);                     // the line holds it back
  // The line itself barely moves: the other formats are still predicted exactly.
  CHECK(*accuracy::predict_kld(fit, "q4_k_m", odd.traits) == Approx(exact_kld("q4_k_m", odd.traits)).epsilon(0.03));
}

TEST_CASE("accuracy: llama.cpp formats in three families", "[accuracy]") {
  CHECK(accuracy::format_family("q4_0") == 0);
  CHECK(accuracy::format_family("q8_0") == 0);
  CHECK(accuracy::format_family("q5_1") == 0);
  CHECK(accuracy::format_family("q4_k_m") == 1);
  CHECK(accuracy::format_family("q2_k_s") == 1);
  CHECK(accuracy::format_family("iq4_xs") == 2);
  CHECK(accuracy::format_family("iq2_xxs") == 2);
}

TEST_CASE("accuracy: the built-in fit and the estimate's terms", "[accuracy]") {
  std::string error;
  const auto* fit = accuracy::builtin_loss_fit(&error);
  REQUIRE(fit);
  CHECK(fit->points >= 150);
  CHECK(fit->families.size() >= 8);
  CHECK(fit->a_tokens > 0);  // more pre-training tokens per parameter: more loss
  CHECK(fit->error.low < 1);
  CHECK(fit->error.high > 1);

  DeploymentConfig c;
  c.weights = WeightFormat::q4_k_m;
  const auto llama3 = traits(8e9, 15e12);
  const auto llama2 = traits(7e9, 2e12);
  std::vector<std::string> basis;
  const auto a3 = accuracy::estimate_accuracy(llama3, c, &basis, "llama3");
  const auto a2 = accuracy::estimate_accuracy(llama2, c, nullptr);
  CHECK(a2.kld.mid < a3.kld.mid);  // Llama-2 (2T tokens) loses less than Llama-3 (15T)
  CHECK(a3.kld.mid == Approx(*accuracy::predict_kld(*fit, "q4_k_m", llama3)));
  CHECK(a3.ppl_delta_pct.mid == Approx(accuracy::ppl_pct_from_kld(a3.kld.mid, fit->knee)));
  CHECK(a3.kld.low == Approx(a3.kld.mid * fit->error_of(LossMetric::kld).low));
  CHECK(a3.ppl_delta_pct.high == Approx(a3.ppl_delta_pct.mid * fit->error_of(LossMetric::ppl_delta_pct).high));
  REQUIRE_FALSE(basis.empty());
  CHECK(basis[0].find("fitted loss model") != std::string::npos);
  CHECK(basis[0].find("extrapolating") == std::string::npos);

  // More bits after fallbacks: less loss.
  accuracy::LossTraits fallback = llama3;
  fallback.bits_delta = 0.5;
  CHECK(accuracy::estimate_accuracy(fallback, c, nullptr).kld.mid == Approx(a3.kld.mid * std::exp(0.5 * fit->a_bits)));
  CHECK(fit->a_bits < 0);

  // Outside the data: unknown tokens and a tiny model widen the range and say so.
  const auto tiny = traits(2.6e5, std::nullopt);
  basis.clear();
  const auto at = accuracy::estimate_accuracy(tiny, c, &basis, "tinystories");
  CHECK(basis[0].find("extrapolating") != std::string::npos);
  CHECK(basis[0].find("under 100M parameters") != std::string::npos);
  CHECK(at.kld.high / at.kld.mid > a3.kld.high / a3.kld.mid);
  CHECK(at.kld.low / at.kld.mid < a3.kld.low / a3.kld.mid);

  // Formats without llama.cpp data take Llama-3-8B's published figure times the trait factor.
  c.weights = WeightFormat::w4a16;
  const auto w4 = accuracy::estimate_accuracy(llama2, c, nullptr);
  CHECK(w4.kld.mid == Approx(accuracy::weight_loss_figure(WeightFormat::w4a16).kld.mid * accuracy::trait_factor(*fit, llama2)));
  // Full precision loses nothing.
  c.weights = WeightFormat::f16;
  CHECK(accuracy::estimate_accuracy(llama3, c, nullptr).kld.mid == 0);
}

TEST_CASE("measurements: training tokens are looked up by family and size, or imputed", "[accuracy]") {
  const auto& table = accuracy::builtin_training_tokens();
  REQUIRE_FALSE(table.empty());
  const auto qwen2_small = measurements::training_tokens_of(table, "qwen2", 0.5);
  REQUIRE(qwen2_small);
  CHECK(qwen2_small->tokens == Approx(12e12));
  CHECK_FALSE(qwen2_small->imputed);
  CHECK(measurements::training_tokens_of(table, "qwen2", 7)->tokens == Approx(7e12));
  const auto mistral = measurements::training_tokens_of(table, "mistral", 7.2);
  REQUIRE(mistral);
  CHECK(mistral->imputed);
  // Imputed between Llama-2 (2023-07, 2T) and Llama-3 (2024-04, 15T) by the trend.
  CHECK(mistral->tokens > 1e12);
  CHECK(mistral->tokens < 15e12);
  CHECK_FALSE(measurements::training_tokens_of(table, "unknown-family", 7));

  auto bad = measurements::parse_training_tokens_csv(
      "family,params_min_b,params_max_b,tokens_t,released,source_url,locator\nx,0,10,1,2023-13,u,l\n", "t.csv");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().to_string().find("released") != std::string::npos);
  auto overlap = measurements::parse_training_tokens_csv(
      "family,params_min_b,params_max_b,tokens_t,released,source_url,locator\nx,0,10,1,2023-01,u,l\nx,5,20,1,2023-01,u,l\n", "t.csv");
  REQUIRE_FALSE(overlap.ok());
  CHECK(overlap.error().message.find("overlaps") != std::string::npos);
}

TEST_CASE("accuracy: points per % of perplexity from published perplexity and MMLU pairs", "[accuracy]") {
  auto row = [](const std::string& format, const std::string& metric, double value, double baseline) {
    measurements::LossRow r;
    r.model = "M 8B", r.format = format, r.metric = metric, r.value = value, r.baseline_value = baseline;
    r.source_url = "https://example.org/paper";
    return r;
  };
  // Pairs: +10% PPL -> 2 points, +20% -> 6 points; +100% is beyond the linear range; a lone
  // perplexity row and a CSQA row pair with nothing.
  const std::vector<measurements::LossRow> rows = {
      row("a", "ppl", 11, 10), row("a", "mmlu", 68, 70), row("b", "ppl", 12, 10), row("b", "mmlu", 64, 70),
      row("c", "ppl", 20, 10), row("c", "mmlu", 40, 70), row("d", "ppl", 11, 10), row("e", "csqa_avg5", 60, 61),
  };
  const auto m = accuracy::fit_points_map(rows);
  REQUIRE(m.pairs == 2);
  // Least squares through the origin: (10 x 2 + 20 x 6) / (10^2 + 20^2) = 0.28.
  CHECK(m.per_ppl_pct.mid == Approx(0.28));
  CHECK(m.per_ppl_pct.low == Approx(0.2));   // slopes 0.2 and 0.3
  CHECK(m.per_ppl_pct.high == Approx(0.3));
  const auto* builtin = accuracy::builtin_points_map();
  REQUIRE(builtin);
  CHECK(builtin->pairs >= 10);
  CHECK(builtin->per_ppl_pct.mid > 0);
}
