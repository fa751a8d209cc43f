#include "io/csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace trilemma::io {

std::optional<std::size_t> CsvTable::column(const std::string& name) const {
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) return std::nullopt;
  return static_cast<std::size_t>(it - header.begin());
}

std::string CsvFields::text(const std::string& column) const {
  const auto i = m_table.column(column);
  return i ? m_record.fields[*i] : std::string();
}

void CsvFields::fail(const std::string& column, const std::string& message) {
  if (!m_error) m_error = make_error(ErrorKind::input, m_table.file, std::to_string(m_record.line), column + ": " + message);
}

std::string CsvFields::required(const std::string& column) {
  std::string s = text(column);
  if (s.empty()) fail(column, "required");
  return s;
}

namespace {

// The field as a finite number; nullopt when it is not one.
std::optional<double> finite_number(const std::string& s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::optional<double> CsvFields::number(const std::string& column) {
  const std::string s = text(column);
  if (s.empty()) return std::nullopt;
  const auto v = finite_number(s);
  if (!v) fail(column, "expected a number, got '" + s + "'");
  return v;
}

std::optional<double> CsvFields::positive(const std::string& column) {
  const std::string s = text(column);
  if (s.empty()) return std::nullopt;
  const auto v = finite_number(s);
  if (!v || !(*v > 0)) {
    fail(column, "expected a positive number, got '" + s + "'");
    return std::nullopt;
  }
  return v;
}

std::optional<std::uint32_t> CsvFields::count(const std::string& column) {
  const std::string s = text(column);
  if (s.empty()) return std::nullopt;
  std::uint32_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) {
    fail(column, "expected a whole number, got '" + s + "'");
    return std::nullopt;
  }
  return v;
}

Result<CsvTable> parse_csv(const std::string& text, const std::string& file) {
  CsvTable t;
  t.file = file;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> lines;
  std::vector<std::string> row;
  std::string field;
  std::size_t line = 1, row_line = 1;
  bool quoted = false, was_quoted = false, any = false;
  auto end_field = [&] {
    row.push_back(std::move(field));
    field.clear();
    was_quoted = false;
  };
  auto end_row = [&] {
    end_field();
    // A line holding nothing at all is skipped (a trailing newline, blank lines).
    if (!(row.size() == 1 && row[0].empty())) {
      rows.push_back(std::move(row));
      lines.push_back(row_line);
    }
    row.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    any = true;
    if (quoted) {
      if (ch == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
        else quoted = false;
      } else {
        if (ch == '\n') ++line;
        field += ch;
      }
      continue;
    }
    if (ch == '"') {
      if (!field.empty() || was_quoted)
        return make_error(ErrorKind::input, file, std::to_string(line), "a quote inside an unquoted field");
      quoted = was_quoted = true;
    } else if (ch == ',') {
      end_field();
    } else if (ch == '\n' || ch == '\r') {
      if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      end_row();
      row_line = ++line;
    } else {
      if (was_quoted) return make_error(ErrorKind::input, file, std::to_string(line), "text after a closing quote");
      field += ch;
    }
  }
  if (quoted) return make_error(ErrorKind::input, file, std::to_string(row_line), "unterminated quoted field");
  if (any && (!row.empty() || !field.empty() || was_quoted)) end_row();
  if (rows.empty()) return make_error(ErrorKind::input, file, "1", "empty file: expected a header row");
  t.header = std::move(rows.front());
  for (std::size_t r = 1; r < rows.size(); ++r) {
    if (rows[r].size() != t.header.size())
      return make_error(ErrorKind::input, file, std::to_string(lines[r]),
                        "expected " + std::to_string(t.header.size()) + " fields as in the header, got " +
                            std::to_string(rows[r].size()));
    t.records.push_back({lines[r], std::move(rows[r])});
  }
  return t;
}

Status check_columns(const CsvTable& t, const std::vector<std::string>& required, const std::vector<std::string>& optional) {
  for (const auto& c : required)
    if (!t.column(c)) return make_error(ErrorKind::input, t.file, "1", "missing column '" + c + "'");
  for (const auto& h : t.header) {
    const bool known = std::find(required.begin(), required.end(), h) != required.end() ||
                       std::find(optional.begin(), optional.end(), h) != optional.end();
    if (!known) return make_error(ErrorKind::input, t.file, "1", "unknown column '" + h + "'");
  }
  return Ok{};
}

}  // namespace trilemma::io
