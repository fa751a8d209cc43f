// Fits one device's efficiency factors (its `calibration` block) to measurements, through the
// very predictor plans use (solver::estimate), so a calibrated device reproduces its own
// measurements as far as the model's form allows. Used by `verify --calibrate` (the host, the
// engine's measurements), `trilemma calibrate` (any device, benchmark result files) and the
// fidelity cross-validation (devices of the published dataset).
//
// Latency: per backend, bandwidth and compute fractions (per weight format or shared),
// attention fractions per KV format and phase, the per-pass overhead and, with speculative
// measurements, the per-round cost: least squares of the log errors of decode tok/s and TTFT.
// Each phase's factors move only with that phase's measurements: bandwidth, the fixed cost and
// decode's compute with decode speeds, compute with prefill times (a prefill-only device keeps
// the tables' bandwidth). Each fitted factor records the sources it rests on.
// Memory: measured - weights - KV - draft = runtime + f x modelled scratch, linear least squares.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "roofline/derating_tables.hpp"
#include "solver/prepared.hpp"
#include "types/deployment.hpp"

namespace trilemma::calibration {

struct Observation {
  const solver::PreparedModel* model = nullptr;  // outlives the fit
  const solver::PreparedModel* draft = nullptr;  // a speculative draft model
  DeploymentConfig config;                       // exactly what ran; prompt = the prefill's tokens
  std::optional<double> decode_tok_s, ttft_ms, peak_memory_bytes;
  double weight = 1;                             // in the least squares
  std::string label;                             // for reports: "q4_0 pp512", a file:line
  std::string source;                            // the page or file it came from (evidence counts these)
};

struct FitOptions {
  bool bandwidth_per_format = true;  // else one fraction for all formats ("all")
  bool compute_per_format = true;    // else one per compute path
  // Decode's own compute fractions (keyed as bandwidth's): only decode speeds at several thread
  // counts tell a compute bound from a bandwidth bound.
  bool decode_compute = false;
  bool attention = true;             // attention fractions per phase ...
  bool attention_per_kv = true;      // ... and KV format (else one for every KV format, "all")
  bool overhead = true;              // the fixed cost of a pass
  bool overhead_per_layer = false;   // ... as a cost per layer (results from models of several depths)
  bool memory = true;                // runtime and scratch from peak memory
  double max_fraction = 16;          // bounds the search only (a probe can read low)
  // The lowest share of the peak bandwidth a bandwidth factor may take: decode below it says
  // the peak or the configuration is wrong, not the engine.
  double min_bandwidth_fraction = 1e-5;
  // Shrinkage toward the tables: each factor's squared log distance from its start (the
  // tables' value) joins the least squares with this weight, as if that many independent
  // sources measured it there. Give the observations weights that sum to one per source and
  // figure, so evidence counts pages, not rows. 0: none (a host fitting its own measurements).
  double prior_sources = 0;
  // A factor the fit leaves at one of its bounds is not used: it is dropped (the tables' value
  // stands), the rest refitted, and it is listed in the backend's `at_bound`.
  bool drop_at_bound = false;
  // When set (> 0): relative tolerances the fit tries to keep every point within. Points
  // beyond them cost a steep extra penalty, so among fits of similar least squares the one
  // that leaves no point out wins (a single noisy point cannot drag its neighbours out).
  double decode_tolerance = 0, ttft_tolerance = 0;
  // The derating tables the unfitted factors come from; null = the built-in ones.
  const roofline::DeratingTables* tables = nullptr;
};

// A calibration of `device` fitted to `observations`; backends the observations do not use
// keep what `device.calibration` had for them. `fitted_on` says what and when.
devices::Calibration fit(const devices::Device& device, const std::vector<Observation>& observations,
                         const FitOptions& options, const std::string& fitted_on);

// Median absolute relative error of decode tok/s and TTFT over `observations` on `device`.
struct FitError {
  double decode = 0, ttft = 0, memory = 0;
  int decode_points = 0, ttft_points = 0, memory_points = 0;
};
FitError median_errors(const devices::Device& device, const std::vector<Observation>& observations,
                       const roofline::DeratingTables* tables = nullptr);

}  // namespace trilemma::calibration
