// What `verify` runs and how it reads the results: the run points of a request (one
// configuration, or the grid of weights x KV formats x contexts x speculation), the checks of a
// model file against the catalog shape it claims, and each point's prediction beside its
// measurement. The CLI only parses flags, picks a measurement source and prints.
#pragma once
#include <array>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "models/model.hpp"
#include "types/deployment.hpp"
#include "types/result.hpp"
#include "verify/measurement.hpp"
#include "verify/verify.hpp"

namespace trilemma::verify {

struct PointsRequest {
  DeploymentConfig base;                // a plan's configuration, or the defaults
  std::optional<WeightFormat> weights;  // nullopt: the plan's, else q4_0
  bool grid = false;
  std::vector<std::uint32_t> contexts = {512, 2048};  // the grid's prompt + decode lengths
  std::uint32_t prompt_tokens = 64, decode_tokens = 32;
  std::string model_file, tokenizer;  // empty: synthetic weights of the catalog shape
};

// The point that runs a plan's configuration as planned (its context and prompt, synthetic
// weights of the model's shape unless the model is a file), decoding `decode_tokens`: what
// `gate --verify` measures. A format the engine does not run is an internal error (the planner
// offers only runnable ones for a host budget).
Result<RunPoint> plan_point(const DeploymentConfig& config, const models::Model& model, std::uint32_t decode_tokens);

// The grid's weights and KV formats.
inline constexpr std::array k_grid_weights = {WeightFormat::f16, WeightFormat::q8_0, WeightFormat::q4_0};
inline constexpr std::array k_grid_kv = {TensorType::f16, TensorType::q8_0, TensorType::q4_0};
// "weights f16/q8_0/q4_0 x KV f16/q8_0/q4_0 x contexts x speculative off/self": for --grid's help.
std::string grid_summary();

// The points to run for `model`: one, or the grid (k_grid_weights x k_grid_kv x each context
// capped by the trained one x speculation off / self-speculation from a lower-bit copy, g = 4).
// A weight format the engine does not run, or a context too small for the decode, is an error
// naming the field.
Result<std::vector<RunPoint>> build_points(const models::Model& model, const PointsRequest& request);

// The engine's tensor type for a planner weight format, or an input error saying which ones run.
Result<TensorType> engine_type_of(WeightFormat format);

// A model file (GGUF or llama2.c checkpoint) matches `model`'s layers, width, KV heads and
// vocabulary; otherwise an input error naming the file and the first field that differs.
Status check_model_file(const models::Model& model, const std::string& file);

// Each point's prediction on `host` (at its measured prompt length and acceptance) beside its
// measurement, checked against `tol`.
Result<std::vector<PointReport>> check_points(const models::Model& model, const devices::Device& host,
                                              const std::vector<RunPoint>& points, const std::vector<Measurement>& measured,
                                              const Tolerances& tol);

// What a calibration was fitted on, for the profile: the model, real or synthetic weights, the
// number of points, the engine formats and the time.
std::string calibration_label(const models::Model& model, const std::vector<PointReport>& reports, std::time_t when);

}  // namespace trilemma::verify
