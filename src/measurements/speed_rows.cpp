#include "measurements/speed_rows.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>

#include "io/atomic_write.hpp"
#include "io/csv.hpp"
#include "io/embedded_data.hpp"

namespace trilemma::measurements {
namespace {

const std::vector<std::string> k_speed_required = {"id", "device", "model", "weights", "engine", "backend", "source_url", "locator"};
const std::vector<std::string> k_speed_optional = {"weights_published", "engine_version", "threads", "prompt_tokens",
                                             "gen_tokens", "depth", "prefill_tok_s", "decode_tok_s", "ttft_ms",
                                             "peak_memory_mib", "kv_type", "model_size_gib", "notes", "exclude"};

}  // namespace

std::string SpeedRow::where() const { return file + ":" + std::to_string(line); }

Result<std::vector<SpeedRow>> parse_speed_csv(const std::string& text, const std::string& file) {
  TRILEMMA_TRY(table, io::parse_csv(text, file));
  if (auto ok = io::check_columns(table, k_speed_required, k_speed_optional); !ok.ok()) return ok.error();
  std::vector<SpeedRow> out;
  for (const auto& rec : table.records) {
    io::CsvFields r(table, rec);
    SpeedRow row;
    row.file = file;
    row.line = rec.line;
    row.id = r.required("id");
    row.device = r.required("device");
    row.model = r.required("model");
    row.weights = r.text("weights");
    row.weights_published = r.text("weights_published");
    row.engine = r.text("engine");
    row.engine_version = r.text("engine_version");
    row.backend = r.text("backend");
    row.threads = r.count("threads");
    row.prompt_tokens = r.count("prompt_tokens");
    row.gen_tokens = r.count("gen_tokens");
    row.depth = r.count("depth");
    row.prefill_tok_s = r.positive("prefill_tok_s");
    row.decode_tok_s = r.positive("decode_tok_s");
    row.ttft_ms = r.positive("ttft_ms");
    row.peak_memory_mib = r.positive("peak_memory_mib");
    row.model_size_gib = r.positive("model_size_gib");
    row.kv_type = r.text("kv_type");
    row.source_url = r.required("source_url");
    row.locator = r.required("locator");
    row.notes = r.text("notes");
    const std::string exclude = r.text("exclude");
    for (std::size_t at = 0; at < exclude.size();) {
      const std::size_t end = std::min(exclude.find(';', at), exclude.size());
      const std::string figure = exclude.substr(at, end - at);
      if (figure == "decode" || figure == "all") row.exclude_decode = true;
      if (figure == "prefill" || figure == "all") row.exclude_prefill = true;
      if (figure == "memory" || figure == "all") row.exclude_memory = true;
      if (figure != "decode" && figure != "prefill" && figure != "memory" && figure != "all")
        r.fail("exclude", "expected decode, prefill, memory or all (separated by ';'), got '" + figure + "'");
      at = end + 1;
    }
    if (!exclude.empty() && row.notes.find("excluded:") == std::string::npos)
      r.fail("notes", "an excluded figure needs its reason in notes ('excluded: ...')");
    if (!row.prefill_tok_s && !row.decode_tok_s && !row.ttft_ms && !row.peak_memory_mib)
      r.fail("decode_tok_s", "a row needs at least one of prefill_tok_s, decode_tok_s, ttft_ms, peak_memory_mib");
    if (r.error()) return *r.error();
    out.push_back(std::move(row));
  }
  return out;
}

Result<std::vector<SpeedRow>> load_speed_rows(const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> files;  // name, text
  if (dir.empty()) {
    for (const auto& f : io::embedded_files()) {
      const std::string path(f.path);
      if (path.starts_with("data/measurements/speed-") && path.ends_with(".csv")) files.emplace_back(path, std::string(f.content));
    }
  } else {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (!name.starts_with("speed-") || e.path().extension() != ".csv") continue;
      TRILEMMA_TRY(text, io::read_text_file(e.path()));
      files.emplace_back(e.path().string(), std::move(text));
    }
    if (ec) return make_error(ErrorKind::io, dir, "", "cannot list the directory: " + ec.message());
  }
  std::sort(files.begin(), files.end());
  std::vector<SpeedRow> out;
  std::set<std::string> ids;
  for (const auto& [name, text] : files) {
    TRILEMMA_TRY(rows, parse_speed_csv(text, name));
    for (auto& r : rows) {
      if (!ids.insert(r.id).second) return make_error(ErrorKind::input, r.file, std::to_string(r.line), "id: duplicate id '" + r.id + "'");
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace trilemma::measurements
