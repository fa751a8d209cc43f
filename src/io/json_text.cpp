#include "io/json_text.hpp"

#include <algorithm>
#include <cmath>

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

// Byte offset `at` (0-based) as line:column, both from 1: what the YAML readers print, so an
// editor can jump to either.
std::string line_column(const std::string& text, std::size_t at) {
  at = std::min(at, text.size());
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < at; ++i)
    if (text[i] == '\n') ++line, line_start = i + 1;
  return std::to_string(line) + ":" + std::to_string(at - line_start + 1);
}

}  // namespace

Result<nlohmann::json> parse_json(const std::string& text, const std::string& file, int max_depth) {
  if (const auto at = too_deep_at(text, max_depth); at != std::string::npos)
    return make_error(ErrorKind::input, file, line_column(text, at),
                      "JSON nested deeper than " + std::to_string(max_depth) + " levels");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte counts from 1 and points at the character the parser could not take.
    return make_error(ErrorKind::input, file, line_column(text, e.byte == 0 ? 0 : e.byte - 1), "malformed JSON");
  } catch (const nlohmann::json::exception& e) {
    // out_of_range: a number no double holds (1e400).
    return make_error(ErrorKind::input, file, "", std::string("unreadable JSON: ") + e.what());
  }
}

namespace {

std::string field_of(const std::string& where, const std::string& key) { return where.empty() ? key : where + "." + key; }

const nlohmann::json* member(const nlohmann::json& o, const std::string& key) {
  if (!o.is_object()) return nullptr;
  const auto it = o.find(key);
  return it == o.end() ? nullptr : &*it;
}

}  // namespace

Result<double> json_number(const nlohmann::json& o, const std::string& key, double lo, double hi, const std::string& file,
                           const std::string& where) {
  const auto* v = member(o, key);
  if (!v) return make_error(ErrorKind::input, file, field_of(where, key), "missing");
  if (!v->is_number()) return make_error(ErrorKind::input, file, field_of(where, key), "must be a number, got " + v->dump());
  const double d = v->get<double>();
  if (!(d >= lo && d <= hi))
    return make_error(ErrorKind::input, file, field_of(where, key),
                      "must be in " + nlohmann::json(lo).dump() + ".." + nlohmann::json(hi).dump() + ", got " + v->dump());
  return d;
}

Result<std::uint32_t> json_count(const nlohmann::json& o, const std::string& key, std::uint32_t min, std::uint32_t max,
                                 const std::string& file, const std::string& where) {
  TRILEMMA_TRY(d, json_number(o, key, min, max, file, where));
  if (d != std::floor(d)) return make_error(ErrorKind::input, file, field_of(where, key), "must be a whole number, got " + o.at(key).dump());
  return static_cast<std::uint32_t>(d);
}

Result<std::string> json_string(const nlohmann::json& o, const std::string& key, const std::string& file, const std::string& where) {
  const auto* v = member(o, key);
  if (!v) return make_error(ErrorKind::input, file, field_of(where, key), "missing");
  if (!v->is_string()) return make_error(ErrorKind::input, file, field_of(where, key), "must be a string, got " + v->dump());
  return v->get<std::string>();
}

}  // namespace trilemma::io
