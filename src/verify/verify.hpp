// `verify`: predict a configuration's figures for the host profile, run it in the engine,
// and report figure by figure how far prediction and measurement are apart. `calibrate`
// fits the host's derating factors from measurements so the next plan uses them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "calibration/fit.hpp"
#include "devices/device.hpp"
#include "models/model.hpp"
#include "types/estimate.hpp"
#include "verify/measurement.hpp"

namespace trilemma::verify {

// Relative tolerances, as fractions (0.10 = 10%).
struct Tolerances {
  double decode = 0.10;
  double ttft = 0.20;
  double memory = 0.05;
};

struct FigureCheck {
  std::string figure;    // "decode_tok_s", "ttft_ms", "peak_memory_bytes"
  double predicted = 0;
  double measured = 0;
  double rel_error = 0;  // (predicted - measured) / measured
  double tolerance = 0;
  bool pass = false;
};

struct PointReport {
  RunPoint point;
  Estimate predicted;
  Measurement measured;
  std::vector<FigureCheck> checks;
  bool pass() const;
};

// The model the engine runs at `point`: a catalog shape, with per-tensor bytes in the engine's
// layout (every matrix in `engine_weights`, rows that do not fill a block in f32, norms f32), or
// with `recipe` the recipe's type per tensor as the engine runs it (the planner's tensor plan).
models::Model engine_model(const models::Model& catalog_model, TensorType engine_weights,
                           std::optional<WeightFormat> recipe = std::nullopt);

// Prediction for `point` on `host`, in the engine's configuration (f32 contiguous KV sized
// prompt + decode tokens, CPU threads), at the measured prompt length.
// A measured speculative acceptance rate (> 0) replaces the prior.
Result<Estimate> predict(const models::Model& model, const devices::Device& host, const RunPoint& point,
                         std::uint32_t prompt_tokens, double measured_acceptance = 0);

// What the engine does not hold of an untied token embedding: it reads the table row by row
// from a GGUF file's mapping and hands each row's pages back (docs/engine.md, "Memory
// accounting"), so one 64 KiB window stays resident (engine/model/model.cpp k_fault_window),
// where it runs the table in the file's own type (a converted table is a resident copy).
// `engine`: engine_model's tensors; `file`: the file's (nullptr: synthetic weights, all resident).
double unmapped_embedding_bytes(const models::Model& engine, const models::Model* file);

// The engine's model for each weight format it runs, prepared once (the tensor walk is the
// expensive part of an estimate; calibration evaluates thousands), and each point's
// configuration in the planner's terms.
class EnginePredictor {
 public:
  explicit EnginePredictor(const models::Model& model) : m_model(model) {}
  EnginePredictor(const EnginePredictor&) = delete;
  EnginePredictor& operator=(const EnginePredictor&) = delete;

  // The configuration the engine ran at `p`: CPU, f32-accumulating engine formats, a cache
  // sized to what it ran.
  static DeploymentConfig config(const RunPoint& p, std::uint32_t prompt_tokens, double measured_acceptance);
  Result<Estimate> operator()(const solver::PreparedDevice& pd, const RunPoint& p, std::uint32_t prompt_tokens,
                              double measured_acceptance, bool with_basis);
  const solver::PreparedModel& prepared(const RunPoint& p);
  // `r`'s measured decode speed, TTFT and peak memory as one observation of its configuration;
  // it points into this predictor.
  calibration::Observation observation(const PointReport& r);

 private:
  struct Entry {
    std::string weights;  // engine_weights_name()
    models::Model model;
    solver::PreparedModel prepared;  // points into `model`: entries never move
  };
  const models::Model& m_model;
  std::vector<std::unique_ptr<Entry>> m_prepared;
  std::unique_ptr<models::Model> m_file;  // a GGUF model file's own tensors, once read
};

std::vector<FigureCheck> compare(const Estimate& predicted, const Measurement& measured, const Tolerances& tol);

// One figure over many points: how many are within tolerance and how large the errors are.
struct FigureSummary {
  std::string figure;
  int within = 0, total = 0;
  double median_abs_error = 0, max_abs_error = 0;  // fractions; a non-finite error counts as infinite
};
// One summary per figure, in the order of the checks.
std::vector<FigureSummary> summarize(const std::vector<PointReport>& reports);

// Fits the host's derating from reports of `model`'s points: bandwidth and compute fractions
// per weight format, attention's fractions per KV format (decode and prefill; only from prompt
// lengths at least 2x apart, which alone tell attention from compute), the per-pass
// overhead and, with speculative points, the per-round cost (least
// squares of the log errors of decode tok/s and TTFT through `predict`), runtime memory and
// the scratch factor (linear least squares). The result replaces any earlier calibration.
devices::Calibration calibrate(const models::Model& model, const std::vector<PointReport>& reports,
                               const devices::Device& host, const std::string& fitted_on);

}  // namespace trilemma::verify
