// A YAML document as the JSON tree it spells, for documents trilemma writes in both forms (the
// plan document: `emit --format plan-yaml` writes it, `--plan` reads it back). YAML's scalars
// carry no type: a quoted scalar is a string; a plain one is null, a boolean or a number when
// it reads as one (YAML 1.2's core schema), else a string.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "types/result.hpp"

namespace trilemma::io {

// Errors name the file and line:column (malformed YAML, a key twice, a second document, keys
// that are not text, aliases nested past the depth the JSON readers accept).
Result<nlohmann::json> parse_yaml_as_json(const std::string& text, const std::string& file);

}  // namespace trilemma::io
