// The median of the fidelity reports (0 for no values): one definition for every summary.
#pragma once
#include <algorithm>
#include <vector>

namespace trilemma::fidelity {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace trilemma::fidelity
