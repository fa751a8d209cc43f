// Published rows as planner observations, and the device fit: a made-up device whose true
// efficiencies are known is recovered from results generated with them.
#include <catch2/catch.hpp>

#include <cmath>
#include <deque>

#include "calibration/fit.hpp"
#include "calibration/observations.hpp"
#include "devices/device_db.hpp"
#include "models/catalog.hpp"
#include "solver/estimate.hpp"

using namespace trilemma;

namespace {

measurements::SpeedRow row(std::string device, std::string model, std::string weights, std::string backend) {
  measurements::SpeedRow r;
  r.file = "speed-test.csv";
  r.line = 2;
  r.id = device + "/" + model + "/" + weights;
  r.device = std::move(device);
  r.model = std::move(model);
  r.weights = std::move(weights);
  r.backend = std::move(backend);
  r.engine = "llama.cpp";
  r.source_url = "https://example.org";
  r.locator = "test";
  return r;
}

std::vector<devices::Device> uncalibrated_devices() {
  auto all = devices::builtin_devices().value();
  for (auto& d : all) d.calibration.reset();
  return all;
}

}  // namespace

TEST_CASE("calibration::weight_format_alias: published names with the same bytes and path", "[calibration]") {
  CHECK(calibration::weight_format_alias("q4_k_m")->format == WeightFormat::q4_k_m);
  CHECK(calibration::weight_format_alias("mlx-4bit")->format == WeightFormat::q4_0);
  CHECK(calibration::weight_format_alias("q4f16_1")->format == WeightFormat::q4_0);
  CHECK_FALSE(calibration::weight_format_alias("mlx-4bit")->note.empty());
  // Group-wise NPU formats are not the per-channel ones: their prefill costs several times more.
  CHECK_FALSE(calibration::weight_format_alias("w8a8_g128"));
  CHECK_FALSE(calibration::weight_format_alias("q4_k_s"));
}

TEST_CASE("calibration::ObservationSet: one observation per figure, pinned to what ran", "[calibration]") {
  const auto devices = uncalibrated_devices();
  const auto models = models::builtin_models().value();
  std::vector<measurements::SpeedRow> rows;
  auto r = row("apple-m2", "llama-2-7b", "q4_0", "metal");
  r.prompt_tokens = 512, r.gen_tokens = 128, r.prefill_tok_s = 145.9, r.ttft_ms = 9999, r.decode_tok_s = 21.7;
  rows.push_back(r);
  auto cpu = row("core-ultra-7-155h", "qwen3-8b", "q4_k_m", "cpu");
  cpu.gen_tokens = 128, cpu.depth = 1024, cpu.decode_tok_s = 3.9;
  rows.push_back(cpu);
  auto mem = row("rk3588", "qwen2.5-1.5b", "w8a8", "rknpu");
  mem.engine = "rkllm", mem.prompt_tokens = 128, mem.gen_tokens = 64, mem.peak_memory_mib = 1700;
  rows.push_back(mem);
  auto excluded = row("apple-m2", "llama-2-7b", "q8_0", "metal");
  excluded.decode_tok_s = 12, excluded.exclude_decode = true;
  rows.push_back(excluded);
  rows.push_back(row("no-such-phone", "llama-2-7b", "q4_0", "cpu"));
  rows.push_back(row("apple-m2", "no-such-model", "q4_0", "cpu"));
  rows.push_back(row("apple-m2", "llama-2-7b", "q4_k_s", "cpu"));
  rows.push_back(row("apple-m2", "llama-2-7b", "q4_0", "sycl"));
  rows.push_back(row("apple-m2", "llama-2-7b", "q4_0", "cuda"));

  const calibration::ObservationSet set(rows, devices, models);
  const auto& obs = set.observations();
  REQUIRE(obs.size() == 4);
  // Decode at the end of the generated tokens; prefill from the published rate, not the TTFT.
  CHECK(obs[0].figure == calibration::Figure::decode);
  CHECK(obs[0].observation.config.context == 128);
  CHECK(obs[1].figure == calibration::Figure::prefill);
  CHECK(*obs[1].observation.ttft_ms == Approx(512 / 145.9 * 1000));
  CHECK(obs[1].observation.config.prompt == 512);
  // llama.cpp on an x86 hybrid without a stated thread count: its default, the six P-cores.
  CHECK(obs[2].observation.config.threads == 6);
  CHECK(obs[2].observation.config.context == 1024 + 128);
  CHECK(obs[3].figure == calibration::Figure::memory);
  CHECK(obs[3].observation.config.context == 128 + 64);
  CHECK(*obs[3].observation.peak_memory_bytes == 1700 * 1048576.0);
  const auto reasons = set.skipped_by_reason();
  CHECK(reasons.at("unknown device") == 1);
  CHECK(reasons.at("unknown model") == 1);
  CHECK(reasons.at("weight format not costed") == 1);
  CHECK(reasons.at("unknown backend") == 1);
  CHECK(reasons.at("device does not list backend") == 1);
  CHECK(reasons.at("excluded in the dataset") == 1);
  CHECK(set.device_ids() == std::vector<std::string>{"apple-m2", "core-ultra-7-155h", "rk3588"});
}

TEST_CASE("calibration::fit: recovers a device's known efficiencies from results made with them", "[calibration]") {
  auto device = devices::resolve_device("raspberry-pi-5").value();
  device.calibration.reset();
  auto truth = device;
  devices::Calibration t;
  t.fitted_on = "truth";
  auto& cpu = t.at("cpu");
  cpu.bandwidth_fraction = {{"all", 0.42}};
  cpu.compute_fraction = {{"cpu_int8_dot", 0.18}};
  cpu.overhead_ms = 3.0;
  cpu.runtime_mib = 75;
  truth.calibration = t;

  const auto models = models::builtin_models().value();
  std::vector<solver::PreparedModel> prepared;
  prepared.reserve(3);
  // A 135M model's step is mostly the fixed overhead, a 1B model's mostly its bytes: together
  // they tell the two apart.
  for (const char* id : {"smollm2-135m", "qwen2.5-0.5b", "llama-3.2-1b"})
    for (const auto& m : models)
      if (m.id == id) prepared.push_back(solver::PreparedModel::prepare(m));
  const auto pd = solver::PreparedDevice::prepare(truth).value();
  std::vector<calibration::Observation> obs;
  for (const auto& pm : prepared)
    for (auto w : {WeightFormat::q4_0, WeightFormat::q8_0}) {
      calibration::Observation o;
      o.model = &pm;
      o.config.weights = w;
      o.config.threads = 4;
      o.config.prompt = 512;
      o.config.context = 640;
      const auto e = solver::estimate(pm, pd, o.config).value();
      o.decode_tok_s = e.latency.decode_tok_s.mid;
      o.ttft_ms = e.latency.ttft_ms.mid;
      o.peak_memory_bytes = e.memory.total_bytes;
      obs.push_back(o);
    }
  calibration::FitOptions options;
  options.bandwidth_per_format = false;
  options.compute_per_format = false;
  options.attention = false;
  const auto before = calibration::median_errors(device, obs);
  CHECK(before.decode > 0.05);
  const auto fitted = calibration::fit(device, obs, options, "test");
  REQUIRE(fitted.find("cpu"));
  const auto& f = *fitted.find("cpu");
  CHECK(f.bandwidth_fraction.at(0).second == Approx(0.42).epsilon(0.05));
  CHECK(f.compute_fraction.at(0).second == Approx(0.18).epsilon(0.05));
  CHECK(*f.overhead_ms == Approx(3.0).epsilon(0.05));
  CHECK(*f.runtime_mib == Approx(75).epsilon(0.05));
  device.calibration = fitted;
  const auto after = calibration::median_errors(device, obs);
  CHECK(after.decode < 0.01);
  CHECK(after.ttft < 0.01);
  CHECK(after.memory < 0.01);
}

namespace {

// Observations of `truth` on the Raspberry Pi 5: decode and prefill of two models at two
// formats, each its own observation (published rows give the phases apart), from `source`.
struct Synthetic {
  std::vector<models::Model> models = models::builtin_models().value();
  std::deque<solver::PreparedModel> prepared;
  Synthetic() {
    for (const char* id : {"smollm2-135m", "llama-3.2-1b"})
      for (const auto& m : models)
        if (m.id == id) prepared.push_back(solver::PreparedModel::prepare(m));
  }
  std::vector<calibration::Observation> observations(const devices::Device& truth, bool decode, bool prefill,
                                                     const std::string& source) const {
    const auto pd = solver::PreparedDevice::prepare(truth).value();
    std::vector<calibration::Observation> out;
    for (const auto& pm : prepared)
      for (auto w : {WeightFormat::q4_0, WeightFormat::q8_0}) {
        calibration::Observation o;
        o.model = &pm;
        o.config.weights = w;
        o.config.threads = 4;
        o.config.prompt = 512;
        o.config.context = 640;
        o.source = source;
        o.label = source + " " + pm.model->id + " " + std::string(info(w).name);
        const auto e = solver::estimate(pm, pd, o.config).value();
        if (decode) out.push_back(o), out.back().decode_tok_s = e.latency.decode_tok_s.mid;
        if (prefill) out.push_back(o), out.back().ttft_ms = e.latency.ttft_ms.mid;
      }
    return out;
  }
};

devices::Device pi5_with(double bandwidth, double compute) {
  auto d = devices::resolve_device("raspberry-pi-5").value();
  d.calibration.reset();
  devices::Calibration t;
  t.fitted_on = "truth";
  t.at("cpu").bandwidth_fraction = {{"all", bandwidth}};
  t.at("cpu").compute_fraction = {{"cpu_int8_dot", compute}};
  d.calibration = t;
  return d;
}

calibration::FitOptions published_options() {
  calibration::FitOptions o;
  o.bandwidth_per_format = false;
  o.compute_per_format = false;
  o.attention = false;
  o.memory = false;
  o.max_fraction = 1.0;
  o.min_bandwidth_fraction = 0.1;
  o.drop_at_bound = true;
  return o;
}

std::optional<double> factor(const devices::Calibration& c, const std::string& name) {
  const auto* b = c.find("cpu");
  if (!b) return std::nullopt;
  for (const auto* table : {&b->bandwidth_fraction, &b->compute_fraction})
    for (const auto& [k, v] : *table)
      if ((table == &b->bandwidth_fraction ? "bandwidth_fraction." : "compute_fraction.") + k == name) return v;
  return std::nullopt;
}

}  // namespace

TEST_CASE("calibration::fit: a phase's factor moves only with that phase's measurements", "[calibration]") {
  Synthetic s;
  auto device = devices::resolve_device("raspberry-pi-5").value();
  device.calibration.reset();
  // Prefill only (the Snapdragon X Elite's published CPU rows were): compute is fitted, the
  // bandwidth keeps the tables' value instead of whatever the prefill times let it drift to.
  const auto prefill_only = s.observations(pi5_with(0.5, 0.15), false, true, "page-a");
  const auto fitted = calibration::fit(device, prefill_only, published_options(), "test");
  CHECK_FALSE(factor(fitted, "bandwidth_fraction.all"));
  REQUIRE(factor(fitted, "compute_fraction.cpu_int8_dot"));
  CHECK(*factor(fitted, "compute_fraction.cpu_int8_dot") == Approx(0.15).epsilon(0.05));
  // Decode only: bandwidth, no compute.
  const auto decode_only = calibration::fit(device, s.observations(pi5_with(0.5, 0.15), true, false, "page-a"),
                                            published_options(), "test");
  CHECK(factor(decode_only, "bandwidth_fraction.all"));
  CHECK_FALSE(factor(decode_only, "compute_fraction.cpu_int8_dot"));
}

TEST_CASE("calibration::fit: each factor records the independent sources behind it", "[calibration]") {
  Synthetic s;
  auto device = devices::resolve_device("raspberry-pi-5").value();
  device.calibration.reset();
  auto obs = s.observations(pi5_with(0.5, 0.15), true, false, "page-a");
  const auto more = s.observations(pi5_with(0.5, 0.15), true, true, "page-b");
  obs.insert(obs.end(), more.begin(), more.end());
  const auto fitted = calibration::fit(device, obs, published_options(), "test");
  const auto& sources = fitted.find("cpu")->sources;
  auto count = [&](const std::string& name) {
    for (const auto& [k, n] : sources)
      if (k == name) return int(n);
    return -1;
  };
  CHECK(count("bandwidth_fraction.all") == 2);        // decode rows of both pages
  CHECK(count("compute_fraction.cpu_int8_dot") == 1);  // prefill rows of page-b only
}

TEST_CASE("calibration::fit: a factor pushed to a physical bound is left out and reported with its rows", "[calibration]") {
  Synthetic s;
  auto device = devices::resolve_device("raspberry-pi-5").value();
  device.calibration.reset();
  // Decodes at 3% of the peak bandwidth: no engine is that slow; the peak or the run is wrong.
  const auto obs = s.observations(pi5_with(0.03, 0.15), true, false, "slow-page");
  const auto fitted = calibration::fit(device, obs, published_options(), "test");
  const auto* cpu = fitted.find("cpu");
  REQUIRE(cpu);
  CHECK_FALSE(factor(fitted, "bandwidth_fraction.all"));  // the tables' value stands
  REQUIRE(cpu->at_bound.size() == 1);
  CHECK(cpu->at_bound[0].find("bandwidth_fraction.all") == 0);
  CHECK(cpu->at_bound[0].find("(lower bound)") != std::string::npos);
  CHECK(cpu->at_bound[0].find("slow-page smollm2-135m q4_0") != std::string::npos);
}

TEST_CASE("calibration::fit: with prior_sources a factor moves part of the way, by its evidence", "[calibration]") {
  Synthetic s;
  auto device = devices::resolve_device("raspberry-pi-5").value();
  device.calibration.reset();
  const double prior = solver::PreparedDevice::prepare(device).value().efficiency(Backend::cpu, WeightFormat::q4_0)->bandwidth_fraction.mid;
  const double truth = prior * 0.6;
  auto fitted_with = [&](int pages, double prior_sources) {
    std::vector<calibration::Observation> obs;
    for (int p = 0; p < pages; ++p) {
      auto page = s.observations(pi5_with(truth, 0.15), true, false, "page-" + std::to_string(p));
      // Each page's rows weigh one in all, as fidelity weighs them.
      for (auto& o : page) o.weight = 1.0 / double(page.size());
      obs.insert(obs.end(), page.begin(), page.end());
    }
    auto o = published_options();
    o.prior_sources = prior_sources;
    return *factor(calibration::fit(device, obs, o, "test"), "bandwidth_fraction.all");
  };
  const double free = fitted_with(1, 0), one = fitted_with(1, 1), four = fitted_with(4, 1);
  CAPTURE(prior, truth, free, one, four);
  CHECK(free == Approx(truth).epsilon(0.03));
  // One page against a prior worth one page: about half way in log space; four pages: 4/5.
  CHECK(std::log(one / prior) == Approx(0.5 * std::log(truth / prior)).margin(0.05));
  CHECK(std::log(four / prior) == Approx(0.8 * std::log(truth / prior)).margin(0.05));
}
