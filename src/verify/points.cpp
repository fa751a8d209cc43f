#include "verify/points.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>

#include "engine/gguf/mapped_file.hpp"
#include "models/catalog.hpp"
#include "types/llama2c_header.hpp"
#include "types/weight_format.hpp"

namespace trilemma::verify {
namespace {

// The K/V bytes of the engine's cache for a point when every layer holds every position.
double full_kv_bytes(const models::Model& model, const DeploymentConfig& config, std::uint32_t positions) {
  return 2.0 * model.shape.layers * model.shape.kv_dim() * bits_per_element(config.kv_type) / 8.0 * positions;
}

Result<RunPoint> make_point(const models::Model& model, const PointsRequest& request, WeightFormat weights,
                            std::uint32_t prompt, DeploymentConfig config) {
  TRILEMMA_TRY(engine_weights, engine_type_of(weights));
  RunPoint p;
  p.config = std::move(config);
  p.config.weights = weights;
  p.config.backend = Backend::cpu;
  p.config.prompt = prompt;
  p.config.context = prompt + request.decode_tokens + (p.config.speculative.on() ? p.config.speculative.draft_len : 0);
  if (p.config.speculative.has_draft_weights()) {
    const WeightFormat draft = p.config.speculative.draft_weights;
    if (!info(draft).engine_type)  // the engine's draft copy takes one type, not a recipe
      return make_error(ErrorKind::input, "speculative.draft_weights", "",
                        std::string(info(draft).name) + " is not a type the engine's draft copy runs (" +
                            engine_weight_format_names() + ")");
    TRILEMMA_TRY(draft_weights, engine_type_of(draft));
    p.draft_engine_weights = draft_weights;
  }
  p.full_kv_bytes = full_kv_bytes(model, p.config, prompt + request.decode_tokens);
  p.model_id = model.id;
  if (!request.model_file.empty()) p.model_file = request.model_file;
  if (!request.tokenizer.empty()) p.tokenizer_file = request.tokenizer;
  p.engine_weights = engine_weights;
  p.recipe = !info(weights).engine_type && info(weights).engine_recipe;
  p.prompt_tokens = prompt;
  p.decode_tokens = request.decode_tokens;
  return p;
}

}  // namespace

Result<TensorType> engine_type_of(WeightFormat f) {
  if (info(f).engine_type) return *info(f).engine_type;
  if (info(f).engine_recipe) return info(f).bulk;  // run tensor by tensor (RunPoint::recipe)
  std::string recipes;
  for (const auto& row : weight_formats())
    if (row.engine_recipe) recipes += ", " + std::string(row.name);
  return make_error(ErrorKind::input, "weights", "",
                    std::string(info(f).name) + " is not a format the engine runs (" + engine_weight_format_names() + recipes +
                        "); plan with --weights q4_k_m (or another) to verify");
}

Result<RunPoint> plan_point(const DeploymentConfig& config, const models::Model& model, std::uint32_t decode_tokens) {
  const auto engine_weights = info(config.weights).engine_type;
  if (!engine_weights) return make_error(ErrorKind::internal, "gate", "", "plan format not runnable by the engine");
  RunPoint p;
  p.config = config;
  p.model_id = model.id;
  if (!model.path.empty()) p.model_file = model.path;
  p.engine_weights = *engine_weights;
  if (config.speculative.has_draft_weights()) {
    const auto dw = info(config.speculative.draft_weights).engine_type;
    if (!dw) return make_error(ErrorKind::internal, "gate", "", "draft format not runnable by the engine");
    p.draft_engine_weights = *dw;
  }
  p.prompt_tokens = config.prompt;
  p.decode_tokens = decode_tokens;
  return p;
}

std::string grid_summary() {
  std::string weights, kv;
  for (auto w : k_grid_weights) weights += (weights.empty() ? "" : "/") + std::string(info(w).name);
  for (auto t : k_grid_kv) kv += (kv.empty() ? "" : "/") + std::string(info(t).name);
  return "weights " + weights + " x KV " + kv + " x contexts x speculative off/self";
}

Result<std::vector<RunPoint>> build_points(const models::Model& model, const PointsRequest& request) {
  std::vector<RunPoint> points;
  if (!request.grid) {
    TRILEMMA_TRY(p, make_point(model, request, request.weights.value_or(WeightFormat::q4_0), request.prompt_tokens, request.base));
    points.push_back(std::move(p));
    return points;
  }
  for (auto w : k_grid_weights)
    for (auto kv : k_grid_kv)
      for (std::uint32_t ctx : request.contexts)
        for (bool spec : {false, true}) {
          DeploymentConfig c = request.base;
          c.kv_type = kv;
          c.kv_strategy = KvStrategy::contiguous;
          if (spec) c.speculative = {DraftKind::self, "", w == WeightFormat::q4_0 ? WeightFormat::int3 : WeightFormat::q4_0, 0, 4};
          const std::uint32_t total = std::min(ctx, model.shape.context);
          if (total <= request.decode_tokens + 8) return make_error(ErrorKind::usage, "--contexts", "", "too small");
          TRILEMMA_TRY(p, make_point(model, request, w, total - request.decode_tokens - (spec ? 4 : 0), c));
          points.push_back(std::move(p));
        }
  return points;
}

Status check_model_file(const models::Model& m, const std::string& file) {
  const auto& s = m.shape;
  auto mismatch = [&](const std::string& what, std::uint64_t want, std::uint64_t got) -> Status {
    return make_error(ErrorKind::input, file, what,
                      "the file's " + what + " is " + std::to_string(got) + " but " + m.id + " has " + std::to_string(want));
  };
  if (file.ends_with(".gguf")) {
    TRILEMMA_TRY(f, models::resolve_model(file));
    if (f.shape.layers != s.layers) return mismatch("layers", s.layers, f.shape.layers);
    if (f.shape.hidden != s.hidden) return mismatch("hidden", s.hidden, f.shape.hidden);
    if (f.shape.kv_heads != s.kv_heads) return mismatch("kv_heads", s.kv_heads, f.shape.kv_heads);
    if (f.shape.vocab != s.vocab) return mismatch("vocab", s.vocab, f.shape.vocab);
    return Ok{};
  }
  std::array<std::byte, k_llama2c_header_bytes> bytes{};
  if (auto problem = gguf::input_file_problem(file)) return *problem;  // a FIFO would block the read
  std::ifstream in(file, std::ios::binary);
  in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size()));
  TRILEMMA_TRY(h, parse_llama2c_header(std::span(bytes.data(), std::size_t(in.gcount())), file));
  if (h.dim != s.hidden) return mismatch("hidden", s.hidden, h.dim);
  if (h.layers != s.layers) return mismatch("layers", s.layers, h.layers);
  if (h.kv_heads != s.kv_heads) return mismatch("kv_heads", s.kv_heads, h.kv_heads);
  if (h.vocab != s.vocab) return mismatch("vocab", s.vocab, h.vocab);
  return Ok{};
}

Result<std::vector<PointReport>> check_points(const models::Model& model, const devices::Device& host,
                                              const std::vector<RunPoint>& points, const std::vector<Measurement>& measured,
                                              const Tolerances& tol) {
  std::vector<PointReport> reports;
  for (std::size_t i = 0; i < points.size(); ++i) {
    PointReport r;
    r.point = points[i];
    r.measured = measured[i];
    TRILEMMA_TRY(predicted, predict(model, host, r.point, r.measured.prompt_tokens, r.measured.acceptance));
    r.predicted = std::move(predicted);
    r.checks = compare(r.predicted, r.measured, tol);
    reports.push_back(std::move(r));
  }
  return reports;
}

std::string calibration_label(const models::Model& model, const std::vector<PointReport>& reports, std::time_t when) {
  std::string on = model.id + " (" + (reports.front().measured.synthetic ? "synthetic" : "real") + " weights), " +
                   std::to_string(reports.size()) + " points, formats:";
  std::vector<std::string> formats;
  for (const auto& r : reports)
    if (std::string name = engine_weights_name(r.point); std::find(formats.begin(), formats.end(), name) == formats.end())
      formats.push_back(name);
  for (const auto& name : formats) on += " " + name;
  return on + ", unix time " + std::to_string(when);
}

}  // namespace trilemma::verify
