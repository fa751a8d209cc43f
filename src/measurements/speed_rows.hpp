// Published speed and memory measurements (data/measurements/speed-*.csv; schema in
// data/measurements/README.md): one row per device x model x configuration as somebody
// published it, with its source. Also the common form every benchmark reader produces
// (llama-bench outputs, trilemma's own reports), so one conversion turns them into
// observations for calibration and fidelity checks.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "types/result.hpp"

namespace trilemma::measurements {

struct SpeedRow {
  std::string file;
  std::size_t line = 0;
  std::string id, device, model, weights, weights_published, engine, engine_version, backend;
  std::optional<std::uint32_t> threads, prompt_tokens, gen_tokens, depth;
  std::optional<double> prefill_tok_s, decode_tok_s, ttft_ms, peak_memory_mib, model_size_gib;
  std::string kv_type, source_url, locator, notes;
  // Figures of the row that do not measure the configuration as recorded (a prompt rate that
  // includes first-use overhead, a run whose offload is unknown): decode, prefill, memory;
  // `all` for every figure. The reason is in `notes` ("excluded: ...").
  bool exclude_decode = false, exclude_prefill = false, exclude_memory = false;
  std::string where() const;  // "file:line"
};

// Parses one speed CSV strictly: the schema's columns, numbers where numbers belong (> 0),
// counts where counts belong, a source on every row. Errors name file, line and column.
Result<std::vector<SpeedRow>> parse_speed_csv(const std::string& text, const std::string& file);

// Every data/measurements/speed-*.csv: the built-in copy, or the files in `dir` when given.
// Ids must be unique across files.
Result<std::vector<SpeedRow>> load_speed_rows(const std::string& dir = "");

}  // namespace trilemma::measurements
