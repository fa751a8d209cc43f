// verify::run: the whole `verify` job behind the CLI. Resolve the model (a plan document's or a
// catalog id) and the host profile, pin the cores, build the points, measure them (the engine in
// a child process, or an earlier report replayed), check them against their predictions and,
// with `calibrate`, fit the host's derating and write it to its profile.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "types/result.hpp"
#include "verify/points.hpp"
#include "verify/report_json.hpp"
#include "verify/verify.hpp"

namespace trilemma::verify {

struct Request {
  std::string plan;        // plan document (`plan --json`); its configuration and model
  std::string model;       // catalog id or model file (overrides the plan's)
  std::string model_file;  // real weights checked against the model's shape (empty: synthetic)
  std::string tokenizer;
  std::string weights;     // weight format name (overrides the plan's)
  std::string device = "host";  // profile to predict with and calibrate
  std::string cores = "all";    // devices::apply_core_selection's spec
  std::string replay;           // earlier report whose measurements stand in for the engine's
  std::string eval_text;        // with model_file: KL divergence and top-1 on this text
  int threads = 0, runs = 3;
  std::vector<std::uint32_t> contexts = {512, 2048};
  std::uint32_t prompt_tokens = 64, decode_tokens = 32;
  Tolerances tol;
  bool grid = false, calibrate = false;
  std::filesystem::path engine_binary;  // the trilemma binary a point runs in
  // Before each engine run (not a replay's): (runs started, runs in all, the point).
  std::function<void(std::size_t, std::size_t, const RunPoint&)> progress;
};

struct Outcome {
  ReportInputs report;
  std::string calibration_written;  // the profile written with `calibrate`, else empty
};

Result<Outcome> run(const Request& request);

}  // namespace trilemma::verify
