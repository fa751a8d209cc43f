#include "fidelity/accuracy_check.hpp"

#include <algorithm>
#include <cmath>

#include "accuracy/accuracy_model.hpp"
#include "fidelity/median.hpp"
#include "types/tensor_type.hpp"
#include "types/weight_format.hpp"

namespace trilemma::fidelity {
namespace {

std::string metric_name(accuracy::LossMetric m) {
  return m == accuracy::LossMetric::kld ? "kld_mean" : "ppl_delta_pct";
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

AccuracyReport check_accuracy(const std::vector<measurements::LossRow>& rows,
                              const std::vector<measurements::TrainingTokens>& tokens, AccuracyMethod method) {
  AccuracyReport report;
  report.observations = accuracy::loss_observations(rows, tokens);
  report.skipped = report.observations.skipped;
  const auto& obs = report.observations.points;
  std::map<std::string, accuracy::LossFit> fits;  // family held out -> fit without it
  if (method == AccuracyMethod::leave_one_family_out)
    for (const auto& o : obs)
      if (!fits.count(o.family)) fits.emplace(o.family, accuracy::fit_loss(obs, o.family));
  for (const auto& o : obs) {
    Range predicted;
    if (method == AccuracyMethod::leave_one_family_out) {
      const auto& fit = fits.at(o.family);
      if (fit.points == 0) {
        ++report.skipped["no other family in the data to predict the family from"];
        continue;
      }
      // Every observation's format has reference bits (loss_observations), so a fit predicts it:
      // from its own constant, or from its format family's line when only this family measured it.
      const double kld = *accuracy::predict_kld(fit, o.format, o.traits);
      const double mid = o.metric == accuracy::LossMetric::kld ? kld : accuracy::ppl_pct_from_kld(kld, fit.knee);
      predicted = {mid * fit.error_of(o.metric).low, mid, mid * fit.error_of(o.metric).high};
    } else {
      const auto weights = weight_format_from_name(o.format);
      if (!weights) {
        ++report.skipped["formats the first model has no figure for"];
        continue;
      }
      const auto loss = accuracy::format_loss(o.traits.effective_params, *weights, TensorType::f16);
      predicted = o.metric == accuracy::LossMetric::kld ? loss.kld : loss.ppl_delta_pct;
    }
    report.points.push_back({&o, metric_name(o.metric), o.measured, predicted});
  }
  std::map<std::string, std::vector<const LossPoint*>> metric;
  std::map<std::string, std::map<std::string, std::vector<const LossPoint*>>> family, imatrix;
  for (const auto& p : report.points) {
    metric[p.metric].push_back(&p);
    const auto& row = *p.observation->row;
    family[p.metric][row.family].push_back(&p);
    imatrix[p.metric][row.imatrix ? (*row.imatrix ? "yes" : "no") : "unknown"].push_back(&p);
  }
  for (const auto& [m, ps] : metric) report.by_metric[m] = summarize(ps);
  for (const auto& [m, groups] : family)
    for (const auto& [g, ps] : groups) report.by_family[m][g] = summarize(ps);
  for (const auto& [m, groups] : imatrix)
    for (const auto& [g, ps] : groups) report.by_imatrix[m][g] = summarize(ps);
  return report;
}

}  // namespace trilemma::fidelity
