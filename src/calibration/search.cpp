#include "calibration/search.hpp"

#include <algorithm>
#include <cmath>

namespace trilemma::calibration {

double coordinate_search(std::vector<Parameter>& parameters, const std::function<double(const std::vector<double>&)>& error,
                         double first_step, double last_step) {
  std::vector<double> values;
  for (auto& p : parameters) values.push_back(p.value = std::clamp(p.value, p.lower, p.upper));
  auto clamp_all = [&](std::vector<double>& v) {
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::clamp(v[i], parameters[i].lower, parameters[i].upper);
  };
  double best = error(values);
  for (double step = first_step; step > last_step;) {
    const double at_start = best;
    const std::vector<double> base = values;
    for (std::size_t i = 0; i < parameters.size(); ++i)
      for (const double dir : {1.0, -1.0}) {
        const double before = values[i];
        values[i] = std::clamp(before * std::exp(dir * step), parameters[i].lower, parameters[i].upper);
        const double e = error(values);
        if (e < best) {
          best = e;
          break;
        }
        values[i] = before;
      }
    // Pattern move (Hooke-Jeeves): keep going the way the sweep went, doubling while it pays.
    // Parameters that trade against each other (a bandwidth and a fixed overhead) lie along a
    // ridge that single-coordinate steps climb only slowly.
    if (best < at_start) {
      std::vector<double> log_move(values.size());
      for (std::size_t i = 0; i < values.size(); ++i) log_move[i] = std::log(values[i] / base[i]);
      for (double k = 1.0; k <= 64.0; k *= 2) {
        std::vector<double> trial = values;
        for (std::size_t i = 0; i < trial.size(); ++i) trial[i] *= std::exp(k * log_move[i]);
        clamp_all(trial);
        const double e = error(trial);
        if (!(e < best)) break;
        best = e;
        values = std::move(trial);
      }
    }
    if (best > at_start * (1 - 1e-3)) step /= 2;
  }
  for (std::size_t i = 0; i < parameters.size(); ++i) parameters[i].value = values[i];
  return best;
}

double log_error(double predicted, double measured) {
  if (!(predicted > 0) || !(measured > 0) || !std::isfinite(predicted) || !std::isfinite(measured)) return 0;
  return std::log(predicted / measured);
}

}  // namespace trilemma::calibration
