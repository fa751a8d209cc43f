#include "verify/report_json.hpp"

#include <algorithm>
#include <cmath>

#include "solver/plan_document.hpp"

namespace trilemma::verify {
namespace {

using nlohmann::json;

json spread_json(const Spread& s) { return {{"median", s.median}, {"min", s.min}, {"max", s.max}, {"runs", s.runs}}; }

json point_json(const PointReport& r) {
  json checks = json::array();
  for (const auto& c : r.checks)
    checks.push_back({{"figure", c.figure}, {"predicted", c.predicted}, {"measured", c.measured},
                      {"rel_error", c.rel_error}, {"tolerance", c.tolerance}, {"pass", c.pass}});
  const auto& m = r.measured;
  return {{"config", solver::config_to_json(r.point.config)},
          {"engine_weights", engine_weights_name(r.point)},
          {"model", r.point.model_file ? r.point.model_file->string() : r.point.model_id},
          {"synthetic", m.synthetic}, {"kernels", m.kernels}, {"runs", m.runs},
          {"prompt_tokens", m.prompt_tokens}, {"decode_tokens", m.decode_tokens},
          {"draft_engine_weights", r.point.config.speculative.has_draft_weights()
                                       ? json(std::string(info(r.point.draft_engine_weights).name)) : json()},
          {"measured", {{"decode_tok_s", spread_json(m.decode_tok_s)}, {"ttft_ms", spread_json(m.ttft_ms)},
                        {"prefill_tok_s", spread_json(m.prefill_tok_s)}, {"peak_rss_bytes", m.peak_rss_bytes},
                        {"weight_bytes", m.weight_bytes}, {"kv_bytes", m.kv_bytes}, {"acceptance", m.acceptance},
                        {"weights", m.weights}}},
          {"accuracy", {{"kl_predicted", r.predicted.accuracy.kld.mid},
                        {"kl_measured", m.kl_mean ? json(*m.kl_mean) : json()},
                        {"top1_measured", m.top1 ? json(*m.top1) : json()}}},
          {"checks", checks}, {"pass", r.pass()}};
}

// A grid's figures at a glance: within tolerance, median and largest error, per figure.
json summary_json(const std::vector<FigureSummary>& summary) {
  json out = json::array();
  for (const auto& s : summary)
    out.push_back({{"figure", s.figure}, {"within", s.within}, {"total", s.total},
                   {"median_abs_error", std::isfinite(s.median_abs_error) ? json(s.median_abs_error) : json()},
                   {"max_abs_error", std::isfinite(s.max_abs_error) ? json(s.max_abs_error) : json()}});
  return out;
}

json points_json(const std::vector<PointReport>& reports) {
  json out = json::array();
  for (const auto& r : reports) out.push_back(point_json(r));
  return out;
}

}  // namespace

bool all_pass(const ReportInputs& in) {
  const auto& final_reports = in.with_calibration ? in.calibrated : in.reports;
  return std::all_of(final_reports.begin(), final_reports.end(), [](const auto& r) { return r.pass(); });
}

json report_json(const ReportInputs& in) {
  const auto& host = in.host;
  json doc = {{"schema", "trilemma.verify"}, {"schema_version", 1}, {"model", in.model_id}, {"device", host.id},
              {"tolerances", {{"decode", in.tol.decode}, {"ttft", in.tol.ttft}, {"memory", in.tol.memory}}},
              {"points", points_json(in.reports)}, {"pass", all_pass(in)}};
  // The profile the first predictions used: a replay against another profile predicts differently.
  doc["host_profile"] = {{"peak_bandwidth_gbps", host.peak_bandwidth_gbps},
                         {"measured_compute_gflops", host.measured_compute_gflops.value_or(0)},
                         {"measured_int8_gflops", host.measured_int8_gflops.value_or(0)},
                         {"calibrated", in.profile_was_calibrated}};
  doc["summary"] = summary_json(summarize(in.reports));
  if (in.with_calibration) {
    doc["calibrated_points"] = points_json(in.calibrated);
    doc["calibrated_summary"] = summary_json(summarize(in.calibrated));
  }
  return doc;
}

}  // namespace trilemma::verify
