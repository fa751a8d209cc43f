// What `verify` measures, and where measurements come from. The engine source runs the real
// binary (`trilemma run --json`) in a child process per configuration, so each measurement's
// peak resident memory is its own; a replay source reads an earlier report; tests substitute a
// fake source.
#pragma once
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "types/deployment.hpp"
#include "types/model_shape.hpp"
#include "types/result.hpp"

namespace trilemma::verify {

// One configuration to run: the deployment choices plus where the weights come from.
struct RunPoint {
  DeploymentConfig config;
  std::string model_id;                       // catalog id (synthetic weights of its shape) ...
  std::optional<std::filesystem::path> model_file, tokenizer_file;  // ... or real weights
  TensorType engine_weights = TensorType::q4_0;
  // The engine runs config.weights' llama.cpp recipe tensor by tensor (q4_k_m), not
  // engine_weights (then the recipe's bulk type) throughout.
  bool recipe = false;
  std::uint32_t prompt_tokens = 64;  // prefill length
  std::uint32_t decode_tokens = 32;  // tokens generated per run
  TensorType draft_engine_weights = TensorType::q4_0;  // speculative self/model drafts
  double full_kv_bytes = 0;                            // K/V of a cache holding every position
};

// The engine's weights of `p` as `run --weights` and reports spell them: "q4_0", or "q4_k_m".
inline std::string engine_weights_name(const RunPoint& p) {
  return std::string(p.recipe ? info(p.config.weights).name : info(p.engine_weights).name);
}

struct Spread {
  double median = 0, min = 0, max = 0;
  std::vector<double> runs;  // every run's value, in the order they ran (empty when not known)
};

struct Measurement {
  Spread ttft_ms, prefill_tok_s, decode_tok_s;
  double peak_rss_bytes = 0;
  double weight_bytes = 0;
  std::uint32_t prompt_tokens = 0;  // as tokenized (BOS included)
  std::uint32_t decode_tokens = 0;
  bool synthetic = true;
  std::string kernels;
  std::string weights;              // as the engine reports it ("q4_0+mixed")
  double acceptance = 0;            // speculative: accepted / drafted
  double kv_bytes = 0;              // KV allocated
  int runs = 0;
  // Real weights with an evaluation text: the configuration against full precision on it.
  std::optional<double> kl_mean;    // nats per token
  std::optional<double> top1;       // share of positions with the same argmax
};

class MeasurementSource {
 public:
  // Called before each engine run: (runs started so far, runs in all, index of the point).
  using Progress = std::function<void(std::size_t done, std::size_t total, std::size_t point)>;
  virtual ~MeasurementSource() = default;
  virtual Result<Measurement> measure(const RunPoint& point) = 0;
  // Every point; by default one after the other.
  virtual Result<std::vector<Measurement>> measure_all(const std::vector<RunPoint>& points, const Progress& progress) {
    std::vector<Measurement> out;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (progress) progress(i, points.size(), i);
      TRILEMMA_TRY(m, measure(points[i]));
      out.push_back(std::move(m));
    }
    return out;
  }
};

// Runs `binary run ... --json` `runs` times after one short warm-up; medians and extremes. A grid
// runs in rounds (every point once per round), not point after point. With an evaluation text
// and real weights, also `binary eval ... --json` once per weights x KV format (speculative
// decoding does not change what the target computes).
class EngineSource final : public MeasurementSource {
 public:
  EngineSource(std::filesystem::path binary, int runs, std::optional<std::filesystem::path> eval_text = std::nullopt)
      : m_binary(std::move(binary)), m_runs(runs), m_eval_text(std::move(eval_text)) {}
  Result<Measurement> measure(const RunPoint& point) override;
  Result<std::vector<Measurement>> measure_all(const std::vector<RunPoint>& points, const Progress& progress) override;

 private:
  struct Commands {
    std::string run, warm_up, eval;  // eval: empty without an evaluation text or real weights
  };
  Commands commands(const RunPoint& point) const;
  std::string common_flags(const RunPoint& point) const;  // weights, threads, KV: what run and eval share
  std::string run_command(const RunPoint& point) const;
  // Medians of a point's runs, and its accuracy through `eval` (once per weights x KV format).
  Result<Measurement> summarize(const RunPoint& point, const std::string& eval, const std::vector<nlohmann::json>& runs);
  std::filesystem::path m_binary;
  int m_runs;
  std::optional<std::filesystem::path> m_eval_text;
  std::vector<std::pair<std::string, std::pair<double, double>>> m_evaluated;  // "weights kv" -> (KL, top-1)
};

// Measurements of an earlier verify report (its "points"), matched by configuration and
// engine weights; a point the report does not hold is an input error naming the file.
// The text of `verify --out FILE`, checked to be a verify report of a version this build reads.
Result<nlohmann::json> read_verify_report(const std::string& text, const std::string& file);

class ReplaySource final : public MeasurementSource {
 public:
  ReplaySource(nlohmann::json report, std::string file);
  Result<Measurement> measure(const RunPoint& point) override;

 private:
  nlohmann::json m_report;
  std::string m_file;
};

Spread spread_of(std::vector<double> values);

}  // namespace trilemma::verify
