// The host probe's measurements, made with the engine's own kernels and thread pool.
#pragma once
#include "devices/host_probe.hpp"
#include "engine/runtime/host_measure.hpp"
#include "engine/runtime/peak_compute.hpp"

namespace trilemma::cli {

inline devices::HostMeasurer engine_measurer() {
  devices::HostMeasurer m;
  m.read_bandwidth = [](int threads, int runs) {
    const auto r = engine::measure_read_bandwidth_runs(std::size_t(1) << 30, threads, runs);
    return devices::BandwidthSample{r.wall, r.thread_time};
  };
  m.peak = [](bool int8, int threads, int runs) {
    const auto r = engine::measure_peak_runs(int8 ? engine::PeakPath::int8_dot : engine::PeakPath::f32_fma, threads, runs);
    return devices::PeakSample{r.kernel.name, r.kernel.lanes, r.kernel.ops_per_lane, r.kernel.pipes, r.one_thread, r.all_threads};
  };
  m.clock_ghz = [] {
    // The best of three: a descheduled slice only ever lowers the figure.
    double best = 0;
    for (int i = 0; i < 3; ++i) best = std::max(best, engine::measure_clock_ghz());
    return best;
  };
  return m;
}

}  // namespace trilemma::cli
