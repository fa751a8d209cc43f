// Quality loss of a configuration against the full-precision model. Published figures (with
// sources) for a reference model are scaled to the target model's size; docs/estimates.md
// gives the tables, the scaling law and where the literature corrects the seed rules of thumb.
#pragma once
#include <string>
#include <string_view>
#include <vector>

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
const LossFigure* kv_loss_figure(TensorType kv_type);  // nullptr for lossless formats

// Quality loss of `config` on `shape`, with the basis of each term appended to `basis` (when
// not null: the search skips the text, the report asks for it).
AccuracyEstimate estimate_accuracy(const ModelShape& shape, const DeploymentConfig& config,
                                   std::vector<std::string>* basis);

// The weight and KV-cache terms alone, for a model of `effective_params` (see below): what
// `trilemma fidelity --accuracy` compares with published measurements of models that have no
// catalog shape.
AccuracyEstimate format_loss(double effective_params, WeightFormat weights, TensorType kv_type);

// Parameters that govern quantization tolerance: dense = all; MoE = geometric mean of total
// and active (llama.cpp's Mixtral figures sit between the two; MoQE/QMoE argue for total).
double effective_params(const ModelShape& shape);

}  // namespace trilemma::accuracy
