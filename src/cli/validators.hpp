// Flag validators shared by the commands (CLI11 checks run while parsing: a bad value is exit 2).
#pragma once
#include <CLI/CLI.hpp>

#include <cmath>
#include <string>

namespace trilemma::cli {

// Budgets, sizes and tolerances: NaN compares false with everything, so a plain range check
// lets it through (it was silently ignored), and inf is no budget.
inline CLI::Validator finite_positive() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0;
        try {
          v = std::stod(s);
        } catch (...) {
          return "not a number";
        }
        return std::isfinite(v) && v > 0 ? "" : "must be a finite number > 0";
      },
      "FINITE > 0");
}

}  // namespace trilemma::cli
