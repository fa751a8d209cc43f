// Golden files: a test's output compared with tests/<folder>/golden/<name>, byte for byte.
// TRILEMMA_UPDATE_GOLDEN=1 rewrites the file instead (review the diff before committing).
#pragma once
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace trilemma::testing {

inline std::filesystem::path golden_path(const std::string& folder, const std::string& name) {
  return std::filesystem::path(TRILEMMA_SOURCE_DIR) / "tests" / folder / "golden" / name;
}

inline void check_golden(const std::string& folder, const std::string& name, const std::string& actual) {
  const auto path = golden_path(folder, name);
  if (std::getenv("TRILEMMA_UPDATE_GOLDEN")) {
    std::ofstream(path) << actual;
    return;
  }
  CAPTURE(path.string());
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(actual == ss.str());
}

}  // namespace trilemma::testing
