// Small text-formatting helpers for human-readable reports.
#pragma once
#include <cstdio>
#include <string>

namespace trilemma::cli {

inline std::string fixed(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

inline std::string gib(double bytes, int digits = 2) { return fixed(bytes / 1073741824.0, digits) + " GiB"; }

inline std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

}  // namespace trilemma::cli
