#include "io/yaml_json.hpp"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "io/json_text.hpp"
#include "io/yaml_fields.hpp"

namespace trilemma::io {
namespace {

bool is_one_of(const std::string& s, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (s == w) return true;
  return false;
}

// A plain scalar by YAML 1.2's core schema; numbers outside a double's range stay text, as
// JSON's readers would refuse them anyway.
nlohmann::json plain_scalar(const std::string& s) {
  if (s.empty() || is_one_of(s, {"~", "null", "Null", "NULL"})) return nullptr;
  if (is_one_of(s, {"true", "True", "TRUE"})) return true;
  if (is_one_of(s, {"false", "False", "FALSE"})) return false;
  const char* begin = s.c_str();
  char* end = nullptr;
  errno = 0;
  // Whole numbers as nlohmann's parser stores them: unsigned when not negative.
  const long long whole = std::strtoll(begin, &end, 10);
  if (end == begin + s.size() && errno == 0) return whole < 0 ? nlohmann::json(whole) : nlohmann::json(std::uint64_t(whole));
  errno = 0;
  const double v = std::strtod(begin, &end);
  const bool digits = s.find_first_of("0123456789") != std::string::npos && s.find_first_of("xXpP") == std::string::npos;
  if (end == begin + s.size() && errno == 0 && std::isfinite(v) && digits) return v;
  return s;
}

// `budget` counts nodes: aliases share nodes, and a document of aliases of aliases spells a tree
// exponentially larger than its text.
Result<nlohmann::json> to_json(const YAML::Node& node, const std::string& file, int depth, long& budget) {
  if (--budget < 0) return make_error(ErrorKind::input, file, "", "YAML spells more than a million values (aliases of aliases?)");
  if (depth > k_max_json_depth)
    return make_error(ErrorKind::input, file, "", "YAML nested deeper than " + std::to_string(k_max_json_depth) + " levels");
  if (node.IsMap()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) {
        const auto m = kv.first.Mark();
        return make_error(ErrorKind::input, file, std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1), "a key that is not text");
      }
      TRILEMMA_TRY(value, to_json(kv.second, file, depth + 1, budget));
      out[kv.first.Scalar()] = std::move(value);
    }
    return out;
  }
  if (node.IsSequence()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : node) {
      TRILEMMA_TRY(value, to_json(item, file, depth + 1, budget));
      out.push_back(std::move(value));
    }
    return out;
  }
  if (node.IsScalar()) return node.Tag() == "!" ? nlohmann::json(node.Scalar()) : plain_scalar(node.Scalar());
  return nlohmann::json(nullptr);
}

}  // namespace

Result<nlohmann::json> parse_yaml_as_json(const std::string& text, const std::string& file) {
  TRILEMMA_TRY(doc, parse_yaml(text, file));
  try {
    long budget = 1'000'000;
    return to_json(doc, file, 0, budget);
  } catch (const YAML::Exception& e) {
    return make_error(ErrorKind::input, file, "", "malformed YAML: " + e.msg);
  }
}

}  // namespace trilemma::io
