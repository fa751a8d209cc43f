// RFC 4180 CSV: a header row, then records; fields separated by commas, optionally in double
// quotes (a quote inside a quoted field is written twice; quoted fields may span lines). Every
// record keeps the line it starts on, so errors name file and line. Columns are looked up by
// header name; a header with unknown or missing columns is an error naming them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "types/result.hpp"

namespace trilemma::io {

struct CsvRecord {
  std::size_t line = 0;             // 1-based line the record starts on
  std::vector<std::string> fields;
};

struct CsvTable {
  std::string file;
  std::vector<std::string> header;
  std::vector<CsvRecord> records;
  // Index of `column` in the header, or nullopt.
  std::optional<std::size_t> column(const std::string& name) const;
};

// Parses `text`. Fails on an unterminated quote, a stray quote inside an unquoted field, a
// record whose field count differs from the header's, or an empty header.
Result<CsvTable> parse_csv(const std::string& text, const std::string& file);

// One record's fields by column name, typed, keeping the first error as
// "file:line: column: message" (the dataset readers check every field, then report once).
class CsvFields {
 public:
  CsvFields(const CsvTable& table, const CsvRecord& record) : m_table(table), m_record(record) {}
  std::string text(const std::string& column) const;  // "" when absent or empty
  std::string required(const std::string& column);     // an error when empty
  std::optional<double> number(const std::string& column);    // any finite number; nullopt when empty
  std::optional<double> positive(const std::string& column);  // > 0
  std::optional<std::uint32_t> count(const std::string& column);  // a whole number
  void fail(const std::string& column, const std::string& message);
  const std::optional<Error>& error() const { return m_error; }

 private:
  const CsvTable& m_table;
  const CsvRecord& m_record;
  std::optional<Error> m_error;
};

// Every column of `required` must be present; every header column must be in `required` or
// `optional` (typos are errors).
Status check_columns(const CsvTable& table, const std::vector<std::string>& required,
                     const std::vector<std::string>& optional);

}  // namespace trilemma::io
