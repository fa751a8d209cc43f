// Test data in YAML (thresholds, device files read raw) through the project's one loader
// (io::read_text_file + io::parse_yaml), so a bad file fails the test with its path and line.
#pragma once
#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>

#include "io/atomic_write.hpp"
#include "io/yaml_fields.hpp"

namespace trilemma::testing {

inline YAML::Node load_yaml_file(const std::filesystem::path& path) {
  auto text = io::read_text_file(path);
  INFO((text.ok() ? "" : text.error().to_string()));
  REQUIRE(text.ok());
  auto doc = io::parse_yaml(*text, path.string());
  INFO((doc.ok() ? "" : doc.error().to_string()));
  REQUIRE(doc.ok());
  return *doc;
}

}  // namespace trilemma::testing
