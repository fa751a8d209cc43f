// The numeric limits a profile or a flag can set, as one table: each row names the limit, the
// Constraints member that holds it, whether it bounds from above, and the plan flag that sets
// it. Merging a profile with the flags and telling the user a flag was looser than the
// profile read the rows instead of naming each member (a first step of issue 46's one table).
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "solver/profile.hpp"

namespace trilemma::solver {

struct Candidate;

struct LimitInfo {
  std::string_view name;  // as profiles and violations spell it: max_ttft_ms
  std::optional<double> Constraints::*field;
  bool upper;             // true: a value must stay at or below it; false: at or above
  std::string_view flag;  // plan's flag that sets it: --max-ttft-ms
  std::string_view unit;
  double (*value)(const Candidate&);  // the plan's figure the limit bounds
  std::string_view short_name;        // in a list of margins: "TTFT x1.40"
  double floor = 0;                   // the figure's least value in a ratio (a loss of 0 is no infinite headroom)
};

std::span<const LimitInfo> limits();

// The tighter of two values of one limit (either may be absent).
std::optional<double> tighter(const LimitInfo& limit, std::optional<double> a, std::optional<double> b);

// The flags in `flags` that ask for less than `profile` does (the profile's limit applies):
// "--max-ttft-ms 900 is looser than the latency scenario's 300 ms; ...".
std::vector<std::string> looser_than_profile(const Profile& profile, const Constraints& flags);

// How many times over a plan meets a limit: >= 1 meets it, < 1 falls short (what it reaches
// over what is asked, either way round).
double headroom(const LimitInfo& limit, double bound, double value);

// A limit a plan misses and by how much: margin_pct < 0, as a share of the limit (a 140 ms TTFT
// under a 100 ms limit misses by -40%).
struct LimitMiss {
  const LimitInfo* limit;
  double bound, value, margin_pct;
};
// The limit of `constraints` that `plan` misses by the most, if it misses any.
std::optional<LimitMiss> worst_miss(const Constraints& constraints, const Candidate& plan);

}  // namespace trilemma::solver
