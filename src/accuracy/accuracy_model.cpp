#include "accuracy/accuracy_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "accuracy/kv_loss.hpp"

namespace trilemma::accuracy {
namespace {

constexpr double k_llama3_8b = 8.03e9;
constexpr std::string_view k_ppl_table =
    "llama.cpp tools/perplexity/README.md, LLaMA-3-8B, wikitext-2 ctx 512 (PR #6936)";

// Indexed by WeightFormat. Ranges span the published spread (imatrix or not, builds).
constexpr std::array<LossFigure, static_cast<std::size_t>(WeightFormat::count)> k_weight_loss = {
    LossFigure{"f32", k_llama3_8b, {0, 0, 0}, {0, 0, 0}, "reference precision"},
    LossFigure{"bf16", k_llama3_8b, {0.000025, 0.000025, 0.000025}, {0, 0.01, 0.02}, k_ppl_table},
    LossFigure{"f16", k_llama3_8b, {0, 0, 0}, {0, 0, 0}, "the published tables' baseline"},
    LossFigure{"q8_0", k_llama3_8b, {0.0010, 0.0014, 0.0018}, {0.02, 0.04, 0.06}, k_ppl_table},
    LossFigure{"q6_k", k_llama3_8b, {0.0045, 0.0055, 0.0065}, {0.3, 0.35, 0.4}, k_ppl_table},
    LossFigure{"q5_k_m", k_llama3_8b, {0.009, 0.011, 0.013}, {0.7, 0.9, 1.1}, k_ppl_table},
    LossFigure{"q4_k_m", k_llama3_8b, {0.028, 0.031, 0.035}, {2.4, 2.8, 3.2}, k_ppl_table},
    LossFigure{"q4_0", k_llama3_8b, {0.065, 0.072, 0.080}, {6.8, 7.5, 8.2}, k_ppl_table},
    LossFigure{"q3_k_m", k_llama3_8b, {0.08, 0.09, 0.10}, {8.0, 9.2, 10.5}, k_ppl_table},
    LossFigure{"q2_k", k_llama3_8b, {0.33, 0.39, 0.45}, {39, 47, 56}, k_ppl_table},
    LossFigure{"iq2_xs", k_llama3_8b, {0.50, 0.55, 0.60}, {65, 73, 80}, k_ppl_table},
    // trilemma's own round-to-nearest formats: no published figure. Bracketed by the llama.cpp
    // formats of similar bits (INT3 at 3.5 bpw between Q3_K_M and Q2_K; INT2 at 2.5 bpw below
    // IQ2_XS, which uses a trained lattice); `trilemma eval` measures them (docs/accuracy.md).
    LossFigure{"int3", k_llama3_8b, {0.09, 0.25, 0.45}, {10, 30, 56}, "estimate by analogy to Q3_K_M/Q2_K"},
    LossFigure{"int2", k_llama3_8b, {0.55, 1.5, 3.0}, {73, 300, 1000}, "estimate by analogy to IQ2_XS; collapse"},
    // NPU integer formats, from published measurements of those bits on Llama-3-8B (arXiv
    // 2404.14047, wikitext-2, PPL printed to one decimal: +-0.8% resolution). 4-bit weights with
    // 16-bit activations and a group scale: GPTQ +6.6%, AWQ +8.2% (mid 7.5%, llama.cpp's Q4_0),
    // plain round-to-nearest +39% (high); llama.cpp's Q4_K_M +2.8% is the best a 4-bit recipe
    // does (low). The loss depends on how the codes were chosen far more than on the bits.
    LossFigure{"w4a16", k_llama3_8b, {0.028, 0.072, 0.33}, {2.4, 7.5, 39},
               "4-bit weights on LLaMA-3-8B: GPTQ/AWQ g128 +6.6/+8.2% (mid), round-to-nearest g128 +39% (high), "
               "llama.cpp Q4_K_M (low) (arXiv 2404.14047; llama.cpp PR #6936)"},
    // 8-bit weights: GPTQ +0.0% and llama.cpp's Q8_0 +0.04% (mid), per-channel round-to-nearest
    // +1.6% (high: Llama-3's outlier channels).
    LossFigure{"w8a16", k_llama3_8b, {0.0010, 0.0014, 0.016}, {0.02, 0.04, 1.6},
               "8-bit weights on LLaMA-3-8B: Q8_0 +0.04% (mid), per-channel round-to-nearest +1.6% (high) "
               "(llama.cpp PR #6936; arXiv 2404.14047)"},
    // 8-bit activations add outliers: SmoothQuant W8A8 costs LLaMA-3-8B +3.3% (high) and
    // LLaMA-3-70B nothing measurable; Neural Magic's w8a8 Llama-3.1-8B keeps 100.3% of OpenLLM v1.
    LossFigure{"w8a8", k_llama3_8b, {0.0010, 0.0020, 0.032}, {0.02, 0.1, 3.3},
               "Q8_0 plus int8 activations: SmoothQuant W8A8 LLaMA-3-8B +3.3% (high; arXiv 2404.14047), "
               "w8a8 Llama-3.1-8B 100.3% OpenLLM v1 recovery (neuralmagic model card)"},
};

static_assert(k_weight_loss.size() == static_cast<std::size_t>(WeightFormat::count));

constexpr bool loss_in_enum_order() {
  for (std::size_t i = 0; i < k_weight_loss.size(); ++i)
    if (k_weight_loss[i].format.empty()) return false;
  return true;
}
static_assert(loss_in_enum_order(), "one loss figure per weight format");

constexpr LossFigure k_kv_q8_0{"q8_0", k_llama3_8b, {0.0008, 0.0010, 0.0014}, {0.05, 0.08, 0.15},
                               "llama.cpp PR #7412: LLaMA-3-8B, q8_0 K and V, wikitext-2"};
constexpr LossFigure k_kv_q4_0{"q4_0", 1.1e9, {0.03, 0.06, 0.10}, {8, 13.6, 20},
                               "llama.cpp PR #20995: TinyLlama-1.1B q4_0 KV +13.6% PPL; KLD estimated from it"};

// Smaller models lose more: loss scales as (reference / params)^alpha. alpha 0.3 reproduces
// Llama-2-70B (Q4_K_M +1.2%) from the 8B table within its spread; 0.15-0.45 bounds it.
constexpr Range k_alpha{0.15, 0.30, 0.45};

// Perplexity % -> benchmark points when the built-in data hold no pairs to fit (loss_fit.hpp's
// PointsMap, normally used): Llama-3.1-8B w4a16 keeps 98.9% of OpenLLM v1 at ~+3% PPL; Qwen2-7B
// 4-bit loses 2.7 MMLU points. 0.3-1.0 point per % spans both.
constexpr Range k_points_per_ppl_pct{0.3, 0.6, 1.0};
constexpr std::string_view k_points_source =
    "0.3-1.0 per % of perplexity (Llama-3.1-8B w4a16 98.9% of OpenLLM v1; Qwen2-7B 4-bit -2.7 MMLU)";
constexpr double k_points_cap = 60;  // a collapsed model scores near chance on 4-choice MMLU

double scale(double reference_params, double params, double alpha) {
  return std::pow(reference_params / std::max(params, 1.0), alpha);
}

void add_scaled(AccuracyEstimate& a, const LossFigure& f, double params) {
  const double lo = scale(f.reference_params, params, k_alpha.low);
  const double mid = scale(f.reference_params, params, k_alpha.mid);
  const double hi = scale(f.reference_params, params, k_alpha.high);
  // For models larger than the reference the low exponent gives the larger loss.
  const double s_low = std::min(lo, hi), s_high = std::max(lo, hi);
  a.kld.low += f.kld.low * s_low;
  a.kld.mid += f.kld.mid * mid;
  a.kld.high += f.kld.high * s_high;
  a.ppl_delta_pct.low += f.ppl_delta_pct.low * s_low;
  a.ppl_delta_pct.mid += f.ppl_delta_pct.mid * mid;
  a.ppl_delta_pct.high += f.ppl_delta_pct.high * s_high;
}

}  // namespace

const LossFigure& weight_loss_figure(WeightFormat f) { return k_weight_loss[static_cast<std::size_t>(f)]; }

const LossFigure* kv_loss_figure(TensorType t) {
  if (t == TensorType::q8_0) return &k_kv_q8_0;
  if (t == TensorType::q4_0) return &k_kv_q4_0;
  return nullptr;
}

double effective_params(const ModelShape& shape) {
  const auto c = count_parameters(shape);
  if (!shape.is_moe()) return c.total();
  return std::sqrt(c.total() * c.active_per_token);
}

AccuracyEstimate format_loss(double params, WeightFormat weights, TensorType kv_type) {
  AccuracyEstimate a;
  add_scaled(a, weight_loss_figure(weights), params);
  if (const auto* kv = kv_loss_figure(kv_type)) add_scaled(a, *kv, params);
  return a;
}

namespace {

// "Outside the data" (issue 13): the smallest fitted model is 1.2B (Llama-3.2-1B); below 100M
// parameters the fit's size term is extrapolated a decade or more.
constexpr double k_smallest_fitted_params = 1e8;

std::string short_number(double v, int digits = 3) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// The weight term: the fitted model where it has the format, else the published Llama-3-8B
// figure scaled by the fit's trait terms; the range from the held-out errors, widened where
// the model is outside the data.
// `fit`: the built-in fit, or another (fidelity's held-out check); nullptr when the data did not
// load (`error` says why).
void add_weight_term(AccuracyEstimate& a, const LossTraits& traits, WeightFormat weights, std::string_view family,
                     std::vector<std::string>* basis, const LossFit* fit, const std::string& error) {
  const auto& figure = weight_loss_figure(weights);
  if (figure.kld.high == 0 && figure.ppl_delta_pct.high == 0) {
    if (basis) basis->push_back("weights " + std::string(figure.format) + ": " + std::string(figure.source) + ", no loss");
    return;
  }
  if (!fit) {  // the built-in data did not load: the first model, saying so
    add_scaled(a, figure, traits.effective_params);
    if (basis) basis->push_back("weights " + std::string(figure.format) + ": " + std::string(figure.source) +
                                " (loss data unavailable: " + error + ")");
    return;
  }
  const std::string name(info(weights).name);
  const auto fitted = info(weights).llama_cpp.empty() ? std::nullopt : predict_kld(*fit, name, traits);
  Range kld, ppl;
  std::string how;
  if (fitted) {
    kld = {*fitted, *fitted, *fitted};
    ppl.mid = ppl_pct_from_kld(*fitted, fit->knee);
    ppl.low = ppl.high = ppl.mid;
    how = "fitted loss model (" + std::to_string(fit->points) + " published measurements, " +
          std::to_string(fit->families.size()) + " families)";
  } else {
    const double f = trait_factor(*fit, traits);
    kld = {figure.kld.low * f, figure.kld.mid * f, figure.kld.high * f};
    ppl = {figure.ppl_delta_pct.low * f, figure.ppl_delta_pct.mid * f, figure.ppl_delta_pct.high * f};
    how = std::string(figure.source) + " (Llama-3-8B), x" + short_number(f, 2) + " for the model's traits";
  }
  auto widen = [](Range& r, double low, double high) { r.low *= low, r.high *= high; };
  std::vector<std::string> outside;
  if (traits.calibration) {
    // A measurement of this model pins its family, size and training terms: what is left is how
    // far one format's error strays from another's within one model.
    const double k = *traits.calibration;
    kld = {kld.low * k, kld.mid * k, kld.high * k};
    ppl.mid = fitted ? ppl_pct_from_kld(kld.mid, fit->knee) : ppl.mid * k;
    ppl.low = ppl.high = ppl.mid;
    widen(kld, fit->within_model_error.low, fit->within_model_error.high);
    widen(ppl, fit->within_model_error.low, fit->within_model_error.high);
    how += "; calibrated x" + short_number(k, 3) + " by a measured KLD of this model (--measured-kl)";
  } else {
    const Range& kld_error = fit->error_of(LossMetric::kld);
    const Range& ppl_error = fit->error_of(LossMetric::ppl_delta_pct);
    widen(kld, kld_error.low, kld_error.high);
    widen(ppl, ppl_error.low, ppl_error.high);
  }
  if (!traits.calibration && (!traits.training_tokens || traits.tokens_imputed)) {
    // Unknown or imputed pre-training tokens: the range spans the fewest and the most any
    // family published.
    const auto& table = builtin_training_tokens();
    const double assumed = traits.training_tokens.value_or(fit->default_tokens);
    double lo = assumed, hi = assumed;
    for (const auto& t : table)
      if (t.tokens) lo = std::min(lo, *t.tokens), hi = std::max(hi, *t.tokens);
    LossTraits few = traits, many = traits;
    few.training_tokens = lo, many.training_tokens = hi;
    const double base = trait_factor(*fit, traits);
    const double down = trait_factor(*fit, few) / base, up = trait_factor(*fit, many) / base;
    widen(kld, std::min(down, up), std::max(down, up));
    widen(ppl, std::min(down, up), std::max(down, up));
    const std::string assumption = traits.tokens_imputed ? "imputed from the release date" : "the data's median";
    outside.push_back("pre-training tokens not published" + (family.empty() ? std::string() : " for " + std::string(family)) +
                      " (" + short_number(assumed / 1e12, 2) + "T, " + assumption + "; range spans " +
                      short_number(lo / 1e12, 2) + "-" + short_number(hi / 1e12, 2) + "T)");
  }
  if (!traits.calibration && traits.effective_params < k_smallest_fitted_params) {
    widen(kld, fit->error.low, fit->error.high);
    widen(ppl, fit->error.low, fit->error.high);
    outside.push_back("under 100M parameters (range widened twice)");
  }
  a.kld.low += kld.low, a.kld.mid += kld.mid, a.kld.high += kld.high;
  a.ppl_delta_pct.low += ppl.low, a.ppl_delta_pct.mid += ppl.mid, a.ppl_delta_pct.high += ppl.high;
  if (basis) {
    std::string line = "weights " + name + ": " + how + "; " + short_number(traits.effective_params / 1e9) + "B params";
    if (traits.training_tokens && !traits.tokens_imputed)
      line += ", " + short_number(*traits.training_tokens / 1e12, 2) + "T training tokens";
    if (std::fabs(traits.bits_delta) >= 0.01) line += ", " + short_number(traits.bits_delta, 2) + " bits/weight beside Llama-3-8B's recipe";
    if (traits.imatrix) line += ", importance matrix (x" + short_number(std::exp(fit->a_imatrix), 2) + ")";
    if (traits.experts_ratio > 1)
      line += ", mixture of experts with " + short_number(traits.experts_ratio, 2) + "x its active parameters (x" +
              short_number(std::exp(fit->a_moe * std::log(traits.experts_ratio)), 2) + ")";
    line += traits.calibration ? "; range = 10th-90th percentile of one model's errors between formats"
                               : "; range = 10th-90th percentile of held-out families' errors";
    if (!outside.empty()) {
      line += "; extrapolating: ";
      for (std::size_t i = 0; i < outside.size(); ++i) line += (i ? "; " : "") + outside[i];
    }
    basis->push_back(line);
  }
}

// The KV cache's term: the published measurements of the type (kv_loss.hpp), not scaled by
// size. The rows measure the cache on top of the weights, so perplexity ratios multiply; KLDs
// are added (one published pair, Llama-3-8B q8_0 weights and cache, measures 0.0016 against the
// sum's 0.0023: the sum leans high).
void add_kv_term(AccuracyEstimate& a, const LossTraits& traits, TensorType kv_type, std::vector<std::string>* basis) {
  const auto* figure = kv_loss_figure(kv_type);
  if (!figure) return;
  const KvLoss* kv = builtin_kv_loss(kv_type);
  if (!kv) {  // the built-in data did not load: the first model's figure, scaled by size
    add_scaled(a, *figure, traits.effective_params);
    if (basis) basis->push_back("kv " + std::string(figure->format) + ": " + std::string(figure->source) + ", scaled by size");
    return;
  }
  auto compose = [](double w, double k) { return ((1 + w / 100) * (1 + k / 100) - 1) * 100; };
  a.ppl_delta_pct = {compose(a.ppl_delta_pct.low, kv->ppl_delta_pct.low), compose(a.ppl_delta_pct.mid, kv->ppl_delta_pct.mid),
                     compose(a.ppl_delta_pct.high, kv->ppl_delta_pct.high)};
  a.kld.low += kv->kld.low, a.kld.mid += kv->kld.mid, a.kld.high += kv->kld.high;
  if (basis) {
    std::string models;
    for (std::size_t i = 0; i < kv->mid_models.size(); ++i) models += (i ? ", " : "") + kv->mid_models[i];
    basis->push_back("kv " + std::string(info(kv_type).name) + ": +" + short_number(kv->ppl_delta_pct.mid, 2) +
                     "% perplexity as published with " + std::string(info(kv_type).name) + " K and V (" + models +
                     "); range " + short_number(kv->ppl_delta_pct.low, 3) + "-" + short_number(kv->ppl_delta_pct.high, 3) +
                     "%, the 10th-90th percentile of the " + std::to_string(kv->both_measurements) +
                     " published caches with K and V both " + std::string(info(kv_type).name) +
                     " (rotated ones too); not scaled by size (docs/estimates.md)");
  }
}

}  // namespace

bool imatrix_applies(WeightFormat w) {
  // llama.cpp's Q8_0 and float types ignore an importance matrix.
  return !info(w).llama_cpp.empty() && !full_precision(w) && info(w).bulk != TensorType::q8_0;
}

bool imatrix_required(WeightFormat w) { return w == WeightFormat::iq2_xs; }

bool imatrix_helps(WeightFormat w) {
  const LossFit* fit = builtin_loss_fit();
  return imatrix_applies(w) && fit && fit->a_imatrix < 0;
}

namespace {

AccuracyEstimate estimate(const LossTraits& traits, const DeploymentConfig& config, std::vector<std::string>* basis,
                          std::string_view family, const LossFit* fit, const std::string& fit_error, const PointsMap* map) {
  AccuracyEstimate a;
  add_weight_term(a, traits, config.weights, family, basis, fit, fit_error);
  add_kv_term(a, traits, config.kv_type, basis);
  // StreamingLLM (arXiv 2309.17453): beyond the window, attention without sink tokens
  // collapses (Llama-2-13B PG19 PPL 5158 vs 5.40 with 4 sinks); with sinks the model keeps
  // its fluency but cannot see what fell out of the window.
  const AttentionLoss dropped = info(config.kv_strategy).attention_loss(config);
  if (dropped != AttentionLoss::none) {
    if (dropped == AttentionLoss::evicts_keeping_sinks) {
      a.ppl_delta_pct.low += 0; a.ppl_delta_pct.mid += 2; a.ppl_delta_pct.high += 10;
      a.kld.mid += 0.02; a.kld.high += 0.1;
      if (basis) basis->push_back("sliding window with sinks beyond the window: StreamingLLM, small PPL loss; long-range recall lost");
    } else {
      a.ppl_delta_pct.low += 100; a.ppl_delta_pct.mid += 1000; a.ppl_delta_pct.high += 10000;
      a.kld.low += 1; a.kld.mid += 3; a.kld.high += 6;
      if (basis) basis->push_back("sliding window without sinks beyond the window: StreamingLLM reports collapse (PPL x1000)");
    }
  }
  const auto points = [](double ppl, double k) { return std::min(ppl * k, k_points_cap); };
  const Range k = map ? map->per_ppl_pct : k_points_per_ppl_pct;
  a.points = {points(a.ppl_delta_pct.low, k.low), points(a.ppl_delta_pct.mid, k.mid), points(a.ppl_delta_pct.high, k.high)};
  if (basis)
    basis->push_back(map ? "points: " + short_number(k.mid, 2) + " (" + short_number(k.low, 2) + "-" + short_number(k.high, 2) +
                               ") per % of perplexity, fitted to " + std::to_string(map->pairs) +
                               " published pairs of perplexity and MMLU on one quantized model"
                         : "points: " + std::string(k_points_source));
  return a;
}

}  // namespace

AccuracyEstimate estimate_accuracy(const LossTraits& traits, const DeploymentConfig& config,
                                   std::vector<std::string>* basis, std::string_view family) {
  std::string error;
  const LossFit* fit = builtin_loss_fit(&error);
  return estimate(traits, config, basis, family, fit, error, builtin_points_map());
}

AccuracyEstimate estimate_accuracy(const LossTraits& traits, const DeploymentConfig& config, const LossFit& fit,
                                   const PointsMap* points) {
  return estimate(traits, config, nullptr, {}, &fit, {}, points);
}

}  // namespace trilemma::accuracy
