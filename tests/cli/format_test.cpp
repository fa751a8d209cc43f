// The text tables' cells (cli/format.hpp): a figure wider than its column keeps a space before
// the next one (issue 50: "333.632 J/tq4_0+imatrix / kv ..." in plan's front table).
#include <catch2/catch.hpp>

#include "cli/format.hpp"

using namespace trilemma;
using namespace trilemma::cli;

TEST_CASE("cli::pad: padded to the width, and at least one space after a wide cell", "[cli]") {
  CHECK(pad("1.5 J/t", 11) == "1.5 J/t    ");
  CHECK(pad("333.632 J/t", 11) == "333.632 J/t ");
  CHECK(pad("12345.678 J/t", 11) == "12345.678 J/t ");
  CHECK(pad("", 3) == "   ");
  // A row of wide cells still splits into its figures on whitespace.
  const std::string row = pad(fixed(12345.6, 1) + " tok/s", 13) + pad(fixed(333.632, 3) + " J/t", 11) + "q4_0+imatrix";
  CHECK(row == "12345.6 tok/s 333.632 J/t q4_0+imatrix");
}
