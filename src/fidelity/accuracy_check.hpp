// How far the accuracy model is from published quality-loss measurements
// (data/measurements/loss.csv). The loss model is fitted to these rows, so it is scored leave
// one family out: every family's rows are predicted by a fit (constants and range) that never
// saw that family. `priors` scores the first, unfitted model (published Llama-3-8B figures
// scaled by size) on the same rows, as the baseline.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "accuracy/loss_fit.hpp"
#include "measurements/loss_rows.hpp"
#include "measurements/training_tokens.hpp"
#include "types/estimate.hpp"

namespace trilemma::fidelity {

struct LossPoint {
  const accuracy::LossObservation* observation = nullptr;
  std::string metric;  // ppl_delta_pct or kld_mean
  double measured = 0;
  Range predicted;
  double ratio() const { return predicted.mid / measured; }  // > 1: predicted too much loss
  bool inside() const { return predicted.low <= measured && measured <= predicted.high; }
};

// A group's figures: median ratio error exp(median |ln(predicted / measured)|), the median
// ratio (bias), and the share of measurements inside the predicted low-high range.
struct LossSummary {
  std::size_t points = 0;
  double median_ratio_error = 0, median_ratio = 0, inside = 0;
};

struct AccuracyReport {
  accuracy::LossObservations observations;
  std::vector<LossPoint> points;
  std::map<std::string, std::size_t> skipped;  // reason -> rows (observations' reasons included)
  std::map<std::string, LossSummary> by_metric;
  std::map<std::string, std::map<std::string, LossSummary>> by_family;   // metric -> family -> summary
  std::map<std::string, std::map<std::string, LossSummary>> by_imatrix;  // metric -> yes/no/unknown
};

enum class AccuracyMethod { leave_one_family_out, priors };

LossSummary summarize(const std::vector<const LossPoint*>& points);
AccuracyReport check_accuracy(const std::vector<measurements::LossRow>& rows,
                              const std::vector<measurements::TrainingTokens>& tokens, AccuracyMethod method);

}  // namespace trilemma::fidelity
