// Strict reading of YAML documents into plain structs. A FieldReader walks one mapping, records
// the first problem as an Error that names file, line:column and the dotted field path, and
// rejects keys nobody asked for (typos must not be silently ignored).
//
// Usage: read every field, then call finish(); the document is valid if !ctx.failed().
#pragma once
#include <yaml-cpp/yaml.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "types/estimate.hpp"
#include "types/result.hpp"

namespace trilemma::io {

// Shared by every reader of one file: the file name and the first error.
class YamlContext {
 public:
  explicit YamlContext(std::string file) : m_file(std::move(file)) {}
  const std::string& file() const { return m_file; }
  bool failed() const { return m_error.has_value(); }
  const Error& error() const { return *m_error; }
  // Records `message` at `node`'s position unless an earlier error is already recorded.
  void fail(const YAML::Node& node, const std::string& path, const std::string& message);
  void fail_at(const YAML::Mark& mark, const std::string& path, const std::string& message);

 private:
  std::string m_file;
  std::optional<Error> m_error;
};

// Parses YAML text; syntax errors become an Error with line:column.
Result<YAML::Node> parse_yaml(const std::string& text, const std::string& file);

class FieldReader {
 public:
  // `path` is the dotted prefix of this mapping ("" for the document root).
  FieldReader(YamlContext& ctx, YAML::Node node, std::string path);

  bool has(const std::string& key) const;
  std::string string(const std::string& key);
  std::optional<std::string> optional_string(const std::string& key);
  double number(const std::string& key);  // any finite number
  double positive(const std::string& key);  // > 0
  // > 0 and at most `max`: a physical figure (a clock of 1e308 GHz once drew charts of NaN).
  double positive(const std::string& key, double max);
  std::optional<double> optional_positive(const std::string& key, double max);
  std::optional<double> optional_number(const std::string& key);
  std::optional<double> optional_positive(const std::string& key);
  // >= 0 and at most `max` (a cost or an amount: zero is one, a negative one is not).
  std::optional<double> optional_non_negative(const std::string& key, double max);
  // A positive figure with its spread: a number (low = mid = high) or {low, [mid], high}, ordered;
  // a missing mid is the midpoint.
  Range range(const std::string& key);
  std::uint32_t count(const std::string& key);  // integer >= 0
  std::optional<std::uint32_t> optional_count(const std::string& key);
  bool boolean(const std::string& key);
  std::optional<bool> optional_boolean(const std::string& key);
  std::vector<std::string> string_list(const std::string& key);
  std::vector<double> number_list(const std::string& key);
  // One of `allowed`; the message lists them.
  std::string choice(const std::string& key, const std::vector<std::string>& allowed);
  // A lowercase hyphenated id ("raspberry-pi-5"); when `expected` is not empty it must equal it
  // (the file name of a catalog entry).
  std::string id(const std::string& key, const std::string& expected);
  // A nested mapping (required or optional).
  FieldReader map(const std::string& key);
  std::optional<FieldReader> optional_map(const std::string& key);
  // A sequence of mappings.
  std::vector<FieldReader> map_list(const std::string& key);
  // The raw node, for formats read by hand; marks the key as used.
  YAML::Node raw(const std::string& key);
  // The keys of this mapping, for tables keyed by name (none when it is not a mapping, which the
  // constructor already reported). A key that is not text fails the context and is left out.
  // Iterate these, never node(): iterating a list as a mapping throws inside yaml-cpp.
  struct Key {
    std::string text;
    YAML::Node node;  // for the error position
  };
  std::vector<Key> keys();

  // Reports the first key that no call above asked for.
  void finish();

  YamlContext& context() { return m_ctx; }
  const std::string& path() const { return m_path; }
  const YAML::Node& node() const { return m_node; }
  std::string field(const std::string& key) const { return m_path.empty() ? key : m_path + "." + key; }

 private:
  YAML::Node require(const std::string& key);
  YAML::Node lookup(const std::string& key);

  YamlContext& m_ctx;
  YAML::Node m_node;
  std::string m_path;
  std::set<std::string> m_used;
};

// A table row's `sources`: each entry's `fields` and its text (`url (note)`, or `basis`), in
// file order. Every entry needs a url or a basis, and the row at least one entry.
using SourceTexts = std::vector<std::pair<std::vector<std::string>, std::string>>;
SourceTexts read_source_texts(FieldReader& row);
// The text of the first entry that lists `field`, else of the first entry ("" without any).
std::string source_text_of(const SourceTexts& sources, const std::string& field);

}  // namespace trilemma::io
