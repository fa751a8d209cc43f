// JSON documents users hand us (plan documents, reports, config.json): parsed with every
// failure an input error naming file and byte, never an exception that escapes. Nesting is
// capped before parsing: a document nested thousands deep would overflow the stack when
// copied or destroyed (issue 14).
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "types/result.hpp"

namespace trilemma::io {

inline constexpr int k_max_json_depth = 64;

// Malformed text, numbers out of range (1e400) and nesting deeper than `max_depth` are input
// errors ("file:byte N: ...").
Result<nlohmann::json> parse_json(const std::string& text, const std::string& file, int max_depth = k_max_json_depth);

}  // namespace trilemma::io
