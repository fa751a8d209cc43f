#include "measurements/training_tokens.hpp"

#include <cmath>
#include <cstdio>

#include "io/csv.hpp"
#include "io/embedded_data.hpp"

namespace trilemma::measurements {
namespace {

constexpr const char* k_tokens_builtin = "data/measurements/training-tokens.csv";
const std::vector<std::string> k_tokens_required = {"family", "params_min_b", "params_max_b", "released", "source_url", "locator"};
const std::vector<std::string> k_tokens_optional = {"tokens_t", "notes"};

// "2023-09" -> 2023.67 (the month's start); nullopt when malformed.
std::optional<double> fractional_year(const std::string& text) {
  int year = 0, month = 0;
  char dash = 0;
  if (text.size() != 7 || std::sscanf(text.c_str(), "%4d%c%2d", &year, &dash, &month) != 3 || dash != '-' || month < 1 ||
      month > 12 || year < 2000 || year > 2100)
    return std::nullopt;
  return year + (month - 1) / 12.0;
}

}  // namespace

Result<std::vector<TrainingTokens>> parse_training_tokens_csv(const std::string& text, const std::string& file) {
  TRILEMMA_TRY(table, io::parse_csv(text, file));
  if (auto ok = io::check_columns(table, k_tokens_required, k_tokens_optional); !ok.ok()) return ok.error();
  std::vector<TrainingTokens> out;
  for (const auto& record : table.records) {
    io::CsvFields f(table, record);
    TrainingTokens t;
    t.line = record.line;
    t.family = f.required("family");
    const auto lo = f.number("params_min_b"), hi = f.positive("params_max_b"), tokens = f.positive("tokens_t");
    if (!lo || *lo < 0) f.fail("params_min_b", "expected a number >= 0");
    if (!hi) f.fail("params_max_b", "required");
    const auto released = fractional_year(f.text("released"));
    if (!released) f.fail("released", "expected YYYY-MM, got '" + f.text("released") + "'");
    if (lo && hi && *hi <= *lo) f.fail("params_max_b", "must exceed params_min_b");
    t.source_url = f.required("source_url");
    t.locator = f.required("locator");
    if (f.error()) return *f.error();
    t.params_min_b = *lo, t.params_max_b = *hi, t.released = *released;
    if (tokens) t.tokens = *tokens * 1e12;
    for (const auto& other : out)
      if (other.family == t.family && t.params_min_b < other.params_max_b && other.params_min_b < t.params_max_b)
        return make_error(ErrorKind::input, file + ":" + std::to_string(record.line), "params_min_b",
                          "range overlaps the " + t.family + " row on line " + std::to_string(other.line));
    out.push_back(std::move(t));
  }
  return out;
}

Result<std::vector<TrainingTokens>> load_training_tokens(const std::string& path) {
  TRILEMMA_TRY(text, io::read_file_or_embedded(path, k_tokens_builtin));
  return parse_training_tokens_csv(text, path.empty() ? k_tokens_builtin : path);
}

const TrainingTokens* find_training_tokens(const std::vector<TrainingTokens>& table, std::string_view family,
                                           double params_b) {
  for (const auto& t : table)
    if (t.family == family && params_b >= t.params_min_b && params_b < t.params_max_b) return &t;
  return nullptr;
}

std::optional<TokenEstimate> training_tokens_of(const std::vector<TrainingTokens>& table, std::string_view family,
                                                double params_b) {
  const auto* row = find_training_tokens(table, family, params_b);
  if (!row) return std::nullopt;
  if (row->tokens) return TokenEstimate{*row->tokens, false};
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& t : table) {
    if (!t.tokens) continue;
    const double x = t.released, y = std::log(*t.tokens);
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double det = n * sxx - sx * sx;
  if (n < 2 || det <= 0) return std::nullopt;
  const double slope = (n * sxy - sx * sy) / det, intercept = (sy - slope * sx) / n;
  return TokenEstimate{std::exp(intercept + slope * row->released), true};
}

}  // namespace trilemma::measurements
