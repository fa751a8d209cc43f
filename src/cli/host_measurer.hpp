// The host probe's measurements, made with the engine's own kernels and thread pool.
#pragma once
#include "devices/host_probe.hpp"
#include "engine/runtime/host_measure.hpp"

namespace trilemma::cli {

inline devices::HostMeasurer engine_measurer() {
  devices::HostMeasurer m;
  m.read_bandwidth_gbps = [](int threads) {
    return engine::measure_read_bandwidth_gbps(std::size_t(1) << 30, threads, 5);
  };
  m.compute = [](int threads, double& f32, double& int8, std::string& isa) {
    const auto r = engine::measure_compute(threads, 5);
    f32 = r.f32_gflops;
    int8 = r.int8_gflops;
    isa = r.isa;
  };
  return m;
}

}  // namespace trilemma::cli
