// A device as the planner sees it: memory, bandwidth, compute and power, every figure with a
// source. Schema: devices/README.md. Units are in the names (GiB = 2^30 bytes, GB/s = 10^9 B/s).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "types/backend.hpp"
#include "types/compute_path.hpp"
#include "types/cpu_read_kind.hpp"
#include "types/estimate.hpp"

namespace trilemma::devices {

struct CpuCluster {
  std::string kind;  // prime | performance | efficiency
  std::uint32_t cores = 0;
  std::string core;  // microarchitecture
  double clock_ghz = 0;
  double fp32_flops_per_cycle = 0;  // per core
  // Per core and cycle on the other CPU paths (types/compute_path.hpp): from the device file,
  // else from devices/cores.yaml for `core`; absent = the core has no such path.
  std::optional<double> fp16_flops_per_cycle, int8_dot_ops_per_cycle, int8_matmul_ops_per_cycle;
  std::string rates_source;  // where the per-path rates came from
  // Per core and cycle on `path`, nullopt for GPU/NPU paths or when the core lacks it.
  std::optional<double> ops_per_cycle(ComputePath path) const;
};

// Power measured under LLM load on one backend, watts (either phase may be unknown).
struct MeasuredPower {
  std::string backend;
  std::optional<Range> decode_w, prefill_w;
};

// A measured throttling figure: the share of the first minute's speed held after `minutes`.
struct SustainedPoint {
  double minutes = 0;
  Range fraction;
};

struct Source {
  std::vector<std::string> fields;
  std::string url;
  std::string basis;
  std::string note;
};

// Factors that turn datasheet peaks into what one backend achieves on this device, fitted
// from measurements (`verify --calibrate` on the host, `trilemma calibrate` from benchmark
// results). Keys: a weight format name, a compute path name (compute only) or "all".
struct BackendCalibration {
  std::string backend = "cpu";
  std::vector<std::pair<std::string, double>> bandwidth_fraction;  // fraction of peak bandwidth
  std::vector<std::pair<std::string, double>> compute_fraction;    // fraction of the path's peak
  // Decode's matrix-vector products reach a different share of the peak than prefill's
  // matrix products (no reuse of unpacked weights); absent, compute_fraction stands for both.
  std::vector<std::pair<std::string, double>> decode_compute_fraction;
  std::optional<double> overhead_ms;     // fixed per forward pass
  std::optional<double> overhead_us_per_layer;  // fixed per layer of a forward pass
  std::optional<double> runtime_mib;     // resident memory besides weights, KV and scratch
  std::optional<double> scratch_fraction;  // measured scratch / the compute-buffer model
  std::vector<std::pair<std::string, double>> attention_fraction;  // KV format -> fraction of the attention peak (decode)
  // Prefill's attention runs many queries over the same keys and reaches a different rate
  // from decode's one query; absent, attention_fraction stands for both.
  std::vector<std::pair<std::string, double>> prefill_attention_fraction;
  std::optional<double> speculative_round_ms;  // a speculative round's cost beyond its modelled passes
  // The evidence behind each fitted factor ("bandwidth_fraction.all" -> independent sources:
  // pages of the published dataset, result files), and the factors a fit pushed to a physical
  // bound and left out ("bandwidth_fraction.all 0.1 (lower bound) from <rows>"): the tables'
  // value stands for those.
  std::vector<std::pair<std::string, std::uint32_t>> sources;
  std::vector<std::string> at_bound;
};

// One probed figure over its runs: the best is the machine's (interference only slows it).
struct ProbeFigure {
  double best = 0, median = 0, worst = 0;
  std::uint32_t runs = 0;
};
ProbeFigure probe_figure(std::vector<double> runs);  // best = max (rates)

// What `devices probe` measured, beside the figures it set (host profiles).
struct ProbeRecord {
  std::string when;                    // ISO 8601, UTC
  std::optional<double> load_average;  // 1-minute, /proc/loadavg, at the start
  double clock_ghz = 0;                // one core, measured (dependent adds per second)
  ProbeFigure bandwidth_gbps;          // all threads, streaming read, bytes / wall time
  ProbeFigure bandwidth_thread_time_gbps;  // ... summed over threads, bytes / each one's CPU time
  std::string f32_kernel, int8_kernel;  // "avx512 fma", "avx512-vnni dpbusd"
  ProbeFigure f32_one_core, f32_all_cores, int8_one_core, int8_all_cores;  // G(FL)OP/s
  // cores x clock x lanes x ops per lane x pipes, the datasheet way, and how it was formed.
  double f32_theoretical = 0, int8_theoretical = 0;
  std::string f32_theoretical_basis, int8_theoretical_basis;
};

struct Calibration {
  std::string fitted_on;               // what the fit was measured on, and when
  std::vector<std::string> files;      // the result files it read, when it read files
  std::optional<std::uint32_t> points;  // measurements fitted
  // Median absolute relative error of the fitted figures before and after the fit.
  std::optional<double> error_before, error_after;
  std::vector<BackendCalibration> backends;
  const BackendCalibration* find(const std::string& backend) const;
  BackendCalibration& at(const std::string& backend);  // adds the backend when absent
};

struct Device {
  std::string id;
  std::string csv_id;  // row of ../shared/reference/devices.csv it started from, when it did
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
  // What the CPU cores alone were measured to read (STREAM, tinymembench, a read kernel), when
  // published: on many SoCs they reach far less of the DRAM than the GPU does.
  std::optional<double> cpu_read_gbps;
  std::optional<CpuReadKind> cpu_read_kind;  // with cpu_read_gbps: a read-only kernel or a copy
  std::optional<double> os_reserve_gib;

  std::optional<double> tdp_w;
  std::string power_envelope;
  std::optional<double> battery_wh;  // the reference device's battery (phones, laptops)
  std::vector<MeasuredPower> measured_power;  // under LLM load, by backend
  std::vector<SustainedPoint> sustained;      // measured throttling, by minutes

  std::string isa;  // arm64 | x86-64 | xtensa
  std::vector<CpuCluster> clusters;
  std::vector<std::string> cpu_features;

  std::string gpu_name;
  std::optional<double> gpu_fp32_tflops, gpu_fp16_tflops, gpu_fp16_tensor_tflops, gpu_int8_tensor_tops;
  std::optional<double> npu_int8_tops, npu_int4_tops, npu_fp16_tflops;
  std::string npu_note;

  std::vector<std::string> backends;
  std::vector<Source> sources;
  std::string notes;
  std::string origin;  // file it was read from ("devices/x.yaml", "host probe", a path)
  std::optional<Calibration> calibration;
  // Host profiles only: what the probe measured directly.
  std::optional<double> measured_compute_gflops;  // f32 FMA peak, all cores
  std::optional<double> measured_int8_gflops;     // int8 dot peak (quantized weights' path), all cores
  std::optional<ProbeRecord> probe;               // how the probe's figures were measured

  std::uint32_t total_cores() const;
  // Peak FP32 GFLOP/s of all CPU cores: sum of cores x GHz x flops/cycle.
  double cpu_peak_gflops() const;
  bool has_backend(const std::string& backend) const;
  bool has_backend(Backend backend) const;
  // Peak G(FL)OP/s of `path`: CPU paths over the fastest `threads` cores (0 = all; every core
  // used must have the path), GPU and NPU paths from their published figures. nullopt when
  // the device has no such path or no published figure for it.
  std::optional<double> peak_gops(ComputePath path, std::uint32_t threads = 0) const;
};

}  // namespace trilemma::devices
