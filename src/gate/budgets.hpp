// The budgets file `trilemma gate` checks model releases against (schema: docs/budgets.md).
// Read strictly with io::FieldReader: unknown keys, wrong types, missing fields, negative values,
// unknown devices, scenarios and weight formats are errors naming file, line:column and field.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "devices/device.hpp"
#include "solver/profile.hpp"
#include "types/weight_format.hpp"
#include "types/result.hpp"

namespace trilemma::gate {

inline constexpr int k_budgets_version = 1;

// Limits a plan must meet; unset ones are not checked. Units in the names; figures are the
// estimate's mid values (what `plan` ranks on).
struct Limits {
  std::optional<double> min_decode_tok_s;
  std::optional<double> max_ttft_ms;
  std::optional<double> max_memory_gib;
  std::optional<double> max_loss_points;
  std::optional<double> max_kld;
  std::optional<double> max_joules_per_token;  // per generated token (docs/power.md)
};

// Weight formats a release may ship in: bits per weight of the bulk tensor type, and/or a list.
struct WeightRange {
  std::optional<double> min_bits, max_bits;
  std::vector<std::string> allowed;  // empty = any
};

struct Budget {
  std::string name;      // unique id, names the JUnit testcase
  std::string device;    // device id, device YAML path or "host", as written
  std::string scenario;  // latency | memory | accuracy | profile YAML path
  std::uint32_t context = 0;
  std::uint32_t prompt = 0;  // 0 = the scenario's default
  std::optional<double> ram_gib;
  Limits limits;
  WeightRange weights;
  int line = 0;          // line of the budget's entry in the file (GitHub annotations)
  // Resolved while loading:
  devices::Device resolved_device;
  solver::Profile profile;
  std::vector<std::string> weight_formats;  // formats the range allows, in table order; empty = any
};

struct BudgetFile {
  std::string path;
  std::vector<Budget> budgets;
};

// Parses and resolves a budgets file. REQUIRES: devices::set_host_prober for budgets on `host`
// without a cached host profile.
Result<BudgetFile> parse_budgets(const std::string& yaml_text, const std::string& file);
Result<BudgetFile> load_budgets(const std::string& path);

// Bits per weight the range compares: the bulk tensor type of the format, scales included.
double weight_bits(WeightFormat format);

}  // namespace trilemma::gate
