// The limits table: merging keeps the tighter value of each limit in its direction, every
// Constraints limit has a row, and a flag looser than the profile is reported (issue 50).
#include <catch2/catch.hpp>

#include <set>

#include "solver/limits.hpp"
#include "solver/planner.hpp"

using namespace trilemma;
using namespace trilemma::solver;

TEST_CASE("limits: merge keeps the tighter value in each limit's direction", "[solver][limits]") {
  Constraints profile, flags;
  profile.max_ttft_ms = 100, profile.min_decode_tok_s = 20, profile.max_memory_gib = 4;
  flags.max_ttft_ms = 500, flags.min_decode_tok_s = 30, flags.max_power_w = 5;
  const Constraints c = merge_constraints(profile, flags);
  CHECK(*c.max_ttft_ms == 100);       // upper bound: the smaller
  CHECK(*c.min_decode_tok_s == 30);   // lower bound: the larger
  CHECK(*c.max_memory_gib == 4);      // the profile's alone
  CHECK(*c.max_power_w == 5);         // the flag's alone
  CHECK_FALSE(c.max_loss_points.has_value());
  CHECK_FALSE(c.max_joules_per_token.has_value());
}

TEST_CASE("limits: one row per limit, each with a flag", "[solver][limits]") {
  std::set<std::string_view> names, flags;
  for (const LimitInfo& l : limits()) {
    names.insert(l.name);
    flags.insert(l.flag);
    CHECK(l.flag.substr(0, 2) == "--");
    // Each row reaches its own member: setting it through the row sets that member alone.
    Constraints c;
    c.*l.field = 1;
    int set = 0;
    for (const LimitInfo& other : limits()) set += (c.*other.field).has_value();
    CHECK(set == 1);
  }
  CHECK(names.size() == limits().size());
  CHECK(flags.size() == limits().size());
  CHECK(limits().size() == 6);  // Constraints' optional limits: a new one needs its row
}

TEST_CASE("limits: flags looser than the profile are named, tighter ones are not", "[solver][limits]") {
  Profile p;
  p.id = "latency";
  p.constraints.max_ttft_ms = 100, p.constraints.min_decode_tok_s = 20;
  Constraints flags;
  flags.max_ttft_ms = 250.5, flags.min_decode_tok_s = 25, flags.max_memory_gib = 2;
  const auto notes = looser_than_profile(p, flags);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].rfind("--max-ttft-ms 250.5 is looser than the latency scenario's limit of 100 ms", 0) == 0);
  flags.min_decode_tok_s = 10;
  CHECK(looser_than_profile(p, flags).size() == 2);
  CHECK(looser_than_profile(p, Constraints{}).empty());
}
