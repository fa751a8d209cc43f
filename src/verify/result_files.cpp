#include "verify/result_files.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "calibration/bench_rows.hpp"
#include "io/atomic_write.hpp"
#include "io/json_text.hpp"
#include "measurements/llama_bench.hpp"
#include "models/catalog.hpp"
#include "verify/report_points.hpp"

namespace trilemma::verify {
namespace {

std::string base_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

std::string threads_text(std::uint32_t n) { return n == 1 ? "1 thread" : std::to_string(n) + " threads"; }

// "tinyllama-1.1b q4_0 tg16 @ d256, 2 threads"
std::string bench_label(const measurements::SpeedRow& r) {
  std::string test = r.decode_tok_s ? "tg" + std::to_string(r.gen_tokens.value_or(0)) : "pp" + std::to_string(r.prompt_tokens.value_or(0));
  if (r.depth.value_or(0) > 0) test += " @ d" + std::to_string(*r.depth);
  std::string label = base_name(r.file) + ":" + std::to_string(r.line) + " " + r.model + " " + r.weights + " " + test;
  if (r.threads) label += ", " + threads_text(*r.threads);
  if (r.backend != "cpu") label += ", " + r.backend;
  return label;
}

}  // namespace

Result<std::unique_ptr<ResultFiles>> ResultFiles::read(const std::vector<std::string>& paths, const devices::Device& device,
                                                       const std::string& model_id) {
  std::unique_ptr<ResultFiles> out(new ResultFiles());
  out->m_device.push_back(device);
  TRILEMMA_TRY(catalog, models::builtin_models());
  out->m_catalog = std::move(catalog);
  if (!model_id.empty()) {
    TRILEMMA_TRY(m, models::resolve_model(model_id));
    if (!m.path.empty())
      return make_error(ErrorKind::usage, "--model", "", "'" + model_id + "' is a file: --model names a catalog model");
  }
  for (const auto& path : paths) {
    TRILEMMA_TRY(text, io::read_text_file(path));
    const auto first = text.find_first_not_of(" \t\r\n");
    const bool report = first != std::string::npos && text[first] == '{' && text.find("\"schema\"") != std::string::npos &&
                        text.find("\"trilemma.") != std::string::npos;
    if (report) {
      TRILEMMA_TRY(ok, out->add_report(text, path, model_id));
      (void)ok;
    } else {
      TRILEMMA_TRY(ok, out->add_bench(text, path, model_id));
      (void)ok;
    }
    out->m_files.push_back(path);
  }
  return out;
}

Status ResultFiles::add_bench(const std::string& text, const std::string& path, const std::string& model_id) {
  TRILEMMA_TRY(results, measurements::parse_llama_bench(text, path));
  auto matched = calibration::bench_rows(results, m_device.front().id, m_catalog, model_id);
  for (auto& u : matched.unmatched) m_unmatched.push_back(std::move(u));
  for (auto& n : matched.notes) m_notes.push_back(std::move(n));
  for (auto& n : matched.noisy) m_noisy.push_back(std::move(n));
  const auto first_row = m_rows.size();
  for (auto& r : matched.rows) m_rows.push_back(std::move(r));
  const std::vector<measurements::SpeedRow> rows(m_rows.begin() + long(first_row), m_rows.end());
  m_bench_sets.push_back(std::make_unique<calibration::ObservationSet>(rows, m_device, m_catalog));
  const auto& set = *m_bench_sets.back();
  for (const auto& s : set.skipped()) m_unmatched.push_back(s);
  for (const auto& ro : set.observations()) {
    const auto& row = rows[ro.row];
    ResultPoint p;
    p.observation = ro.observation;
    p.runtime = row.engine;
    p.label = bench_label(row);
    p.observation.label = p.label;
    switch (ro.figure) {
      case calibration::Figure::decode:
        p.figure = "decode_tok_s", p.measured = *row.decode_tok_s;
        break;
      case calibration::Figure::prefill:
        p.figure = "prefill_tok_s", p.measured = *row.prefill_tok_s;
        break;
      case calibration::Figure::memory:
        p.figure = "peak_memory_bytes", p.measured = *ro.observation.peak_memory_bytes;
        break;
      case calibration::Figure::count: continue;  // not a figure
    }
    m_points.push_back(std::move(p));
  }
  return Ok{};
}

Status ResultFiles::add_report(const std::string& text, const std::string& path, const std::string& model_id) {
  TRILEMMA_TRY(doc, io::parse_json(text, path));
  TRILEMMA_TRY(points, report_points(doc, path, model_id));
  for (const auto& rp : points) {
    // One predictor per model shape: observations point into its prepared models.
    auto it = std::find_if(m_report_models.begin(), m_report_models.end(), [&](const auto& m) { return m.id == rp.model; });
    EnginePredictor* predictor = nullptr;
    if (it == m_report_models.end()) {
      TRILEMMA_TRY(m, models::resolve_model(rp.model));
      m_report_models.push_back(std::move(m));
      m_predictors.push_back(std::make_unique<EnginePredictor>(m_report_models.back()));
      predictor = m_predictors.back().get();
    } else {
      predictor = m_predictors[std::size_t(it - m_report_models.begin())].get();
    }
    const auto ob = predictor->observation(rp.report);
    const auto& c = rp.report.point.config;
    const std::string label = rp.where + " " + rp.model + " " + engine_weights_name(rp.report.point) + " kv " +
                              std::string(info(c.kv_type).name) + ", " + std::to_string(rp.report.measured.prompt_tokens) +
                              "-token prompt, " + threads_text(c.threads) + (c.speculative.on() ? ", speculative" : "");
    auto add = [&](const char* figure, double measured, auto&& keep) {
      ResultPoint p;
      p.observation = ob;
      p.observation.decode_tok_s.reset();
      p.observation.ttft_ms.reset();
      p.observation.peak_memory_bytes.reset();
      keep(p.observation);
      p.observation.label = label;
      p.figure = figure;
      p.measured = measured;
      p.label = label;
      p.runtime = "trilemma engine";
      m_points.push_back(std::move(p));
    };
    const auto& m = rp.report.measured;
    if (m.decode_tok_s.median > 0) add("decode_tok_s", m.decode_tok_s.median, [&](auto& o) { o.decode_tok_s = m.decode_tok_s.median; });
    if (m.ttft_ms.median > 0) add("ttft_ms", m.ttft_ms.median, [&](auto& o) { o.ttft_ms = m.ttft_ms.median; });
    if (m.peak_rss_bytes > 0) add("peak_memory_bytes", m.peak_rss_bytes, [&](auto& o) { o.peak_memory_bytes = m.peak_rss_bytes; });
  }
  return Ok{};
}

std::vector<std::string> ResultFiles::runtimes() const {
  std::vector<std::string> out;
  for (const auto& p : m_points)
    if (std::find(out.begin(), out.end(), p.runtime) == out.end()) out.push_back(p.runtime);
  return out;
}

}  // namespace trilemma::verify
