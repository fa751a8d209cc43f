// Measurements read back from an earlier verify report (`verify --replay REPORT.json`): the
// same points can be predicted again, or calibrated, without running the engine.
#include <nlohmann/json.hpp>

#include "io/json_text.hpp"
#include "solver/plan_document.hpp"
#include "verify/measurement.hpp"
#include "verify/report_points.hpp"

namespace trilemma::verify {

Result<nlohmann::json> read_verify_report(const std::string& text, const std::string& file) {
  TRILEMMA_TRY(report, io::parse_json(text, file));
  // Compared as JSON values: a field of another type is a mismatch, not an exception.
  if (!report.is_object() || !report.contains("schema") || report["schema"] != "trilemma.verify")
    return make_error(ErrorKind::input, file, "schema", "not a verify JSON report (verify --out FILE)");
  if (!report.contains("schema_version") || report["schema_version"] != 1)
    return make_error(ErrorKind::input, file, "schema_version", "unsupported verify report version");
  return report;
}

ReplaySource::ReplaySource(nlohmann::json report, std::string file) : m_report(std::move(report)), m_file(std::move(file)) {}

Result<Measurement> ReplaySource::measure(const RunPoint& p) {
  if (!m_report.is_object() || !m_report.contains("points") || !m_report["points"].is_array())
    return make_error(ErrorKind::input, m_file, "points", "not a verify report (no points array)");
  const nlohmann::json config = solver::config_to_json(p.config);
  const std::string weights = engine_weights_name(p);
  for (const auto& entry : m_report["points"]) {
    if (!entry.is_object() || entry.value("config", nlohmann::json()) != config || !entry.contains("engine_weights") ||
        entry["engine_weights"] != weights)
      continue;
    return measurement_from_json(entry, m_file, "points[]");
  }
  return make_error(ErrorKind::input, m_file, "points",
                    "no measurement of " + weights + " weights with config " + config.dump() +
                        " (the report was made with other flags: run verify without --replay)");
}

}  // namespace trilemma::verify
