// How long planning takes: one full plan (every configuration of one model on one device) and
// one model against every built-in device. Prints medians of several runs and, as the baseline
// measured in the same run, the time of one estimate() call, so the ratio shows how much of a
// plan is the search itself. The target: one plan well under 10 ms.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "devices/device_db.hpp"
#include "models/catalog.hpp"
#include "solver/planner.hpp"

using namespace trilemma;
using Clock = std::chrono::steady_clock;

template <class F>
double median_ms(int runs, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  const auto catalog = models::builtin_models().value();
  const auto devices = devices::builtin_devices().value();
  const models::Model* model = nullptr;
  for (const auto& m : catalog)
    if (m.id == "llama-3.1-8b") model = &m;
  const auto device = devices::resolve_device("apple-m2").value();
  const auto profile = solver::resolve_profile("latency").value();
  auto plan_on = [&](const devices::Device& d) {
    solver::PlanRequest req;
    req.model = model;
    req.device = &d;
    req.profile = profile;
    req.catalog = &catalog;
    return solver::plan(req).value();
  };
  const auto probe = plan_on(device);
  const auto pm = solver::PreparedModel::prepare(*model);
  const auto pd = solver::PreparedDevice::prepare(device).value();
  DeploymentConfig cfg;
  volatile double sink = 0;
  const double estimate_ms = median_ms(201, [&] {
    for (int i = 0; i < 100; ++i) sink = sink + solver::estimate(pm, pd, cfg)->latency.decode_tok_s.mid;
  }) / 100;
  const double plan_ms = median_ms(21, [&] { sink = sink + double(plan_on(device).evaluated); });
  const double all_ms = median_ms(5, [&] {
    for (const auto& d : devices) sink = sink + double(plan_on(d).evaluated);
  });
  std::printf("plan_bench: llama-3.1-8b, latency-first, medians\n");
  std::printf("  one estimate()                 %8.4f ms   (baseline)\n", estimate_ms);
  std::printf("  one plan on apple-m2           %8.3f ms   = %.0f x baseline, %zu configurations\n", plan_ms,
              plan_ms / estimate_ms, probe.evaluated);
  std::printf("  one plan per device (%zu)      %8.3f ms   = %.1f ms per device\n", devices.size(), all_ms,
              all_ms / double(devices.size()));
  return 0;
}
