#include "io/yaml_fields.hpp"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

namespace trilemma::io {

namespace {
std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
}  // namespace

namespace {

std::string mark_text(const YAML::Mark& mark) {
  if (mark.line < 0) return {};
  return std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  return "a mapping";
}

}  // namespace

void YamlContext::fail(const YAML::Node& node, const std::string& path, const std::string& message) {
  fail_at(node.IsDefined() ? node.Mark() : YAML::Mark::null_mark(), path, message);
}

void YamlContext::fail_at(const YAML::Mark& mark, const std::string& path, const std::string& message) {
  if (m_error) return;
  std::string where = mark_text(mark);
  m_error = make_error(ErrorKind::input, m_file, where, path.empty() ? message : path + ": " + message);
}

namespace {

// The first key a mapping (at any depth) holds twice: yaml-cpp keeps one of them silently, so
// `vendor: A` then `vendor: B` read as B without a word (reliability D23). Depth is bounded by
// depth and by a node budget: aliases of aliases would otherwise be walked exponentially often.
std::optional<std::pair<std::string, YAML::Mark>> duplicate_key(const YAML::Node& node, long& budget, int depth = 0) {
  if (depth > 256 || --budget < 0) return std::nullopt;
  if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& kv : node) {
      if (kv.first.IsScalar() && !seen.insert(kv.first.Scalar()).second) return std::pair{kv.first.Scalar(), kv.first.Mark()};
      if (auto d = duplicate_key(kv.second, budget, depth + 1)) return d;
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node)
      if (auto d = duplicate_key(item, budget, depth + 1)) return d;
  }
  return std::nullopt;
}

// Where each document of a stream starts, read as events (no nodes are built). yaml-cpp's
// LoadAll loops for ever, allocating, on some malformed text (a leading ',' among others): the
// parser hands out an empty document without consuming anything, again and again. A document
// that starts where the previous one did is that stall, reported as malformed YAML.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// Empty when the text holds at most one document; otherwise the error to report.
std::optional<Error> not_one_document(const std::string& text, const std::string& file) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts events;
  while (events.starts.size() < 2 && parser.HandleNextDocument(events)) {
  }
  if (events.starts.size() < 2) return std::nullopt;
  const YAML::Mark& second = events.starts[1];
  if (second.pos <= events.starts[0].pos)
    return make_error(ErrorKind::input, file, mark_text(second), "malformed YAML: nothing here can be read as YAML");
  return make_error(ErrorKind::input, file, mark_text(second), "a second YAML document: give one per file");
}

}  // namespace

Result<YAML::Node> parse_yaml(const std::string& text, const std::string& file) {
  try {
    // One document: a second one after `---` would otherwise be ignored.
    if (auto error = not_one_document(text, file)) return *error;
    YAML::Node doc = YAML::Load(text);
    long budget = 1'000'000;
    if (auto d = duplicate_key(doc, budget)) return make_error(ErrorKind::input, file, mark_text(d->second), d->first + ": a key given twice");
    return doc;
  } catch (const YAML::Exception& e) {
    return make_error(ErrorKind::input, file, mark_text(e.mark), "malformed YAML: " + e.msg);
  }
}

FieldReader::FieldReader(YamlContext& ctx, YAML::Node node, std::string path)
    : m_ctx(ctx), m_node(std::move(node)), m_path(std::move(path)) {
  if (!m_node.IsMap()) m_ctx.fail(m_node, m_path, "expected a mapping, got " + describe(m_node));
}

bool FieldReader::has(const std::string& key) const {
  return m_node.IsMap() && std::as_const(m_node)[key].IsDefined() && !std::as_const(m_node)[key].IsNull();
}

YAML::Node FieldReader::lookup(const std::string& key) {
  m_used.insert(key);
  if (!m_node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  return std::as_const(m_node)[key];
}

YAML::Node FieldReader::require(const std::string& key) {
  YAML::Node n = lookup(key);
  if (!n.IsDefined() || n.IsNull()) {
    m_ctx.fail(m_node, field(key), "required field is missing");
    return YAML::Node(YAML::NodeType::Undefined);
  }
  return n;
}

std::string FieldReader::string(const std::string& key) {
  YAML::Node n = require(key);
  if (!n.IsDefined()) return {};
  if (!n.IsScalar()) {
    m_ctx.fail(n, field(key), "expected text, got " + describe(n));
    return {};
  }
  return n.Scalar();
}

std::optional<std::string> FieldReader::optional_string(const std::string& key) {
  if (!has(key)) {
    lookup(key);
    return std::nullopt;
  }
  return string(key);
}

double FieldReader::number(const std::string& key) {
  YAML::Node n = require(key);
  if (!n.IsDefined()) return 0;
  double value = 0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, value) || !std::isfinite(value)) {
    m_ctx.fail(n, field(key), "expected a number, got " + describe(n));
    return 0;
  }
  return value;
}

double FieldReader::positive(const std::string& key) {
  const double v = number(key);
  if (!m_ctx.failed() && !(v > 0)) m_ctx.fail(std::as_const(m_node)[key], field(key), "must be > 0, got " + std::as_const(m_node)[key].Scalar());
  return v;
}

double FieldReader::positive(const std::string& key, double max) {
  const double v = positive(key);
  if (!m_ctx.failed() && !(v <= max))
    m_ctx.fail(std::as_const(m_node)[key], field(key), "must be at most " + number_text(max) + ", got " + std::as_const(m_node)[key].Scalar());
  return v;
}

std::optional<double> FieldReader::optional_positive(const std::string& key, double max) {
  if (!has(key)) {
    lookup(key);
    return std::nullopt;
  }
  return positive(key, max);
}

std::optional<double> FieldReader::optional_number(const std::string& key) {
  if (!has(key)) {
    lookup(key);
    return std::nullopt;
  }
  return number(key);
}

std::optional<double> FieldReader::optional_positive(const std::string& key) {
  if (!has(key)) {
    lookup(key);
    return std::nullopt;
  }
  return positive(key);
}

std::optional<double> FieldReader::optional_non_negative(const std::string& key, double max) {
  const auto v = optional_number(key);
  if (v && !m_ctx.failed() && !(*v >= 0 && *v <= max))
    m_ctx.fail(std::as_const(m_node)[key], field(key),
               "must be in 0.." + number_text(max) + ", got " + std::as_const(m_node)[key].Scalar());
  return v;
}

Range FieldReader::range(const std::string& key) {
  if (!has(key) || !std::as_const(m_node)[key].IsMap()) return Range::exact(positive(key));
  auto r = map(key);
  Range out;
  out.low = r.positive("low");
  out.high = r.positive("high");
  out.mid = r.optional_positive("mid").value_or((out.low + out.high) / 2);
  r.finish();
  if (!m_ctx.failed() && !(out.low <= out.mid && out.mid <= out.high)) m_ctx.fail(r.node(), r.path(), "needs low <= mid <= high");
  return out;
}

std::uint32_t FieldReader::count(const std::string& key) {
  const double v = number(key);
  if (m_ctx.failed()) return 0;
  if (v < 0 || v != std::floor(v) || v > 4294967295.0) {
    m_ctx.fail(std::as_const(m_node)[key], field(key), "expected a whole number >= 0, got " + std::as_const(m_node)[key].Scalar());
    return 0;
  }
  return static_cast<std::uint32_t>(v);
}

std::optional<std::uint32_t> FieldReader::optional_count(const std::string& key) {
  if (!has(key)) {
    lookup(key);
    return std::nullopt;
  }
  return count(key);
}

bool FieldReader::boolean(const std::string& key) {
  YAML::Node n = require(key);
  if (!n.IsDefined()) return false;
  bool value = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, value)) {
    m_ctx.fail(n, field(key), "expected true or false, got " + describe(n));
    return false;
  }
  return value;
}

std::optional<bool> FieldReader::optional_boolean(const std::string& key) {
  if (!has(key)) {
    lookup(key);
    return std::nullopt;
  }
  return boolean(key);
}

std::vector<std::string> FieldReader::string_list(const std::string& key) {
  YAML::Node n = require(key);
  std::vector<std::string> out;
  if (!n.IsDefined()) return out;
  if (!n.IsSequence()) {
    m_ctx.fail(n, field(key), "expected a list, got " + describe(n));
    return out;
  }
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsScalar()) {
      m_ctx.fail(n[i], field(key) + "[" + std::to_string(i) + "]", "expected text, got " + describe(n[i]));
      return out;
    }
    out.push_back(n[i].Scalar());
  }
  return out;
}

std::vector<double> FieldReader::number_list(const std::string& key) {
  YAML::Node n = require(key);
  std::vector<double> out;
  if (!n.IsDefined()) return out;
  if (!n.IsSequence()) {
    m_ctx.fail(n, field(key), "expected a list of numbers, got " + describe(n));
    return out;
  }
  for (std::size_t i = 0; i < n.size(); ++i) {
    double v = 0;
    if (!n[i].IsScalar() || !YAML::convert<double>::decode(n[i], v) || !std::isfinite(v)) {
      m_ctx.fail(n[i], field(key) + "[" + std::to_string(i) + "]", "expected a number, got " + describe(n[i]));
      return out;
    }
    out.push_back(v);
  }
  return out;
}

std::string FieldReader::choice(const std::string& key, const std::vector<std::string>& allowed) {
  std::string v = string(key);
  if (m_ctx.failed()) return v;
  for (const auto& a : allowed)
    if (a == v) return v;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  m_ctx.fail(std::as_const(m_node)[key], field(key), "unknown value '" + v + "' (expected one of: " + list + ")");
  return v;
}

namespace {

// [a-z0-9]+([.-][a-z0-9]+)*, at most 128 characters. A loop, not std::regex: libstdc++'s
// matcher recurses per character, and an 80 KB id overflowed the stack (issue 14).
bool is_id(const std::string& v) {
  if (v.empty() || v.size() > 128) return false;
  bool after_separator = true;
  for (char c : v) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (alnum) after_separator = false;
    else if ((c == '.' || c == '-') && !after_separator) after_separator = true;
    else return false;
  }
  return !after_separator;
}

}  // namespace

std::string FieldReader::id(const std::string& key, const std::string& expected) {
  std::string v = string(key);
  if (m_ctx.failed()) return v;
  if (!is_id(v))
    m_ctx.fail(std::as_const(m_node)[key], field(key), "'" + (v.size() > 64 ? v.substr(0, 64) + "..." : v) + "' is not a lowercase hyphenated id of at most 128 characters");
  else if (!expected.empty() && v != expected)
    m_ctx.fail(std::as_const(m_node)[key], field(key), "'" + v + "' does not match the file name '" + expected + "'");
  return v;
}

FieldReader FieldReader::map(const std::string& key) {
  YAML::Node n = require(key);
  if (!n.IsDefined()) return FieldReader(m_ctx, YAML::Node(YAML::NodeType::Map), field(key));
  return FieldReader(m_ctx, n, field(key));
}

std::optional<FieldReader> FieldReader::optional_map(const std::string& key) {
  if (!has(key)) {
    lookup(key);
    return std::nullopt;
  }
  return map(key);
}

std::vector<FieldReader> FieldReader::map_list(const std::string& key) {
  YAML::Node n = require(key);
  std::vector<FieldReader> out;
  if (!n.IsDefined()) return out;
  if (!n.IsSequence()) {
    m_ctx.fail(n, field(key), "expected a list, got " + describe(n));
    return out;
  }
  for (std::size_t i = 0; i < n.size(); ++i)
    out.emplace_back(m_ctx, n[i], field(key) + "[" + std::to_string(i) + "]");
  return out;
}

YAML::Node FieldReader::raw(const std::string& key) { return lookup(key); }

std::vector<FieldReader::Key> FieldReader::keys() {
  std::vector<Key> out;
  if (!m_node.IsMap()) return out;
  for (const auto& kv : m_node) {
    if (!kv.first.IsScalar()) {
      m_ctx.fail(kv.first, m_path, "a key must be text, got " + describe(kv.first));
      continue;
    }
    out.push_back({kv.first.Scalar(), kv.first});
  }
  return out;
}

void FieldReader::finish() {
  if (!m_node.IsMap()) return;
  for (const auto& kv : m_node) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
    if (!m_used.count(key)) {
      m_ctx.fail(kv.first, field(key), "unknown key");
      return;
    }
  }
}

SourceTexts read_source_texts(FieldReader& row) {
  SourceTexts out;
  auto sources = row.map_list("sources");
  for (auto& s : sources) {
    auto fields = s.string_list("fields");
    const auto url = s.optional_string("url"), basis = s.optional_string("basis");
    const auto note = s.optional_string("note");
    if (!s.context().failed() && !url && !basis) s.context().fail(s.node(), s.path(), "a source needs a url or a basis");
    out.emplace_back(std::move(fields), url ? *url + (note ? " (" + *note + ")" : "") : basis.value_or(""));
    s.finish();
  }
  if (!row.context().failed() && sources.empty()) row.context().fail(row.node(), row.field("sources"), "every row needs sources");
  return out;
}

std::string source_text_of(const SourceTexts& sources, const std::string& field) {
  for (const auto& [fields, text] : sources)
    if (std::find(fields.begin(), fields.end(), field) != fields.end()) return text;
  return sources.empty() ? std::string() : sources.front().second;
}

}  // namespace trilemma::io
