// Scenario profiles (profiles/*.yaml): which corner of the triangle is fixed (hard constraints)
// and how the remaining configurations rank (a lexicographic objective with tolerances, so a
// negligible gain in the first metric does not outweigh a large one in the next).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "types/result.hpp"

namespace trilemma::solver {

enum class Metric { decode_tok_s, ttft_ms, memory_gib, loss_points, joules_per_token };
std::string metric_name(Metric m);

struct Objective {
  Metric metric;
  bool maximize = false;
  double tolerance = 0;      // absolute, in the metric's unit
  double tolerance_pct = 0;  // relative, %
};

struct Constraints {
  std::optional<double> max_ttft_ms;
  std::optional<double> min_decode_tok_s;
  std::optional<double> max_memory_gib;
  std::optional<double> max_loss_points;
  std::optional<double> max_joules_per_token;  // per generated token (docs/power.md)
  std::optional<double> max_power_w;           // the device's draw in either phase
  std::vector<std::string> allowed_weights;  // empty = any
  std::vector<std::string> allowed_kv;       // empty = any
};

struct Profile {
  std::string id;
  std::string name;
  std::string use_cases;
  std::string keeps;  // latency | memory | accuracy | battery
  Constraints constraints;
  std::vector<Objective> objective;
  std::uint32_t default_context = 4096;
  std::uint32_t default_prompt = 256;
  std::optional<double> sustained_minutes;  // plan for the speed held after this long (docs/power.md)
  std::string origin;
};

Result<Profile> parse_profile(const std::string& yaml_text, const std::string& file, const std::string& expected_id);
Result<std::vector<Profile>> builtin_profiles();
// A profile id (latency | memory | accuracy) or a path to a profile YAML.
Result<Profile> resolve_profile(const std::string& id_or_path);

}  // namespace trilemma::solver
