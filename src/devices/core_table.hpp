// Per-core throughput of each CPU microarchitecture on each CPU compute path
// (devices/cores.yaml): FP32 and FP16 FMA, int8 dot products, int8 matrix instructions, per
// core and cycle, with sources. Device files name a cluster's `core`; its rates come from here
// unless the file states them.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "types/result.hpp"

namespace trilemma::devices {

// The instruction sets a device's or a core's `isa` may name.
const std::vector<std::string>& isa_names();

struct CoreRates {
  std::string core;  // exactly as device files spell clusters[].core
  std::string isa;
  double fp32_flops_per_cycle = 0;
  std::optional<double> fp16_flops_per_cycle, int8_dot_ops_per_cycle, int8_matmul_ops_per_cycle;
};

Result<std::vector<CoreRates>> parse_core_table(const std::string& yaml_text, const std::string& file);

// The built-in table, parsed once.
Result<const std::vector<CoreRates>*> core_table();

// The row for `core`, or nullptr.
const CoreRates* find_core(const std::vector<CoreRates>& table, const std::string& core);

}  // namespace trilemma::devices
