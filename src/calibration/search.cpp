#include "calibration/search.hpp"

#include <algorithm>
#include <cmath>

namespace trilemma::calibration {

namespace {

double one_descent(std::vector<Parameter>& parameters, const std::function<double(const std::vector<double>&)>& error,
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
        // A bound that does not bind (a bandwidth while compute limits every point) leaves the
        // error flat: look further along, up to 16 steps, before giving the direction up.
        // Flat at k steps and worse at 2k: the bound starts binding in between, where the
        // error may dip; bisect for the dip.
        bool moved = false;
        auto at = [&](double k) {
          values[i] = std::clamp(before * std::exp(dir * k * step), parameters[i].lower, parameters[i].upper);
          return error(values);
        };
        for (double k = 1; k <= 16 && !moved; k *= 2) {
          const double e = at(k);
          if (e < best) {
            best = e, moved = true;
          } else if (e > best) {
            if (k == 1) break;
            double flat = k / 2, worse = k;
            for (int j = 0; j < 5 && !moved; ++j) {
              const double mid = (flat + worse) / 2, em = at(mid);
              if (em < best) best = em, moved = true;
              else if (em > best) worse = mid;
              else flat = mid;
            }
            break;
          }
        }
        if (moved) break;
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
    // Written so that a NaN error (an overflowing prediction) still halves the step: the loop
    // always ends (reliability D7).
    if (!(best < at_start * (1 - 1e-3))) step /= 2;
  }
  for (std::size_t i = 0; i < parameters.size(); ++i) parameters[i].value = values[i];
  return best;
}

}  // namespace

double coordinate_search(std::vector<Parameter>& parameters, const std::function<double(const std::vector<double>&)>& raw_error,
                         double first_step, double last_step) {
  // A NaN error compares false with everything; as +inf it is simply never better.
  const std::function<double(const std::vector<double>&)> error = [&](const std::vector<double>& v) {
    const double e = raw_error(v);
    return std::isnan(e) ? INFINITY : e;
  };
  // A descent ends where no single coordinate and no pattern move gains, which on the kinks of
  // a roofline (max of compute and memory times) can be a corner short of the minimum: descend
  // again from there with the first step, until a restart gains nothing.
  double best = one_descent(parameters, error, first_step, last_step);
  for (int restart = 0; restart < 4; ++restart) {
    const auto before = parameters;
    const double e = one_descent(parameters, error, first_step, last_step);
    if (!(e < best * (1 - 1e-3))) {
      if (!(e < best)) parameters = before;
      else best = e;
      break;
    }
    best = e;
  }
  return best;
}

double log_error(double predicted, double measured) {
  if (!(predicted > 0) || !(measured > 0) || !std::isfinite(predicted) || !std::isfinite(measured)) return 0;
  return std::log(predicted / measured);
}

}  // namespace trilemma::calibration
