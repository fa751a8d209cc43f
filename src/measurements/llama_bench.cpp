#include "measurements/llama_bench.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <sstream>

#include "io/csv.hpp"
#include "io/json_text.hpp"

namespace trilemma::measurements {
namespace {

// A measured rate: positive and within what any device runs (1e-6 .. 1e9 tok/s). 1e308 or
// 1e-308 tok/s is not a measurement, and once sent the calibration's search into a loop it
// never left (reliability D7).
constexpr double k_min_rate = 1e-6, k_max_rate = 1e9;
const std::string k_rate_range = "1e-06..1e+09";
bool plausible_rate(double ts) { return ts >= k_min_rate && ts <= k_max_rate; }

using nlohmann::json;

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r");
  const auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::optional<double> number(const std::string& s) {
  double v = 0;
  const std::string t = trim(s);
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// A whole number in [lo, hi], for counts read from text: a fraction, -56 or 1e20 is refused
// before any conversion (converting them to an integer type is undefined).
std::optional<std::int64_t> whole(std::optional<double> v, double lo = 0, double hi = 1e9) {
  if (!v || *v < lo || *v > hi || *v != std::floor(*v)) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

Error bad(const std::string& file, std::size_t line, const std::string& message) {
  return make_error(ErrorKind::input, file, std::to_string(line), message);
}

// The fields every full-record format (json, jsonl, csv) has for a test.
const std::vector<std::string> k_bench_required = {"model_type", "n_prompt", "n_gen", "avg_ts"};

// One record from a JSON object (json, jsonl) or a CSV row's fields by name.
template <class Get>
Result<BenchResult> from_fields(Get get, const std::string& file, std::size_t line) {
  BenchResult r;
  r.file = file;
  r.line = line;
  for (const auto& key : k_bench_required)
    if (!get(key)) return bad(file, line, key + ": missing (not llama-bench output?)");
  auto text = [&](const char* key) { return get(key).value_or(""); };
  auto num = [&](const char* key) -> Result<std::optional<double>> {
    const auto v = get(key);
    if (!v || v->empty()) return std::optional<double>{};
    const auto n = number(*v);
    if (!n) return bad(file, line, std::string(key) + ": expected a number, got '" + *v + "'");
    return n;
  };
  auto count = [&](const char* key) -> Result<std::uint32_t> {
    TRILEMMA_TRY(v, num(key));
    if (!v) return std::uint32_t{0};
    const auto n = whole(v);
    if (!n) return bad(file, line, std::string(key) + ": expected a count");
    return static_cast<std::uint32_t>(*n);
  };
  r.build = text("build_commit");
  r.model_filename = text("model_filename");
  r.model_type = text("model_type");
  r.backend = text("backends");
  if (r.backend.empty()) r.backend = text("backend");
  r.type_k = text("type_k");
  r.type_v = text("type_v");
  TRILEMMA_TRY(size, num("model_size"));
  TRILEMMA_TRY(params, num("model_n_params"));
  TRILEMMA_TRY(threads, count("n_threads"));
  TRILEMMA_TRY(ngl, num("n_gpu_layers"));
  const auto gpu_layers = whole(ngl, -1e9, 1e9);
  if (ngl && !gpu_layers) return bad(file, line, "n_gpu_layers: expected a whole number");
  TRILEMMA_TRY(prompt, count("n_prompt"));
  TRILEMMA_TRY(gen, count("n_gen"));
  TRILEMMA_TRY(depth, count("n_depth"));
  TRILEMMA_TRY(ts, num("avg_ts"));
  TRILEMMA_TRY(spread, num("stddev_ts"));
  if (spread && std::isfinite(*spread) && *spread >= 0) r.stddev_ts = spread;
  r.model_size_bytes = size;
  r.model_n_params = params;
  if (threads > 0) r.threads = threads;  // 0: absent
  if (gpu_layers) r.n_gpu_layers = static_cast<int>(*gpu_layers);
  r.n_prompt = prompt, r.n_gen = gen, r.n_depth = depth;
  if (!ts || !plausible_rate(*ts)) return bad(file, line, "avg_ts: expected tokens per second in " + k_rate_range + ", got " + text("avg_ts"));
  r.avg_ts = *ts;
  if (r.n_prompt == 0 && r.n_gen == 0) return bad(file, line, "n_prompt and n_gen are both 0: not a test");
  return r;
}

std::optional<std::string> json_field(const json& j, const std::string& key) {
  if (!j.contains(key)) return std::nullopt;
  const auto& v = j.at(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) {
    std::ostringstream s;
    s.precision(17);
    s << v.get<double>();
    return s.str();
  }
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  return std::nullopt;
}

// Line of the n-th top-level object of a JSON array (for messages).
std::vector<std::size_t> object_lines(const std::string& text) {
  std::vector<std::size_t> out;
  std::size_t line = 1;
  int depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (c == '\n') ++line;
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (c == '{' && depth == 1) out.push_back(line);
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return out;
}

Result<std::vector<BenchResult>> parse_json_array(const std::string& text, const std::string& file) {
  auto parsed = io::parse_json(text, file);
  if (!parsed.ok()) {
    Error e = parsed.error();
    e.message = "malformed JSON: " + e.message;
    return e;
  }
  const json& doc = *parsed;
  if (!doc.is_array()) return bad(file, 1, "expected an array of llama-bench tests");
  const auto lines = object_lines(text);
  std::vector<BenchResult> out;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const std::size_t line = i < lines.size() ? lines[i] : 1;
    if (!doc[i].is_object()) return bad(file, line, "expected an object");
    TRILEMMA_TRY(r, from_fields([&](const std::string& k) { return json_field(doc[i], k); }, file, line));
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<BenchResult>> parse_jsonl(const std::string& text, const std::string& file) {
  std::vector<BenchResult> out;
  std::istringstream in(text);
  std::string line_text;
  for (std::size_t line = 1; std::getline(in, line_text); ++line) {
    if (trim(line_text).empty()) continue;
    auto parsed = io::parse_json(line_text, file);
    if (!parsed.ok()) return bad(file, line, "malformed JSON: " + parsed.error().message);
    const json& j = *parsed;
    if (!j.is_object()) return bad(file, line, "expected an object");
    TRILEMMA_TRY(r, from_fields([&](const std::string& k) { return json_field(j, k); }, file, line));
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<BenchResult>> parse_csv_results(const std::string& text, const std::string& file) {
  TRILEMMA_TRY(table, io::parse_csv(text, file));
  std::vector<BenchResult> out;
  for (const auto& rec : table.records) {
    TRILEMMA_TRY(r, from_fields(
                        [&](const std::string& k) -> std::optional<std::string> {
                          const auto i = table.column(k);
                          return i ? std::optional(rec.fields[*i]) : std::nullopt;
                        },
                        file, rec.line));
    out.push_back(std::move(r));
  }
  if (!table.column("n_prompt")) return bad(file, 1, "not llama-bench output: no n_prompt column");
  return out;
}

// "590.41 MiB" -> bytes; "1.10 B" / "135.11 M" -> parameters.
std::optional<double> with_unit(const std::string& cell, const std::vector<std::pair<std::string, double>>& units) {
  std::istringstream in(trim(cell));
  double v = 0;
  std::string unit;
  if (!(in >> v >> unit)) return std::nullopt;
  for (const auto& [name, scale] : units)
    if (unit == name) return v * scale;
  return std::nullopt;
}

// "pp512", "tg128", "pp512+tg128", each optionally "@ d4096".
bool parse_test(const std::string& cell, BenchResult& r) {
  std::string t = trim(cell);
  if (const auto at = t.find('@'); at != std::string::npos) {
    const std::string depth = trim(t.substr(at + 1));
    if (depth.size() < 2 || depth[0] != 'd') return false;
    const auto d = whole(number(depth.substr(1)));
    if (!d) return false;
    r.n_depth = static_cast<std::uint32_t>(*d);
    t = trim(t.substr(0, at));
  }
  std::istringstream parts(t);
  std::string part;
  bool any = false;
  while (std::getline(parts, part, '+')) {
    part = trim(part);
    if (part.size() < 3) return false;
    const auto n = whole(number(part.substr(2)));
    if (!n) return false;
    if (part.rfind("pp", 0) == 0) r.n_prompt = static_cast<std::uint32_t>(*n);
    else if (part.rfind("tg", 0) == 0) r.n_gen = static_cast<std::uint32_t>(*n);
    else return false;
    any = true;
  }
  return any;
}

Result<std::vector<BenchResult>> parse_markdown(const std::string& text, const std::string& file) {
  std::istringstream in(text);
  std::string line_text;
  std::vector<std::string> header;
  std::vector<BenchResult> out;
  auto cells = [](const std::string& row) {
    std::vector<std::string> c;
    std::string cell;
    std::istringstream s(row);
    std::getline(s, cell, '|');  // before the first bar
    while (std::getline(s, cell, '|')) c.push_back(trim(cell));
    if (!c.empty() && c.back().empty()) c.pop_back();
    return c;
  };
  for (std::size_t line = 1; std::getline(in, line_text); ++line) {
    const std::string t = trim(line_text);
    if (t.empty() || t[0] != '|') continue;
    auto c = cells(t);
    if (header.empty()) {
      header = c;
      continue;
    }
    if (!c.empty() && c[0].find("---") != std::string::npos) continue;
    if (c.size() != header.size())
      return bad(file, line, "expected " + std::to_string(header.size()) + " cells as in the header, got " + std::to_string(c.size()));
    BenchResult r;
    r.file = file;
    r.line = line;
    bool has_test = false, has_ts = false, has_model = false;
    for (std::size_t i = 0; i < header.size(); ++i) {
      const std::string& h = header[i];
      const std::string& v = c[i];
      if (h == "model") r.model_type = v, has_model = true;
      else if (h == "size") r.model_size_bytes = with_unit(v, {{"B", 1}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}});
      else if (h == "params") r.model_n_params = with_unit(v, {{"K", 1e3}, {"M", 1e6}, {"B", 1e9}, {"T", 1e12}});
      else if (h == "backend") r.backend = v;
      else if (h == "threads") {
        const auto n = whole(number(v));
        if (!n) return bad(file, line, "threads: expected a count, got '" + v + "'");
        r.threads = static_cast<std::uint32_t>(*n);
      } else if (h == "ngl") {
        if (const auto n = whole(number(v), -1e9, 1e9)) r.n_gpu_layers = static_cast<int>(*n);
      } else if (h == "type_k") r.type_k = v;
      else if (h == "type_v") r.type_v = v;
      else if (h == "test") {
        if (!parse_test(v, r)) return bad(file, line, "test: expected ppN, tgN or ppN+tgN (with '@ dN'), got '" + v + "'");
        has_test = true;
      } else if (h == "t/s") {
        const auto ts = number(v.substr(0, v.find("±")));
        if (!ts || !plausible_rate(*ts)) return bad(file, line, "t/s: expected tokens per second in " + k_rate_range + ", got '" + v + "'");
        r.avg_ts = *ts;
        if (const auto pm = v.find("±"); pm != std::string::npos)
          if (const auto spread = number(v.substr(pm + std::string("±").size())); spread && std::isfinite(*spread) && *spread >= 0)
            r.stddev_ts = spread;
        has_ts = true;
      }
    }
    if (!has_model || !has_test || !has_ts) return bad(file, line, "not a llama-bench table: needs model, test and t/s columns");
    out.push_back(std::move(r));
  }
  if (header.empty()) return bad(file, 1, "no markdown table found");
  return out;
}

}  // namespace

std::string BenchResult::where() const { return file + ":" + std::to_string(line); }

bool looks_like_llama_bench(const std::string& text) {
  const auto head = text.substr(0, 4096);
  return head.find("n_prompt") != std::string::npos || head.find("avg_ts") != std::string::npos ||
         (head.find("| model") != std::string::npos && head.find("t/s") != std::string::npos);
}

Result<std::vector<BenchResult>> parse_llama_bench(const std::string& text, const std::string& file) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return bad(file, 1, "empty file");
  Result<std::vector<BenchResult>> out = std::vector<BenchResult>{};
  if (text[first] == '[') out = parse_json_array(text, file);
  else if (text[first] == '{') out = parse_jsonl(text, file);
  else if (text[first] == '|') out = parse_markdown(text, file);
  else if (looks_like_llama_bench(text)) out = parse_csv_results(text, file);
  else return bad(file, 1, "not llama-bench output (json, jsonl, csv or markdown)");
  if (out.ok() && out->empty()) return bad(file, 1, "no llama-bench tests in the file");
  return out;
}

}  // namespace trilemma::measurements
