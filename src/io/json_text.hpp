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

// Fields of a JSON object read strictly, each error naming `file` and `where.key`: a count (an
// integer in [min, max]; 1e20 as a uint32 was undefined behaviour, reliability D10), a finite
// number in [lo, hi], a string. A missing key is an error unless the field has a default.
Result<std::uint32_t> json_count(const nlohmann::json& object, const std::string& key, std::uint32_t min, std::uint32_t max,
                                 const std::string& file, const std::string& where);
Result<double> json_number(const nlohmann::json& object, const std::string& key, double lo, double hi, const std::string& file,
                           const std::string& where);
Result<std::string> json_string(const nlohmann::json& object, const std::string& key, const std::string& file,
                                const std::string& where);

}  // namespace trilemma::io
