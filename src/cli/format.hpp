// Small text-formatting helpers for human-readable reports.
#pragma once
#include <cstdio>
#include <string>

#include "types/number_text.hpp"

namespace trilemma::cli {

// Bytes in the largest binary unit that keeps the figure >= 0.1 (tiny models stay readable).
inline std::string gib(double bytes, int digits = 2) {
  if (bytes >= 0.1 * 1073741824.0) return fixed(bytes / 1073741824.0, digits) + " GiB";
  if (bytes >= 0.1 * 1048576.0) return fixed(bytes / 1048576.0, 1) + " MiB";
  return fixed(bytes / 1024.0, 1) + " KiB";
}

// Parameter counts: 8.03 B, 135 M, 260 K.
inline std::string count(double n) {
  if (n >= 1e9) return fixed(n / 1e9, 3) + " B";
  if (n >= 1e6) return fixed(n / 1e6, 1) + " M";
  return fixed(n / 1e3, 1) + " K";
}

// A table cell: `s` padded to `width`, and never less than one space after it, so a figure
// wider than its column cannot run into the next one ("333.632 J/tq4_0", issue 50).
inline std::string pad(const std::string& s, std::size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

}  // namespace trilemma::cli
