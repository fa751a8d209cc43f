// How far the accuracy model is from published quality-loss measurements
// (data/measurements/loss.csv): each row the model can express (a trilemma weight format,
// an f16 or modelled KV cache, a perplexity increase or a mean KL divergence large enough to
// compare) is predicted from its parameter count and compared as a ratio. The accuracy model
// is not fitted to these rows, so the figures are out-of-sample as they stand; a fitted model
// must be scored leave-one-family-out to be compared with them.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "measurements/loss_rows.hpp"
#include "types/estimate.hpp"

namespace trilemma::fidelity {

struct LossPoint {
  const measurements::LossRow* row = nullptr;
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
  std::vector<LossPoint> points;
  std::map<std::string, std::size_t> skipped;  // reason -> rows
  std::map<std::string, LossSummary> by_metric;
  std::map<std::string, std::map<std::string, LossSummary>> by_family;   // metric -> family -> summary
  std::map<std::string, std::map<std::string, LossSummary>> by_imatrix;  // metric -> yes/no/unknown
};

LossSummary summarize(const std::vector<const LossPoint*>& points);
AccuracyReport check_accuracy(const std::vector<measurements::LossRow>& rows);

}  // namespace trilemma::fidelity
