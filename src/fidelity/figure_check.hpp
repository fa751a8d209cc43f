// The accuracy figures a plan prints that the fitted loss rows do not check (accuracy_check.hpp):
// - the perplexity of the formats the planner takes from published figures rather than the fit
//   (w4a16, w8a16, w8a8: the NPU integer formats), against published GPTQ, AWQ, round-to-nearest
//   and SmoothQuant rows of the same weight and activation bits;
// - the benchmark points a plan says it loses (perplexity increase x the fitted points map),
//   against published benchmark scores beside their full-precision baseline.
// Both are held out by family like check_accuracy: the loss fit and the points map that predict
// a family's rows never saw that family.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "accuracy/loss_fit.hpp"
#include "measurements/loss_rows.hpp"
#include "measurements/training_tokens.hpp"
#include "types/estimate.hpp"
#include "types/weight_format.hpp"

namespace trilemma::fidelity {

// The planner format a published format stands for, or nullopt: the integer NPU formats by
// their weight and activation bits (whatever algorithm chose the codes), llama.cpp formats by
// name.
std::optional<WeightFormat> planner_format_of(std::string_view published_format);

enum class PrintedKind { perplexity, points };

struct PrintedPoint {
  const measurements::LossRow* row = nullptr;
  PrintedKind kind = PrintedKind::perplexity;
  WeightFormat format = WeightFormat::f16;
  double measured = 0;  // perplexity increase %, or benchmark points lost (baseline - score)
  Range predicted;
  bool inside() const { return predicted.low <= measured && measured <= predicted.high; }
};

// Perplexity: the median ratio error and bias as in LossSummary. Points: the median absolute
// error and the median signed error (predicted - measured), in points; a score that rose after
// quantization is a negative loss, kept as measured.
struct PrintedSummary {
  std::size_t points = 0;
  double median_error = 0, median_bias = 0, inside = 0;
};

struct PrintedReport {
  std::vector<PrintedPoint> points;
  std::map<std::string, std::size_t> skipped;                    // reason -> rows
  // Keys: "all", "family <name>", and the planner format (perplexity) or the benchmark (points).
  std::map<std::string, PrintedSummary> perplexity_by_format;
  std::map<std::string, PrintedSummary> points_by_benchmark;
};

// The report's points refer to `rows`, which must outlive it.
PrintedReport check_printed_figures(const std::vector<measurements::LossRow>& rows,
                           const std::vector<measurements::TrainingTokens>& tokens);

}  // namespace trilemma::fidelity
