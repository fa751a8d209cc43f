// `trilemma calibrate`'s pipeline without the binary: benchmark results generated from a device
// whose efficiencies are known, written as llama-bench jsonl, read back, matched and fitted,
// recover those efficiencies; trilemma's own run and verify reports read back as points.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "devices/device_db.hpp"
#include "memory/tensor_layout.hpp"
#include "models/catalog.hpp"
#include "solver/estimate.hpp"
#include "verify/device_calibration.hpp"
#include "verify/report_points.hpp"

using namespace trilemma;
namespace fs = std::filesystem;

namespace {

struct Test {
  std::string model;
  std::uint32_t threads, pp, tg, depth;
};

// llama-bench jsonl, one line per test, with the rates given (1 tok/s where none is).
std::string jsonl(const std::vector<Test>& tests, const std::vector<double>& rates) {
  std::string out;
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const auto& t = tests[i];
    const auto m = models::resolve_model(t.model).value();
    nlohmann::json j = {{"build_commit", "test"}, {"model_filename", t.model + ".gguf"}, {"model_type", "llama 1B Q4_0"},
                        {"model_size", memory::weight_bytes(m.shape, WeightFormat::q4_0).total},
                        {"model_n_params", count_parameters(m.shape).total()}, {"backends", "CPU"}, {"n_gpu_layers", 0},
                        {"n_threads", t.threads}, {"type_k", "f16"}, {"type_v", "f16"}, {"n_prompt", t.pp},
                        {"n_gen", t.tg}, {"n_depth", t.depth}, {"avg_ts", rates.empty() ? 1.0 : rates[i]}};
    out += j.dump() + "\n";
  }
  return out;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = fs::temp_directory_path() / ("trilemma-devcal-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(path) << text;
  return path.string();
}

double value(const std::vector<std::pair<std::string, double>>& table, const std::string& key) {
  for (const auto& [k, v] : table)
    if (k == key) return v;
  return -1;
}

}  // namespace

TEST_CASE("calibrate_device: a device with known efficiencies is recovered from generated llama-bench results", "[verify]") {
  auto device = devices::resolve_device("raspberry-pi-5").value();
  device.calibration.reset();  // start from the priors
  // The truth: what the "real" board reaches.
  devices::Calibration truth_cal;
  truth_cal.fitted_on = "truth";
  auto& t = truth_cal.at("cpu");
  t.bandwidth_fraction = {{"all", 0.55}};
  t.compute_fraction = {{"cpu_int8_dot", 0.35}};
  t.decode_compute_fraction = {{"cpu_int8_dot", 0.08}};  // compute-bound on one core, not on four
  t.attention_fraction = {{"all", 0.10}};
  t.prefill_attention_fraction = {{"all", 0.20}};
  t.overhead_us_per_layer = 300;  // ~7 ms a pass: large enough for decode speeds to show
  auto truth = device;
  truth.calibration = truth_cal;

  // Models of different depths and sizes (so a per-layer overhead and the bandwidth separate:
  // SmolLM2-135M streams little and has 30 layers),
  // 1/2/4 threads (compute against bandwidth in decode), depths 0 and 1024 (attention).
  std::vector<Test> tests;
  for (const std::string model : {"tinyllama-1.1b", "llama-3.2-1b", "smollm2-135m"})
    for (std::uint32_t threads : {1u, 2u, 4u})
      for (std::uint32_t depth : {0u, 1024u}) {
        tests.push_back({model, threads, 128, 0, depth});
        tests.push_back({model, threads, 0, 32, depth});
      }
  // First pass: the configurations as calibrate reads them; second: the truth's rates for them.
  const auto probe_file = write_temp("probe.jsonl", jsonl(tests, {}));
  auto probe = verify::ResultFiles::read({probe_file}, device);
  REQUIRE(probe.ok());
  REQUIRE((*probe)->points().size() == tests.size());
  CHECK((*probe)->unmatched().empty());
  const auto pd = solver::PreparedDevice::prepare(truth).value();
  std::vector<double> rates;
  for (const auto& p : (*probe)->points()) {
    const auto e = solver::estimate(*p.observation.model, pd, p.observation.config, nullptr, false).value();
    rates.push_back(p.figure == "decode_tok_s" ? e.latency.decode_tok_s.mid : p.observation.config.prompt / e.latency.ttft_ms.mid * 1e3);
  }
  const auto file = write_temp("truth.jsonl", jsonl(tests, rates));
  auto results = verify::ResultFiles::read({file}, device);
  REQUIRE(results.ok());
  auto fitted = verify::calibrate_device(device, **results, {}, "test");
  REQUIRE(fitted.ok());
  fs::remove(probe_file);
  fs::remove(file);

  // What the points can tell apart is fitted: one format, several threads, depths and models.
  CHECK_FALSE(fitted->options.bandwidth_per_format);
  CHECK(fitted->options.decode_compute);
  CHECK(fitted->options.attention);
  CHECK(fitted->options.overhead_per_layer);
  // Before: the priors miss; after: every point within verify's tolerances.
  CHECK(std::any_of(fitted->checks.begin(), fitted->checks.end(), [](const auto& c) { return !c.before.pass; }));
  CHECK(fitted->pass());
  // The efficiencies themselves, within 5%.
  const auto& cal = *fitted->device.calibration;
  const auto* b = cal.find("cpu");
  REQUIRE(b);
  CHECK(value(b->bandwidth_fraction, "all") == Approx(0.55).epsilon(0.05));
  CHECK(value(b->compute_fraction, "cpu_int8_dot") == Approx(0.35).epsilon(0.05));
  CHECK(value(b->decode_compute_fraction, "cpu_int8_dot") == Approx(0.08).epsilon(0.05));
  CHECK_FALSE(fitted->options.attention_per_kv);  // one KV format measured: its rate stands for all
  CHECK(value(b->prefill_attention_fraction, "all") == Approx(0.20).epsilon(0.05));
  CHECK(value(b->attention_fraction, "all") == Approx(0.10).epsilon(0.05));
  REQUIRE(b->overhead_us_per_layer);
  CHECK(*b->overhead_us_per_layer == Approx(300).epsilon(0.05));
  // The calibration says what it was fitted on.
  CHECK(cal.points == tests.size());
  CHECK(cal.files == std::vector<std::string>{file});
  CHECK(*cal.error_before > 0.1);
  CHECK(*cal.error_after < 0.01);
}

TEST_CASE("report_points: run and verify reports read back as engine points", "[verify]") {
  const nlohmann::json run = {
      {"schema", "trilemma.run"}, {"schema_version", 1}, {"model", "smollm2-135m"},
      {"kv_config", {{"format", "q8_0"}, {"strategy", "contiguous"}, {"window", 0}, {"sinks", 0}}},
      {"weights", "q4_0"}, {"threads", 2}, {"prompt_tokens", {1, 2, 3, 4}}, {"tokens", {5, 6}},
      {"ttft_ms", 12.5}, {"prefill_tok_s", 320.0}, {"decode_tok_s", 150.0}, {"peak_rss_bytes", 9.0e7},
      {"draft", ""}};
  const auto points = verify::report_points(run, "run.json");
  REQUIRE(points.ok());
  REQUIRE(points->size() == 1);
  const auto& p = points->front();
  CHECK(p.model == "smollm2-135m");
  CHECK(p.report.point.engine_weights == TensorType::q4_0);
  CHECK(p.report.point.config.kv_type == TensorType::q8_0);
  CHECK(p.report.point.config.threads == 2u);
  CHECK(p.report.measured.prompt_tokens == 4u);
  CHECK(p.report.measured.decode_tok_s.median == 150.0);
  CHECK_FALSE(p.report.point.recipe);

  // A recipe run (`run --weights q4_k_m` names the recipe, not its bulk type) reads back as
  // the recipe, tensor by tensor; "q4_0+mixed" (fallbacks) as its bulk type.
  auto recipe_run = run;
  recipe_run["weights"] = "q4_k_m";
  const auto recipe = verify::report_points(recipe_run, "run.json");
  REQUIRE(recipe.ok());
  CHECK(recipe->front().report.point.recipe);
  CHECK(recipe->front().report.point.engine_weights == TensorType::q4_k);
  CHECK(recipe->front().report.point.config.weights == WeightFormat::q4_k_m);
  CHECK(verify::engine_weights_name(recipe->front().report.point) == "q4_k_m");
  recipe_run["weights"] = "q4_0+mixed";
  const auto mixed = verify::report_points(recipe_run, "run.json");
  REQUIRE(mixed.ok());
  CHECK_FALSE(mixed->front().report.point.recipe);
  CHECK(mixed->front().report.point.engine_weights == TensorType::q4_0);
  recipe_run["weights"] = "q4_k_x";
  CHECK_FALSE(verify::report_points(recipe_run, "run.json").ok());

  // A model file is not a catalog model: --model names it.
  auto file_run = run;
  file_run["model"] = "/tmp/some.bin";
  const auto unnamed = verify::report_points(file_run, "run.json");
  REQUIRE_FALSE(unnamed.ok());
  CHECK_THAT(unnamed.error().to_string(), Catch::Contains("run.json:model") && Catch::Contains("--model"));
  CHECK(verify::report_points(file_run, "run.json", "stories260k").ok());
  // A speculative run and a malformed one.
  auto spec = run;
  spec["draft"] = "self";
  CHECK_THAT(verify::report_points(spec, "run.json").error().to_string(), Catch::Contains("speculative"));
  auto broken = run;
  broken.erase("decode_tok_s");
  CHECK_THAT(verify::report_points(broken, "run.json").error().to_string(), Catch::Contains("run.json:decode_tok_s: missing"));
  // Fields of the wrong type (the fuzzer's find: "draft" an object, "model" a number) are
  // malformed reports, not exceptions.
  for (const auto& [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"draft", {{"format", "f32"}}}, {"model", 7}, {"schema", {1, 2}}, {"schema_version", "one"}}) {
    auto typed = run;
    typed[key] = value;
    const auto r = verify::report_points(typed, "run.json");
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().to_string(), Catch::Contains("run.json"));
  }
  auto kv_typed = run;
  kv_typed["kv_config"]["strategy"] = 3;
  CHECK_FALSE(verify::report_points(kv_typed, "run.json").ok());
  // A strategy's parameters under their plan keys: a sliding run's window and sinks are read; an
  // offload run records bytes, not the share, and is refused naming the key.
  auto sliding = run;
  sliding["kv_config"]["strategy"] = "sliding", sliding["kv_config"]["window"] = 64, sliding["kv_config"]["sinks"] = 4;
  const auto slid = verify::report_points(sliding, "run.json");
  REQUIRE(slid.ok());
  CHECK(slid->front().report.point.config.kv_params.sliding.window == 64);
  CHECK(slid->front().report.point.config.kv_params.sliding.sinks == 4);
  auto offload = run;
  offload["kv_config"]["strategy"] = "offload", offload["kv_config"]["resident_bytes"] = 1048576;
  const auto off = verify::report_points(offload, "run.json");
  REQUIRE_FALSE(off.ok());
  CHECK_THAT(off.error().to_string(), Catch::Contains("run.json:kv_config.kv_resident_fraction"));
  CHECK_THAT(verify::report_points({{"schema", "trilemma.plan"}, {"schema_version", 1}}, "p.json").error().to_string(),
             Catch::Contains("p.json:schema"));

  // A verify report's points: configuration, engine weights and measurements.
  const nlohmann::json verify_report = {
      {"schema", "trilemma.verify"}, {"schema_version", 1}, {"model", "smollm2-135m"},
      {"points",
       {{{"config", {{"weights", "q8_0"}, {"kv_type", "f16"}, {"kv_strategy", "contiguous"}, {"context", 96u},
                     {"prompt", 64u}, {"backend", "cpu"}, {"threads", 2u}, {"speculative", {{"kind", "none"}}}}},
         {"engine_weights", "q8_0"}, {"prompt_tokens", 64u}, {"decode_tokens", 32u}, {"runs", 3},
         {"measured", {{"decode_tok_s", {{"median", 80.0}}}, {"ttft_ms", {{"median", 30.0}}}, {"peak_rss_bytes", 1.2e8}}}}}}};
  const auto vp = verify::report_points(verify_report, "v.json");
  INFO((vp.ok() ? "" : vp.error().to_string()));
  REQUIRE(vp.ok());
  REQUIRE(vp->size() == 1);
  CHECK(vp->front().report.point.engine_weights == TensorType::q8_0);
  CHECK(vp->front().report.measured.ttft_ms.median == 30.0);
  CHECK(vp->front().where == "v.json: points[0]");
  auto bad = verify_report;
  bad["points"][0]["engine_weights"] = "q9";
  CHECK_THAT(verify::report_points(bad, "v.json").error().to_string(), Catch::Contains("v.json:points[0].engine_weights"));
}

TEST_CASE("DeviceCalibration::worsened: points the fit pushed out of tolerance, far from where they were", "[verify]") {
  verify::ResultPoint a, b, c;
  a.label = "bench.json:3 smollm2-135m q4_0 tg16, 1 thread", a.figure = "decode_tok_s";
  b.label = "bench.json:4 smollm2-135m q4_0 tg16, 4 threads", b.figure = "decode_tok_s";
  c.label = "bench.json:5 smollm2-135m q4_0 pp64, 4 threads", c.figure = "prefill_tok_s";
  auto check = [](double rel, double tolerance) {
    verify::FigureCheck f;
    f.rel_error = rel, f.tolerance = tolerance, f.pass = std::abs(rel) <= tolerance;
    return f;
  };
  verify::DeviceCalibration fit;
  fit.checks = {{&a, check(0.04, 0.25), check(-0.88, 0.25)},   // moved from +4% to -88%: reported
                {&b, check(0.60, 0.25), check(0.70, 0.25)},    // out before and after, barely worse: not the fit's doing
                {&c, check(0.10, 0.25), check(-0.20, 0.25)}};  // worse but within tolerance
  const auto worse = fit.worsened();
  REQUIRE(worse.size() == 1);
  CHECK(worse[0] == "bench.json:3 smollm2-135m q4_0 tg16, 1 thread decode_tok_s: +4% before the fit, -88% after");
}
