// The fitted quantization-loss model (v2): mean KL divergence of a llama.cpp weight format on a
// model, as a log-linear function of the format and the model's traits, fitted by least
// squares to the published measurements in data/measurements/loss.csv:
//
//   ln KLD = c[format] + a_size * ln(P / 8B) + a_tokens * ln(D / 15T)
//          + a_bits * (bits on this model - bits on Llama-3-8B)
//          + a_imatrix * imatrix + a_moe * ln(total / active parameters)
//
//   c[format] = level[format family] + a_bits * (bits on Llama-3-8B) + delta[format]
//
// P: effective parameters (MoE: geometric mean of total and active); D: pre-training tokens
// (data/measurements/training-tokens.csv); bits: the recipe's bits per weight in the transformer
// blocks, which row-size fallbacks raise on narrow models (memory::loss_weighted_block_bits).
// A format's constant is pooled toward its family's line in bits (legacy, k-quants, i-quants):
// delta is held toward zero by a ridge, so a format measured on one model does not take that
// model's quirks as its own, and a bit gained from a fallback is worth a bit gained between
// formats. A perplexity increase is predicted from the KLD: ln(PPL_q / PPL) = KLD^2 / (KLD + knee),
// with the knee fitted too (small losses move perplexity less than their KLD; at Q2_K the two
// agree). The low-high range is the 10th-90th percentile of the leave-one-family-out errors, so
// about 80% of held-out measurements fall inside it.
// docs/estimates.md explains the choices, docs/fidelity.md gives the cross-validated errors.
#pragma once
#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "measurements/loss_rows.hpp"
#include "measurements/training_tokens.hpp"
#include "types/estimate.hpp"

namespace trilemma::accuracy {

enum class LossMetric { kld, ppl_delta_pct, count };
inline constexpr std::size_t k_loss_metric_count = static_cast<std::size_t>(LossMetric::count);

// Below these a published figure is within rounding and run-to-run noise (llama.cpp's tables
// print PPL to 4 digits; q8_0 rows measure +0.01-0.02%): a ratio says nothing there.
constexpr double k_min_ppl_delta_pct = 0.05;
constexpr double k_min_kld = 1e-4;

// What the loss depends on besides the format.
struct LossTraits {
  double effective_params = 0;            // dense: all; MoE: sqrt(total x active)
  std::optional<double> training_tokens;  // nullopt: unknown family (the fit's median is used)
  bool tokens_imputed = false;            // from the release date: the publisher never said
  double bits_delta = 0;                  // recipe bits/weight of the blocks, this model minus Llama-3-8B
  double experts_ratio = 1;               // MoE: total / active parameters per token; dense: 1
  bool imatrix = false;                   // quantized with an importance matrix
  // measured / predicted KLD at a format a user measured (--measured-kl): scales every weight
  // format's prediction for this model; nullopt: the prior alone.
  std::optional<double> calibration;
};

// Bits per weight of a llama.cpp format's recipe on Llama-3-8B (the scoreboard's file sizes),
// or nullopt for a format without one.
std::optional<double> reference_bits(std::string_view llama_cpp_format);

struct LossObservation {
  const measurements::LossRow* row = nullptr;
  std::string family, format;  // format: llama.cpp's name, lowercase
  LossTraits traits;
  LossMetric metric = LossMetric::kld;
  double measured = 0;         // nats, or percent
};

struct LossObservations {
  std::vector<LossObservation> points;
  std::map<std::string, std::size_t> skipped;  // reason -> rows
};

// The rows the fit can use: a llama.cpp weight format with a reference size, an f16 KV cache,
// a post-training-quantized checkpoint, a mean KLD or perplexity increase large enough to resolve.
LossObservations loss_observations(const std::vector<measurements::LossRow>& rows,
                                   const std::vector<measurements::TrainingTokens>& tokens);

// Whether a published row measures a quantization-aware-trained checkpoint.
bool is_qat(const measurements::LossRow& row);
// The traits of the model a published row measured (default traits without a parameter count).
LossTraits row_traits(const measurements::LossRow& row, const std::vector<measurements::TrainingTokens>& tokens);

// llama.cpp's weight formats in three families of one design each: 0 legacy (q4_0, q5_1, q8_0:
// one scale per 32-weight block), 1 k-quants (super-blocks with quantized scales), 2 i-quants
// (lattice codebooks). Within a family ln KLD falls about linearly with bits.
constexpr std::size_t k_format_families = 3;
std::size_t format_family(std::string_view llama_cpp_format);

struct LossFit {
  std::map<std::string, double, std::less<>> format_ln_kld;  // c[format]
  std::array<double, k_format_families> family_ln_kld{};     // the families' lines at 0 bits
  double a_size = 0, a_tokens = 0, a_bits = 0, a_imatrix = 0, a_moe = 0;
  double knee = 0;              // nats
  double default_tokens = 0;    // the training points' median, for models without a published D
  Range error{1, 1, 1};         // measured / predicted: 10th, 50th, 90th percentile, held-out families
  // The same per metric (indexed by LossMetric), from that metric's held-out errors alone when
  // they are enough (k_min_metric_errors from 2+ families), else `error`: a KLD is predicted
  // without the KLD-to-perplexity map's scatter, so its range is narrower.
  std::array<Range, k_loss_metric_count> metric_error{Range{1, 1, 1}, Range{1, 1, 1}};
  const Range& error_of(LossMetric m) const { return metric_error[std::size_t(m)]; }
  // The same for a model calibrated at one format and predicted at another: percentiles of the
  // differences between two residuals of one model (published models with several formats).
  Range within_model_error{1, 1, 1};
  std::size_t points = 0;
  std::vector<std::string> families;
};

// Benchmark points lost per % of perplexity increase, from the published rows that measure both
// on one quantized model (same model, format and source: perplexity and MMLU with its
// baseline): mid = least squares through the origin over increases of 1-50%
// (beyond, scores saturate toward chance), low/high = 10th/90th percentile of the pairs' slopes.
struct PointsMap {
  Range per_ppl_pct{0, 0, 0};
  std::size_t pairs = 0;
};
PointsMap fit_points_map(const std::vector<measurements::LossRow>& rows);

// The points map of the built-in data; nullptr when it has no pairs.
const PointsMap* builtin_points_map();

// Fits on every observation but those of `hold_out` (a family). `with_ranges` computes `error`
// by leaving each remaining family out in turn (a fit per family).
LossFit fit_loss(const std::vector<LossObservation>& observations, std::string_view hold_out = {},
                 bool with_ranges = true);

// Mean KLD of `format` (llama.cpp name) on a model with `traits`; nullopt when the fit has no
// constant for the format.
std::optional<double> predict_kld(const LossFit& fit, std::string_view format, const LossTraits& traits);
// The multiplier the traits alone apply (exp of every term but c[format]): scales figures of
// formats the fit has no data for, which are quoted for Llama-3-8B.
double trait_factor(const LossFit& fit, const LossTraits& traits);

double ppl_pct_from_kld(double kld, double knee);
double kld_from_ppl_pct(double ppl_pct, double knee);

// The fit on the built-in data; nullptr (and the error in `error`) when the data do not load.
const LossFit* builtin_loss_fit(std::string* error = nullptr);
const std::vector<measurements::TrainingTokens>& builtin_training_tokens();
// data/measurements/loss.csv's rows (empty when it does not load: builtin_loss_fit says why).
const std::vector<measurements::LossRow>& builtin_loss_rows();

}  // namespace trilemma::accuracy
