// Measurements read back from an earlier verify report (`verify --replay REPORT.json`): the
// same points can be predicted again, or calibrated, without running the engine.
#include <nlohmann/json.hpp>

#include "solver/plan_document.hpp"
#include "verify/measurement.hpp"

namespace trilemma::verify {
namespace {

Spread spread_from(const nlohmann::json& j) {
  return {j.value("median", 0.0), j.value("min", 0.0), j.value("max", 0.0),
          j.value("runs", std::vector<double>{})};  // reports before the field have none
}

}  // namespace

ReplaySource::ReplaySource(nlohmann::json report, std::string file) : m_report(std::move(report)), m_file(std::move(file)) {}

Result<Measurement> ReplaySource::measure(const RunPoint& p) {
  if (!m_report.is_object() || !m_report.contains("points") || !m_report["points"].is_array())
    return make_error(ErrorKind::input, m_file, "points", "not a verify report (no points array)");
  const nlohmann::json config = solver::config_to_json(p.config);
  const std::string weights(info(p.engine_weights).name);
  for (const auto& entry : m_report["points"]) {
    if (!entry.is_object() || entry.value("config", nlohmann::json()) != config || entry.value("engine_weights", "") != weights)
      continue;
    try {
      const auto& j = entry.at("measured");
      Measurement m;
      m.decode_tok_s = spread_from(j.at("decode_tok_s"));
      m.ttft_ms = spread_from(j.at("ttft_ms"));
      m.prefill_tok_s = spread_from(j.value("prefill_tok_s", nlohmann::json::object()));
      m.peak_rss_bytes = j.at("peak_rss_bytes").get<double>();
      m.weight_bytes = j.value("weight_bytes", 0.0);
      m.kv_bytes = j.value("kv_bytes", 0.0);
      m.acceptance = j.value("acceptance", 0.0);
      m.weights = j.value("weights", "");
      m.prompt_tokens = entry.at("prompt_tokens").get<std::uint32_t>();
      m.decode_tokens = entry.at("decode_tokens").get<std::uint32_t>();
      m.synthetic = entry.value("synthetic", true);
      m.kernels = entry.value("kernels", "");
      m.runs = entry.value("runs", 0);
      if (const auto a = entry.value("accuracy", nlohmann::json::object()); a.is_object()) {
        if (a.contains("kl_measured") && a["kl_measured"].is_number()) m.kl_mean = a["kl_measured"].get<double>();
        if (a.contains("top1_measured") && a["top1_measured"].is_number()) m.top1 = a["top1_measured"].get<double>();
      }
      return m;
    } catch (const nlohmann::json::exception& e) {
      return make_error(ErrorKind::input, m_file, "points[].measured", std::string("malformed measurement: ") + e.what());
    }
  }
  return make_error(ErrorKind::input, m_file, "points",
                    "no measurement of " + weights + " weights with config " + config.dump() +
                        " (the report was made with other flags: run verify without --replay)");
}

}  // namespace trilemma::verify
