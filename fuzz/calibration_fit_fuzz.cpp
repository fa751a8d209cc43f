// The device fit on the most extreme measurements its readers let through (reliability D7):
// rates of 1e-6 and 1e9 tok/s, waits of 0 and a day, no memory and a petabyte, on any mix of
// models, formats, threads, pages and options. Oracle: the fit ends (libFuzzer's timeout is the
// check), and every factor it writes is finite and positive and every overhead finite and not
// negative, so a calibrated device never predicts an impossible figure.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "calibration/fit.hpp"
#include "devices/device_db.hpp"
#include "models/catalog.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

namespace {
struct Setup {
  devices::Device device = devices::resolve_device("raspberry-pi-5").value();
  std::vector<models::Model> models = models::builtin_models().value();
  std::deque<solver::PreparedModel> prepared;
  Setup() {
    for (const auto& m : models)
      if (m.id == "smollm2-135m" || m.id == "qwen2.5-0.5b") prepared.push_back(solver::PreparedModel::prepare(m));
  }
};
// A value the readers let through (llama-bench rates 1e-6..1e9 tok/s, reports' waits up to a day
// and memory up to a petabyte: reliability D7, D10), as extreme as they allow: an end exactly,
// or anywhere between on a log scale.
double extreme(FuzzedDataProvider& in, double lo, double hi) {
  switch (in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: return lo;
    case 1: return hi;
    default: {
      const double a = std::log10(std::max(lo, 1e-9)), b = std::log10(hi);
      return std::clamp(std::pow(10.0, a + (b - a) * in.ConsumeProbability<double>()), lo, hi);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Setup s;
  FuzzedDataProvider in(data, size);
  std::vector<calibration::Observation> obs;
  const int n = in.ConsumeIntegralInRange<int>(1, 6);
  for (int i = 0; i < n; ++i) {
    calibration::Observation o;
    o.model = &s.prepared[in.ConsumeIntegralInRange<std::size_t>(0, s.prepared.size() - 1)];
    o.config.weights = in.ConsumeBool() ? WeightFormat::q4_0 : WeightFormat::q8_0;
    o.config.threads = in.ConsumeIntegralInRange<std::uint32_t>(1, 4);
    o.config.prompt = in.ConsumeIntegralInRange<std::uint32_t>(1, 512);
    o.config.context = o.config.prompt + 64;
    if (in.ConsumeBool()) o.decode_tok_s = extreme(in, 1e-6, 1e9);
    else o.ttft_ms = extreme(in, 0, 86400e3);
    if (in.ConsumeBool()) o.peak_memory_bytes = extreme(in, 0, 1e15);
    o.source = "page-" + std::to_string(in.ConsumeIntegralInRange<int>(0, 2));
    obs.push_back(o);
  }
  calibration::FitOptions options;
  options.bandwidth_per_format = in.ConsumeBool();
  options.compute_per_format = in.ConsumeBool();
  options.max_fraction = 1.0;
  options.min_bandwidth_fraction = 0.1;
  options.prior_sources = in.ConsumeBool() ? 1.0 : 0.0;
  options.drop_at_bound = in.ConsumeBool();
  const auto cal = calibration::fit(s.device, obs, options, "fuzz");
  for (const auto& b : cal.backends) {
    for (const auto* table : {&b.bandwidth_fraction, &b.compute_fraction, &b.decode_compute_fraction, &b.attention_fraction,
                              &b.prefill_attention_fraction})
      for (const auto& [k, v] : *table)
        FUZZ_CHECK(std::isfinite(v) && v > 0);
    const auto amount = [](const std::optional<double>& v) { return !v || (std::isfinite(*v) && *v >= 0); };
    FUZZ_CHECK(amount(b.overhead_ms));
    FUZZ_CHECK(amount(b.overhead_us_per_layer));
    FUZZ_CHECK(amount(b.runtime_mib));
    FUZZ_CHECK(amount(b.scratch_fraction));
    FUZZ_CHECK(amount(b.speculative_round_ms));
  }
  return 0;
}
