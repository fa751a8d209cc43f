// Renderings of a gate report: human summary, JSON (docs/ci.md), JUnit XML (one testcase per
// model x budget) and GitHub Actions workflow commands. Strings only: cli prints and writes them.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "gate/gate.hpp"
#include "io/xml_escape.hpp"

namespace trilemma::gate {

inline constexpr int k_report_schema_version = 1;

nlohmann::json report_to_json(const Report& report);
std::string report_to_text(const Report& report);
std::string report_to_junit(const Report& report);
std::string report_to_github(const Report& report);

using io::xml_escape;  // JUnit's text and attributes
// Workflow-command escaping: data escapes % CR LF; properties also escape : and ,.
std::string github_escape_data(const std::string& s);
std::string github_escape_property(const std::string& s);

}  // namespace trilemma::gate
