// The misspelling suggestions of the command line (issue 15): distance and the typo threshold.
#include <catch2/catch.hpp>

#include "cli/suggest.hpp"

using namespace trilemma::cli;

TEST_CASE("cli::edit_distance: insertions, deletions, substitutions, neighbour swaps", "[cli]") {
  CHECK(edit_distance("plan", "plan") == 0);
  CHECK(edit_distance("plna", "plan") == 1);  // a swap is one edit
  CHECK(edit_distance("--modle", "--model") == 1);
  CHECK(edit_distance("emit", "emits") == 1);
  CHECK(edit_distance("gate", "gape") == 1);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("cli::nearest: a close name is suggested, a distant one is not", "[cli]") {
  const std::vector<std::string> commands = {"devices", "models", "plan", "run", "eval", "verify", "gate", "emit", "export"};
  CHECK(nearest("plna", commands) == "plan");
  CHECK(nearest("exprot", commands) == "export");
  CHECK(nearest("verfiy", commands) == "verify");
  CHECK_FALSE(nearest("xyz", commands));
  CHECK_FALSE(nearest("plan", commands));  // an exact name is not a typo
  CHECK_FALSE(nearest("completely-different", commands));
}
