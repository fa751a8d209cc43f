#include "fidelity/accuracy_check.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "accuracy/accuracy_model.hpp"
#include "types/tensor_type.hpp"
#include "types/weight_format.hpp"

namespace trilemma::fidelity {
namespace {

// Below these the published figure is within rounding and run-to-run noise (llama.cpp's
// tables print PPL to 4 digits; q8_0 rows measure +0.01-0.02%): a ratio says nothing there.
constexpr double k_min_ppl_delta_pct = 0.05;
constexpr double k_min_kld = 1e-4;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The KV format a row measured, when the model has a term for it (both K and V the same).
std::optional<TensorType> kv_of(const measurements::LossRow& r, std::string& why) {
  if (r.kv_k.empty() && r.kv_v.empty()) return TensorType::f16;
  const auto k = tensor_type_from_name(r.kv_k), v = tensor_type_from_name(r.kv_v);
  if (r.kv_k != r.kv_v || !k || !v || !(*k == TensorType::f16 || accuracy::kv_loss_figure(*k))) {
    why = "KV cache the model has no term for (" + r.kv_k + "/" + r.kv_v + ")";
    return std::nullopt;
  }
  return *k;
}

// The measured loss in the model's units, or nullopt with the reason.
std::optional<std::pair<std::string, double>> measured_loss(const measurements::LossRow& r, std::string& why) {
  if (r.metric == "kld_mean") return std::pair{std::string("kld_mean"), r.value};
  if (r.metric == "ppl_delta_pct") return std::pair{std::string("ppl_delta_pct"), r.value};
  if (r.metric == "ppl" && r.baseline_value && *r.baseline_value > 0)
    return std::pair{std::string("ppl_delta_pct"), (r.value / *r.baseline_value - 1) * 100};
  why = "metric " + r.metric + " (benchmark scores are not compared yet)";
  return std::nullopt;
}

}  // namespace

LossSummary summarize(const std::vector<const LossPoint*>& points) {
  LossSummary s;
  s.points = points.size();
  if (points.empty()) return s;
  std::vector<double> abs_log, log;
  std::size_t inside = 0;
  for (const auto* p : points) {
    log.push_back(std::log(p->ratio()));
    abs_log.push_back(std::fabs(log.back()));
    inside += p->inside();
  }
  s.median_ratio_error = std::exp(median(abs_log));
  s.median_ratio = std::exp(median(log));
  s.inside = double(inside) / double(points.size());
  return s;
}

AccuracyReport check_accuracy(const std::vector<measurements::LossRow>& rows) {
  AccuracyReport report;
  for (const auto& r : rows) {
    std::string why;
    const auto weights = weight_format_from_name(r.format);
    if (!weights) {
      ++report.skipped["format without a trilemma weight format (" + std::string(r.format.empty() ? "none" : "other") + ")"];
      continue;
    }
    if (r.format == r.base_precision && r.kv_k.empty() && r.kv_v.empty()) {
      ++report.skipped["the baseline itself"];
      continue;
    }
    if (!r.params_b) {
      ++report.skipped["parameter count not published"];
      continue;
    }
    const auto kv = kv_of(r, why);
    const auto loss = kv ? measured_loss(r, why) : std::nullopt;
    if (!loss) {
      ++report.skipped[why];
      continue;
    }
    const double floor = loss->first == "kld_mean" ? k_min_kld : k_min_ppl_delta_pct;
    if (!(loss->second >= floor)) {
      ++report.skipped["loss below what the figure resolves (" + loss->first + ")"];
      continue;
    }
    const double total = *r.params_b * 1e9;
    const double params = r.active_params_b ? std::sqrt(total * *r.active_params_b * 1e9) : total;
    const auto predicted = accuracy::format_loss(params, *weights, *kv);
    report.points.push_back({&r, loss->first, loss->second,
                             loss->first == "kld_mean" ? predicted.kld : predicted.ppl_delta_pct});
  }
  std::map<std::string, std::vector<const LossPoint*>> metric;
  std::map<std::string, std::map<std::string, std::vector<const LossPoint*>>> family, imatrix;
  for (const auto& p : report.points) {
    metric[p.metric].push_back(&p);
    family[p.metric][p.row->family].push_back(&p);
    imatrix[p.metric][p.row->imatrix ? (*p.row->imatrix ? "yes" : "no") : "unknown"].push_back(&p);
  }
  for (const auto& [m, ps] : metric) report.by_metric[m] = summarize(ps);
  for (const auto& [m, groups] : family)
    for (const auto& [g, ps] : groups) report.by_family[m][g] = summarize(ps);
  for (const auto& [m, groups] : imatrix)
    for (const auto& [g, ps] : groups) report.by_imatrix[m][g] = summarize(ps);
  return report;
}

}  // namespace trilemma::fidelity
