// The summaries of the fidelity reports, one definition each: the median (0 for no values), a
// quantile by linear interpolation, and figures rounded for the files they are written to.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

namespace trilemma::fidelity {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The q-quantile (0..1) of a non-empty list, interpolated between neighbours.
inline double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double at = q * double(v.size() - 1);
  const auto i = static_cast<std::size_t>(at);
  return i + 1 < v.size() ? v[i] + (at - double(i)) * (v[i + 1] - v[i]) : v.back();
}

// Four decimals: what devices/fitted.yaml and the reports keep, so they carry no float noise.
inline double rounded(double v) { return std::round(v * 10000.0) / 10000.0; }

}  // namespace trilemma::fidelity
