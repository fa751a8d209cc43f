// A small structural check of JSON documents against their documented schema: required keys and
// their types, recursively for objects and for every element of arrays.
#pragma once
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace trilemma::testing {

// A schema node: `type` is one of string, integer, number, boolean, object, array, any; an
// "|null" suffix also allows null. `keys` are the object's required keys; `items` is the
// element schema of an array.
struct Schema {
  std::string type;
  std::vector<std::pair<std::string, Schema>> keys = {};
  std::vector<Schema> items = {};  // zero or one element
};

inline bool type_matches(const nlohmann::json& j, const std::string& type) {
  const auto bar = type.find('|');
  const std::string base = type.substr(0, bar);
  if (bar != std::string::npos && j.is_null()) return true;
  if (base == "any") return true;
  if (base == "string") return j.is_string();
  if (base == "integer") return j.is_number_integer();
  if (base == "number") return j.is_number();
  if (base == "boolean") return j.is_boolean();
  if (base == "object") return j.is_object();
  if (base == "array") return j.is_array();
  return false;
}

// Returns the first mismatch as "path: problem", or "".
inline std::string schema_mismatch(const nlohmann::json& j, const Schema& s, const std::string& path = "$") {
  if (!type_matches(j, s.type)) return path + ": expected " + s.type + ", got " + j.type_name();
  if (j.is_object())
    for (const auto& [key, sub] : s.keys) {
      if (!j.contains(key)) return path + "." + key + ": missing";
      if (auto m = schema_mismatch(j[key], sub, path + "." + key); !m.empty()) return m;
    }
  if (j.is_array() && !s.items.empty())
    for (std::size_t i = 0; i < j.size(); ++i)
      if (auto m = schema_mismatch(j[i], s.items[0], path + "[" + std::to_string(i) + "]"); !m.empty()) return m;
  return "";
}

}  // namespace trilemma::testing
