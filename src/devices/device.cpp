#include "devices/device.hpp"

#include <algorithm>

namespace trilemma::devices {

std::optional<double> CpuCluster::ops_per_cycle(ComputePath path) const {
  switch (path) {
    case ComputePath::cpu_fp32: return fp32_flops_per_cycle > 0 ? std::optional(fp32_flops_per_cycle) : std::nullopt;
    case ComputePath::cpu_fp16: return fp16_flops_per_cycle;
    case ComputePath::cpu_int8_dot: return int8_dot_ops_per_cycle;
    case ComputePath::cpu_int8_matmul: return int8_matmul_ops_per_cycle;
    case ComputePath::cpu_int8_widen: return fp32_flops_per_cycle > 0 ? std::optional(fp32_flops_per_cycle) : std::nullopt;
    default: return std::nullopt;
  }
}

std::uint32_t Device::total_cores() const {
  std::uint32_t n = 0;
  for (const auto& c : clusters) n += c.cores;
  return n;
}

double Device::cpu_peak_gflops() const { return peak_gops(ComputePath::cpu_fp32).value_or(0); }

const BackendCalibration* Calibration::find(const std::string& backend) const {
  for (const auto& b : backends)
    if (b.backend == backend) return &b;
  return nullptr;
}

BackendCalibration& Calibration::at(const std::string& backend) {
  for (auto& b : backends)
    if (b.backend == backend) return b;
  backends.push_back({});
  backends.back().backend = backend;
  return backends.back();
}

bool Device::has_backend(const std::string& backend) const {
  return std::find(backends.begin(), backends.end(), backend) != backends.end();
}

bool Device::has_backend(Backend backend) const { return has_backend(std::string(info(backend).name)); }

std::optional<double> Device::peak_gops(ComputePath path, std::uint32_t threads) const {
  auto tera = [](const std::optional<double>& t) { return t ? std::optional(*t * 1000.0) : std::nullopt; };
  switch (path) {
    case ComputePath::gpu_fp32: return tera(gpu_fp32_tflops);
    case ComputePath::gpu_fp16: return tera(gpu_fp16_tflops);
    case ComputePath::gpu_tensor_fp16: return tera(gpu_fp16_tensor_tflops);
    case ComputePath::gpu_tensor_int8: return tera(gpu_int8_tensor_tops);
    case ComputePath::npu_fp16: return tera(npu_fp16_tflops);
    case ComputePath::npu_int8: return tera(npu_int8_tops);
    case ComputePath::npu_int4: return tera(npu_int4_tops);
    default: break;
  }
  // Clusters are listed fastest first; a run of `threads` threads takes the fastest cores.
  double g = 0;
  std::uint32_t left = threads ? threads : total_cores();
  for (const auto& c : clusters) {
    if (left == 0) break;
    const auto rate = c.ops_per_cycle(path);
    if (!rate) return std::nullopt;
    const std::uint32_t use = std::min(left, c.cores);
    g += use * c.clock_ghz * *rate;
    left -= use;
  }
  if (g <= 0) return std::nullopt;
  return g;
}

}  // namespace trilemma::devices

namespace trilemma::devices {

ProbeFigure probe_figure(std::vector<double> runs) {
  ProbeFigure f;
  if (runs.empty()) return f;
  std::sort(runs.begin(), runs.end());
  f.worst = runs.front();
  f.best = runs.back();
  f.median = runs[runs.size() / 2];
  f.runs = static_cast<std::uint32_t>(runs.size());
  return f;
}

}  // namespace trilemma::devices
