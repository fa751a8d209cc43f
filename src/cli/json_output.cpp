#include "cli/json_output.hpp"

#include <cmath>
#include <string_view>

namespace trilemma::cli {
namespace {

// Keys whose numbers are amounts: never below zero. Errors, biases, margins and deltas may be.
bool amount(std::string_view key) {
  for (const std::string_view suffix : {"_tok_s", "_ms", "_bytes", "_gib", "_mib", "_w", "_gbps", "_gflops", "_gops"})
    if (key.size() >= suffix.size() && key.substr(key.size() - suffix.size()) == suffix) return true;
  return key.rfind("joules", 0) == 0 || key == "watts" || key == "tokens_per_pass" || key == "acceptance";
}

std::string find(const nlohmann::json& j, const std::string& path, bool in_amount) {
  if (j.is_number_float()) {
    const double v = j.get<double>();
    if (!std::isfinite(v)) return path + " = " + std::to_string(v);
    if (in_amount && v < 0) return path + " = " + std::to_string(v) + " (an amount below zero)";
    return "";
  }
  if (j.is_number_integer() && in_amount && j.get<long long>() < 0) return path + " = " + std::to_string(j.get<long long>());
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      // A range's low/mid/high are amounts when the range is.
      const bool part = key == "low" || key == "mid" || key == "high" || key == "median" || key == "min" || key == "max";
      if (auto at = find(value, path.empty() ? key : path + "." + key, part ? in_amount : amount(key)); !at.empty()) return at;
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i)
      if (auto at = find(j[i], path + "[" + std::to_string(i) + "]", in_amount); !at.empty()) return at;
  }
  return "";
}

}  // namespace

std::string impossible_figure(const nlohmann::json& j) { return find(j, "", false); }

}  // namespace trilemma::cli
