// trilemma's own measurement reports read back as points of the engine on the machine that
// made them: every point of a `verify --json` report, or one `run --json` report. Either can
// have been made on the target device itself (the engine cross-built for an aarch64 board),
// so `trilemma calibrate` takes them beside llama-bench results.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "verify/verify.hpp"

namespace trilemma::verify {

struct ReportPoint {
  std::string model;   // catalog id of the shape that ran
  std::string where;   // "file: points[3]"
  PointReport report;  // point and measurement; no prediction yet
};

// "trilemma.verify" or "trilemma.run" documents; anything else, a missing or malformed field,
// is an input error naming the file and field. A run report of a model file (not a catalog
// id) needs `model_id`.
Result<std::vector<ReportPoint>> report_points(const nlohmann::json& doc, const std::string& file,
                                               const std::string& model_id = "");

// A verify report point's "measured" block (shared with `verify --replay`).
Result<Measurement> measurement_from_json(const nlohmann::json& point, const std::string& file, const std::string& where);

}  // namespace trilemma::verify
