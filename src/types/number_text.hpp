// Figures as text with a fixed number of decimals, and the binary units: one definition for
// every module (seven copies had grown, and a unity build cannot hold two in one namespace).
#pragma once
#include <cstdio>
#include <string>

namespace trilemma {

inline constexpr double k_kib = 1024.0;
inline constexpr double k_mib = 1048576.0;
inline constexpr double k_gib = 1073741824.0;

inline std::string fixed(double v, int digits = 1) {
  char buf[400];  // %f of the largest double is 309 digits before the point
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

}  // namespace trilemma
