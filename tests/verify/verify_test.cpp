// verify's comparison, tolerances and calibration against a fake measurement source, and the
// plan-document checks. The real engine run is in tests/cli (verify on stories260K).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "devices/device_db.hpp"
#include "memory/tensor_layout.hpp"
#include "models/catalog.hpp"
#include "solver/plan_document.hpp"
#include "verify/points.hpp"
#include "verify/report_points.hpp"
#include "verify/verify.hpp"

using namespace trilemma;

namespace {

// Measures what the model predicts for a host whose true bandwidth and compute fractions are
// given: a stand-in for the engine with known answers.
class FakeSource final : public verify::MeasurementSource {
 public:
  FakeSource(const models::Model& m, devices::Device truth) : m_model(m), m_truth(std::move(truth)) {}
  Result<verify::Measurement> measure(const verify::RunPoint& p) override {
    const auto e = verify::predict(m_model, m_truth, p, p.prompt_tokens).value();
    verify::Measurement out;
    out.decode_tok_s = verify::spread_of({e.latency.decode_tok_s.mid});
    out.ttft_ms = verify::spread_of({e.latency.ttft_ms.mid});
    out.peak_rss_bytes = e.memory.total_bytes + 12 * 1048576.0;  // 12 MiB the model does not know
    out.prompt_tokens = p.prompt_tokens;
    out.runs = 3;
    return out;
  }

 private:
  const models::Model& m_model;
  devices::Device m_truth;
};

devices::Device fake_host() {
  auto d = devices::resolve_device("raspberry-pi-5").value();
  d.id = "host";
  d.calibration.reset();  // a probed host starts uncalibrated (the built-in board has a fitted one)
  return d;
}

}  // namespace

TEST_CASE("verify::compare: relative errors and tolerance edges", "[verify]") {
  Estimate e;
  e.latency.decode_tok_s = Range::exact(11.0);
  e.latency.ttft_ms = Range::exact(80.0);
  e.memory.total_bytes = 1000;
  verify::Measurement m;
  m.decode_tok_s.median = 10.0;  // +10%: on the edge, passes
  m.ttft_ms.median = 100.0;      // -20%: on the edge, passes
  m.peak_rss_bytes = 900;        // +11%: fails the 5% default
  const auto checks = verify::compare(e, m, {});
  REQUIRE(checks.size() == 3);
  CHECK(checks[0].rel_error == Approx(0.10));
  CHECK(checks[0].pass);
  CHECK(checks[1].rel_error == Approx(-0.20));
  CHECK(checks[1].pass);
  CHECK_FALSE(checks[2].pass);
  verify::Tolerances loose;
  loose.memory = 0.2;
  CHECK(verify::compare(e, m, loose)[2].pass);
  m.decode_tok_s.median = 0;  // a failed measurement never passes
  CHECK_FALSE(verify::compare(e, m, loose)[0].pass);
}

TEST_CASE("verify::spread_of: median, extremes and every run in order", "[verify]") {
  const auto s = verify::spread_of({30.0, 10.0, 20.0, 40.0});
  CHECK(s.median == 30.0);  // the upper middle of an even count
  CHECK(s.min == 10.0);
  CHECK(s.max == 40.0);
  CHECK(s.runs == std::vector<double>{30.0, 10.0, 20.0, 40.0});
  CHECK(verify::spread_of({}).runs.empty());
}

TEST_CASE("verify::summarize: within tolerance, median and largest error per figure", "[verify]") {
  Estimate e;
  e.latency.ttft_ms = Range::exact(100.0);
  e.memory.total_bytes = 1000;
  std::vector<verify::PointReport> reports;
  for (double measured : {100.0, 95.0, 80.0}) {  // decode errors +0%, +5.3%, +25%
    e.latency.decode_tok_s = Range::exact(100.0);
    verify::Measurement m;
    m.decode_tok_s.median = measured;
    m.ttft_ms.median = 100.0;
    m.peak_rss_bytes = 0;  // a failed measurement: an infinite error
    verify::PointReport r;
    r.checks = verify::compare(e, m, {});
    reports.push_back(r);
  }
  const auto s = verify::summarize(reports);
  REQUIRE(s.size() == 3);
  CHECK(s[0].figure == "decode_tok_s");
  CHECK(s[0].within == 2);
  CHECK(s[0].total == 3);
  CHECK(s[0].median_abs_error == Approx(5.0 / 95.0));
  CHECK(s[0].max_abs_error == Approx(0.25));
  CHECK(s[1].within == 3);
  CHECK(s[1].max_abs_error == 0.0);
  CHECK(s[2].within == 0);
  CHECK(std::isinf(s[2].max_abs_error));
  CHECK(verify::summarize({}).empty());
}

using Fractions = std::vector<std::pair<std::string, double>>;

// The factors of a fake host's "real" machine: 10% of the compute peak, `bandwidth` of peak
// bandwidth per weight format, `attention` of the attention peak per KV format.
devices::Calibration true_cpu_factors(Fractions bandwidth, Fractions attention) {
  devices::Calibration c;
  c.fitted_on = "truth";
  auto& t = c.at("cpu");
  t.bandwidth_fraction = std::move(bandwidth);
  t.compute_fraction = {{"all", 0.10}};
  t.attention_fraction = std::move(attention);
  return c;
}

// One point measured by `source` and predicted on `host`.
verify::PointReport fake_report(const models::Model& model, FakeSource& source, const devices::Device& host, TensorType w,
                                TensorType kv, std::uint32_t prompt) {
  verify::RunPoint p;
  p.model_id = model.id;
  p.engine_weights = w;
  p.config.weights = w == TensorType::q8_0 ? WeightFormat::q8_0 : WeightFormat::q4_0;
  p.config.kv_type = kv;
  p.config.threads = 4;
  p.prompt_tokens = prompt;
  verify::PointReport r;
  r.point = p;
  r.measured = source.measure(p).value();
  r.predicted = verify::predict(model, host, p, prompt).value();
  return r;
}

TEST_CASE("verify::calibrate: recovers the true factors of a fake host", "[verify]") {
  const auto model = models::resolve_model("smollm2-135m").value();
  auto host = fake_host();
  auto truth = host;
  // The "real" machine reaches 40% of peak bandwidth on q8_0, 30% on q4_0, 10% compute, and
  // its attention runs at 5% of the f32 peak over an f16 cache, 2% over a q8_0 one.
  auto true_factors = true_cpu_factors({{"q8_0", 0.40}, {"q4_0", 0.30}}, {{"f16", 0.05}, {"q8_0", 0.02}});
  true_factors.at("cpu").overhead_ms = 0.0;
  truth.calibration = true_factors;
  FakeSource source(model, truth);
  std::vector<verify::PointReport> reports;
  for (auto w : {TensorType::q8_0, TensorType::q4_0})
    for (auto kv : {TensorType::f16, TensorType::q8_0})
    for (std::uint32_t prompt : {64u, 480u}) {
      auto r = fake_report(model, source, host, w, kv, prompt);
      r.checks = verify::compare(r.predicted, r.measured, {});
      reports.push_back(r);
    }
  // Datasheet factors are off for this fake host.
  CHECK_FALSE(reports.front().pass());
  host.calibration = verify::calibrate(model, reports, host, "test");
  for (auto& r : reports) {
    r.predicted = verify::predict(model, host, r.point, r.point.prompt_tokens).value();
    r.checks = verify::compare(r.predicted, r.measured, {});
    CAPTURE(r.point.prompt_tokens, std::string(info(r.point.engine_weights).name));
    for (const auto& c : r.checks) {
      CAPTURE(c.figure, c.predicted, c.measured);
      CHECK(c.pass);
    }
  }
  // Prefill attention's rate is what the prompt lengths tell apart (the weights' bandwidth and
  // the fixed overhead are not: both are constant per format, and only their sum is fitted
  // well; nor is decode attention, which streams the KV at these short contexts). The truth
  // has one rate for both phases. The overhead the fit settles on along that ridge (up to
  // ~10 ms where the truth has none) is also paid once per prefill, which moves the attention
  // rate that fits the prompts by a few percent: recovered within 8%.
  REQUIRE(host.calibration->find("cpu"));
  const auto& fitted = *host.calibration->find("cpu");
  const auto& att = fitted.prefill_attention_fraction;
  auto fraction = [&](const std::string& kv) {
    for (const auto& [k, v] : att)
      if (k == kv) return v;
    return 0.0;
  };
  CHECK(fraction("f16") == Approx(0.05).epsilon(0.08));
  CHECK(fraction("q8_0") == Approx(0.02).epsilon(0.08));
  // Memory: the fake adds 12 MiB to the truth's total (whose runtime is derating.yaml's 40 MiB
  // for cpu) and keeps the modelled scratch: the fit finds scratch x1 and 52 MiB of runtime.
  REQUIRE(fitted.runtime_mib);
  CHECK(*fitted.runtime_mib == Approx(52.0).epsilon(0.01));
  REQUIRE(fitted.scratch_fraction);
  CHECK(*fitted.scratch_fraction == Approx(1.0).epsilon(0.01));
}

TEST_CASE("verify::calibrate: one prompt length leaves attention's rates to the tables", "[verify]") {
  const auto model = models::resolve_model("smollm2-135m").value();
  auto host = fake_host();
  auto truth = host;
  truth.calibration = true_cpu_factors({{"q8_0", 0.40}}, {{"f16", 0.05}});
  FakeSource source(model, truth);
  const auto report = [&](std::uint32_t prompt) { return fake_report(model, source, host, TensorType::q8_0, TensorType::f16, prompt); };
  // One run (480 tokens): compute and attention cannot be told apart, so neither attention
  // rate is fitted; compute and bandwidth still are.
  // The host carries an earlier calibration whose attention rates were fitted badly: they go.
  devices::Calibration stale;
  stale.fitted_on = "stale";
  stale.at("cpu").prefill_attention_fraction = {{"f16", 0.008}};
  stale.at("cpu").attention_fraction = {{"f16", 0.05}};
  host.calibration = stale;
  const auto one = verify::calibrate(model, {report(480)}, host, "test");
  REQUIRE(one.find("cpu"));
  CHECK(one.find("cpu")->prefill_attention_fraction.empty());
  CHECK(one.find("cpu")->attention_fraction.empty());
  CHECK_FALSE(one.find("cpu")->compute_fraction.empty());
  // Two lengths 7.5x apart: fitted.
  const auto two = verify::calibrate(model, {report(64), report(480)}, host, "test");
  REQUIRE(two.find("cpu"));
  CHECK_FALSE(two.find("cpu")->prefill_attention_fraction.empty());
}

TEST_CASE("verify::unmapped_embedding_bytes: a file's untied table in its own type is resident as one window", "[verify]") {
  const auto model = models::resolve_model("tinyllama-1.1b").value();
  const auto engine = verify::engine_model(model, TensorType::q4_0);
  auto file = engine;  // a GGUF file holding what the engine runs
  const auto emb = std::find_if(engine.stored_tensors.begin(), engine.stored_tensors.end(),
                                [](const auto& t) { return t.name == "token_embd.weight"; });
  REQUIRE(emb != engine.stored_tensors.end());
  CHECK(emb->type == "q4_0");
  CHECK(verify::unmapped_embedding_bytes(engine, &file) == Approx(double(emb->bytes) - 65536.0));
  CHECK(verify::unmapped_embedding_bytes(engine, nullptr) == 0);  // synthetic weights: in memory
  for (auto& t : file.stored_tensors)
    if (t.name == "token_embd.weight") t.type = "f16";  // the engine converts it: a resident copy
  CHECK(verify::unmapped_embedding_bytes(engine, &file) == 0);
  auto tied = engine;
  tied.shape.tied_embeddings = true;  // the classifier streams the whole table
  CHECK(verify::unmapped_embedding_bytes(tied, &tied) == 0);
}

TEST_CASE("verify: a llama.cpp recipe runs tensor by tensor and is predicted with the same tensors", "[verify]") {
  const auto model = models::resolve_model("tinyllama-1.1b").value();
  verify::PointsRequest request;
  request.weights = WeightFormat::q4_k_m;
  const auto points = verify::build_points(model, request);
  REQUIRE(points.ok());
  const auto& p = points->front();
  CHECK(p.recipe);
  CHECK(p.engine_weights == TensorType::q4_k);  // the recipe's bulk type
  CHECK(verify::engine_weights_name(p) == "q4_k_m");
  // The predicted engine model holds the planner's recipe tensor for tensor: its bytes are the
  // recipe's (q6_k attn_v/ffn_down in some layers, q6_k classifier), not q4_k throughout.
  const auto recipe = verify::engine_model(model, p.engine_weights, WeightFormat::q4_k_m);
  const auto uniform = verify::engine_model(model, TensorType::q4_k);
  double recipe_bytes = 0, uniform_bytes = 0;
  for (const auto& t : recipe.stored_tensors) recipe_bytes += double(t.bytes);
  for (const auto& t : uniform.stored_tensors) uniform_bytes += double(t.bytes);
  CHECK(recipe_bytes == Approx(memory::weight_bytes(model.shape, WeightFormat::q4_k_m).total));
  CHECK(recipe_bytes > uniform_bytes * 1.05);
  const auto e = verify::predict(model, fake_host(), p, p.prompt_tokens);
  REQUIRE(e.ok());
  CHECK(e->memory.weights_bytes == Approx(recipe_bytes));
  // A verify report names the recipe, and reads back as a recipe point (calibrate, --replay).
  const nlohmann::json report = {
      {"schema", "trilemma.verify"}, {"schema_version", 1}, {"model", "tinyllama-1.1b"},
      {"points",
       {{{"config", solver::config_to_json(p.config)}, {"engine_weights", "q4_k_m"}, {"prompt_tokens", 64u}, {"decode_tokens", 32u},
         {"runs", 3}, {"measured", {{"decode_tok_s", {{"median", 40.0}}}, {"ttft_ms", {{"median", 900.0}}}, {"peak_rss_bytes", 7e8}}}}}}};
  const auto back = verify::report_points(report, "v.json");
  INFO((back.ok() ? "" : back.error().to_string()));
  REQUIRE(back.ok());
  CHECK(back->front().report.point.recipe);
  CHECK(verify::engine_weights_name(back->front().report.point) == "q4_k_m");
  // A draft copy takes one type: a recipe there is refused by name.
  request.base.speculative.kind = DraftKind::self;
  request.base.speculative.draft_weights = WeightFormat::q4_k_m;
  request.weights = WeightFormat::q8_0;
  const auto draft = verify::build_points(model, request);
  REQUIRE_FALSE(draft.ok());
  CHECK_THAT(draft.error().to_string(), Catch::Contains("draft_weights"));
}

TEST_CASE("verify::check_model_file: a llama2.c checkpoint's header against the catalog shape", "[verify]") {
  auto model = models::resolve_model("stories260k");
  REQUIRE(model.ok());
  const auto path = std::filesystem::temp_directory_path() / "trilemma-verify-header.bin";
  const auto write = [&](std::initializer_list<std::int32_t> fields) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    for (std::int32_t v : fields) out.write(reinterpret_cast<const char*>(&v), 4);
  };
  write({64, 172, 5, 8, 4, 512, 512});  // stories260K's own header (the weights are not read)
  CHECK(verify::check_model_file(*model, path.string()).ok());
  write({64, 172, 6, 8, 4, 512, 512});
  auto s = verify::check_model_file(*model, path.string());
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message == "the file's layers is 6 but stories260k has 5");
  write({64, 172});
  s = verify::check_model_file(*model, path.string());
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message == "header: needs 28 bytes, file has 8");
  std::filesystem::remove(path);
}
