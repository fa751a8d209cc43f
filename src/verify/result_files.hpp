// Benchmark results measured on one device, from the files `trilemma calibrate --from` is
// given: llama.cpp's llama-bench output (json, jsonl, csv, markdown) and trilemma's own
// `verify --json` and `run --json` reports. Every measured figure becomes one point: an
// observation of the configuration that ran, pinned as far as the file says, with the figure
// in the unit the file gives it. Results that cannot be pinned to a catalog model or a costed
// format are listed as unmatched, never guessed.
#pragma once
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "calibration/observations.hpp"
#include "devices/device.hpp"
#include "measurements/speed_rows.hpp"
#include "verify/verify.hpp"

namespace trilemma::verify {

struct ResultPoint {
  calibration::Observation observation;  // exactly one figure set
  std::string figure;                    // decode_tok_s, prefill_tok_s, ttft_ms or peak_memory_bytes
  double measured = 0;                   // in the figure's unit
  std::string label;                     // "q4_0.json:14 tinyllama-1.1b q4_0 tg16 @ d256, 1 thread"
  std::string runtime;                   // who measured: "llama.cpp" or "trilemma engine"
};

class ResultFiles {
 public:
  // A file that is neither llama-bench output nor a trilemma report, or one that is malformed
  // or truncated, is an input error naming the file and its line or field. `model_id`, when
  // not empty, names the catalog model of every result.
  static Result<std::unique_ptr<ResultFiles>> read(const std::vector<std::string>& paths, const devices::Device& device,
                                                   const std::string& model_id = "");

  const std::vector<ResultPoint>& points() const { return m_points; }
  // "file:line: llama 7B Q4_0: no catalog model ..." per result left out.
  const std::vector<std::string>& unmatched() const { return m_unmatched; }
  // Results taken other than as labelled ("labelled Q5_0 but its size is q8_0's"), and why.
  const std::vector<std::string>& notes() const { return m_notes; }
  // Results whose repetitions spread widely (calibration::BenchRows::noisy).
  const std::vector<std::string>& noisy() const { return m_noisy; }
  const std::vector<std::string>& files() const { return m_files; }
  std::vector<std::string> runtimes() const;  // distinct, in order of appearance
  ResultFiles(const ResultFiles&) = delete;
  ResultFiles& operator=(const ResultFiles&) = delete;

 private:
  ResultFiles() = default;
  Status add_bench(const std::string& text, const std::string& path, const std::string& model_id);
  Status add_report(const std::string& text, const std::string& path, const std::string& model_id);

  std::vector<devices::Device> m_device;  // the target, alone
  std::vector<models::Model> m_catalog;
  std::vector<measurements::SpeedRow> m_rows;
  std::vector<std::unique_ptr<calibration::ObservationSet>> m_bench_sets;  // observations point into them
  std::deque<models::Model> m_report_models;
  std::vector<std::unique_ptr<EnginePredictor>> m_predictors;
  std::vector<ResultPoint> m_points;
  std::vector<std::string> m_unmatched, m_notes, m_noisy, m_files;
};

}  // namespace trilemma::verify
