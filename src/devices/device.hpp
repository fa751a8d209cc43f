// A device as the planner sees it: memory, bandwidth, compute and power, every figure with a
// source. Schema: devices/README.md. Units are in the names (GiB = 2^30 bytes, GB/s = 10^9 B/s).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace trilemma::devices {

struct CpuCluster {
  std::string kind;  // prime | performance | efficiency
  std::uint32_t cores = 0;
  std::string core;  // microarchitecture
  double clock_ghz = 0;
  double fp32_flops_per_cycle = 0;  // per core
};

struct Source {
  std::vector<std::string> fields;
  std::string url;
  std::string basis;
  std::string note;
};

// Factors that turn datasheet peaks into what an engine achieves. Present only on profiles
// written by `verify --calibrate`; otherwise devices/derating.yaml applies.
struct Calibration {
  std::string fitted_on;                 // what the fit was measured on, and when
  std::vector<std::pair<std::string, double>> bandwidth_fraction;  // weight format -> fraction of peak
  std::vector<std::pair<std::string, double>> compute_fraction_by_format;  // weight format -> fraction
  std::optional<double> overhead_ms;     // fixed per-token overhead
  std::optional<double> runtime_mib;     // resident memory besides weights, KV and scratch
  std::optional<double> scratch_fraction;  // measured scratch / the compute-buffer model
  std::vector<std::pair<std::string, double>> attention_fraction;  // KV format -> fraction of f32 compute (decode)
  // Prefill's attention runs many queries over the same keys and reaches a different rate
  // from decode's one query; absent, attention_fraction stands for both.
  std::vector<std::pair<std::string, double>> prefill_attention_fraction;
  std::optional<double> speculative_round_ms;  // a speculative round's cost beyond its modelled passes
};

struct Device {
  std::string id;
  std::string name;
  std::string vendor;
  std::string device_class;  // phone | laptop | desktop | board | module | mcu | gpu

  std::vector<double> ram_options_gib;
  double ram_gib = 0;  // the configuration planned for (default_ram_gib unless overridden)
  bool unified_memory = true;
  std::string memory_type;
  std::optional<double> data_rate_mts;
  std::optional<double> bus_width_bits;
  double peak_bandwidth_gbps = 0;
  std::string bandwidth_basis;  // published | derived | derived-assumed | estimated | measured
  std::optional<double> os_reserve_gib;

  std::optional<double> tdp_w;
  std::string power_envelope;

  std::string isa;  // arm64 | x86-64 | xtensa
  std::vector<CpuCluster> clusters;
  std::vector<std::string> cpu_features;

  std::string gpu_name;
  std::optional<double> gpu_fp32_tflops, gpu_fp16_tflops, gpu_fp16_tensor_tflops;
  std::optional<double> npu_int8_tops;
  std::string npu_note;

  std::vector<std::string> backends;
  std::vector<Source> sources;
  std::string notes;
  std::string origin;  // file it was read from ("devices/x.yaml", "host probe", a path)
  std::optional<Calibration> calibration;
  // Host profiles only: what the probe measured directly.
  std::optional<double> measured_compute_gflops;  // f32 dot kernel, all threads
  std::optional<double> measured_int8_gflops;     // int8 dot kernel (quantized weights), all threads

  std::uint32_t total_cores() const;
  // Peak FP32 GFLOP/s of all CPU cores: sum of cores x GHz x flops/cycle.
  double cpu_peak_gflops() const;
  bool has_backend(const std::string& backend) const;
};

}  // namespace trilemma::devices
