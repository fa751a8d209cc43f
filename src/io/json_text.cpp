#include "io/json_text.hpp"

namespace trilemma::io {
namespace {

// Byte offset where nesting first exceeds `max_depth` (outside strings), or npos.
std::size_t too_deep_at(const std::string& text, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string::npos;
}

}  // namespace

Result<nlohmann::json> parse_json(const std::string& text, const std::string& file, int max_depth) {
  if (const auto at = too_deep_at(text, max_depth); at != std::string::npos)
    return make_error(ErrorKind::input, file, "byte " + std::to_string(at),
                      "JSON nested deeper than " + std::to_string(max_depth) + " levels");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return make_error(ErrorKind::input, file, "byte " + std::to_string(e.byte), "malformed JSON");
  } catch (const nlohmann::json::exception& e) {
    // out_of_range: a number no double holds (1e400).
    return make_error(ErrorKind::input, file, "", std::string("unreadable JSON: ") + e.what());
  }
}

}  // namespace trilemma::io
