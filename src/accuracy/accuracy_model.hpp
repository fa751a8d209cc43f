// Quality loss of a configuration against the full-precision model. Weight formats llama.cpp
// publishes measurements for take the fitted loss model (loss_fit.hpp: format, size, training
// tokens, bits after fallbacks); trilemma's own and NPU formats take published figures for
// Llama-3-8B (the table below) scaled by the same traits; KV formats take the published
// measurements of the type (kv_loss.hpp), not scaled by size. docs/estimates.md gives the model,
// docs/fidelity.md its cross-validated error.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "accuracy/loss_fit.hpp"
#include "types/deployment.hpp"
#include "types/estimate.hpp"
#include "types/model_shape.hpp"

namespace trilemma::accuracy {

// One published (or, where marked, estimated) figure for a format on a reference model.
struct LossFigure {
  std::string_view format;      // weight format or KV format name
  double reference_params;      // the model the figure was measured on
  Range kld;                    // mean KL divergence, nats
  Range ppl_delta_pct;          // perplexity increase, %
  std::string_view source;
};

const LossFigure& weight_loss_figure(WeightFormat format);
// The first model's KV figures (and the fallback when the loss data do not load); nullptr for
// lossless formats.
const LossFigure* kv_loss_figure(TensorType kv_type);

// Quality loss of `config` on a model with `traits` (its weight format's bits_delta set), with
// the basis of each term appended to `basis` (when not null: the search skips the text, the
// report asks for it). `family` names the model's family in the basis ("" when unknown).
AccuracyEstimate estimate_accuracy(const LossTraits& traits, const DeploymentConfig& config,
                                   std::vector<std::string>* basis, std::string_view family = {});
// The same from another fit and points map (nullptr: the published fallback) than the
// built-in ones: fidelity checks the printed figures with fits that never saw a family.
AccuracyEstimate estimate_accuracy(const LossTraits& traits, const DeploymentConfig& config, const LossFit& fit,
                                   const PointsMap* points);

// Whether llama.cpp quantizes `weights` with an importance matrix at all (its k- and i-quants
// and legacy formats), and whether the fitted model says it lowers their loss.
bool imatrix_applies(WeightFormat weights);
// llama-quantize refuses IQ2_XS (and IQ1/IQ2_XXS/IQ2_S) without one.
bool imatrix_required(WeightFormat weights);
bool imatrix_helps(WeightFormat weights);

// The first model (v1), kept as the baseline `trilemma fidelity --accuracy --method priors`
// scores: the published Llama-3-8B figures scaled by (8B / params)^0.3, for weights and KV.
AccuracyEstimate format_loss(double effective_params, WeightFormat weights, TensorType kv_type);

// Parameters that govern quantization tolerance: dense = all; MoE = geometric mean of total
// and active (llama.cpp's Mixtral figures sit between the two; MoQE/QMoE argue for total).
double effective_params(const ModelShape& shape);

}  // namespace trilemma::accuracy
