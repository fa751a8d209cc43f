// devices/derating.yaml as typed tables, read once and strictly (unknown keys, bad names and
// out-of-range values are errors naming file, line and field): per backend, the fractions of
// peak bandwidth (by device class) and of each compute path's peak that engines reach, the
// fixed cost of a forward pass, and the runtime's own memory (by device class); per device
// class, the slower tier KV offload spills to. Every figure carries a source in the file.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "types/backend.hpp"
#include "types/compute_path.hpp"
#include "types/cpu_read_kind.hpp"
#include "types/estimate.hpp"
#include "types/result.hpp"
#include "types/weight_format.hpp"

namespace trilemma::roofline {

// Device classes as devices/README.md defines them; tables keyed by class list them all.
inline constexpr auto k_device_classes = std::to_array<const char*>({"phone", "laptop", "desktop", "board", "module", "mcu", "gpu"});
std::optional<std::size_t> class_index(const std::string& device_class);

struct BackendDerating {
  Range bandwidth_fraction;                                   // default over classes
  std::array<std::optional<Range>, k_device_classes.size()> bandwidth_by_class;
  // CPU backends on a device whose cores' read bandwidth was measured: a fraction of that
  // measurement instead of the class's fraction of the DRAM peak, one per kind of measurement
  // (`measured_read`, `measured_copy`; types/cpu_read_kind.hpp).
  std::array<std::optional<Range>, k_cpu_read_kinds.size()> bandwidth_of_measured;
  Range compute_fraction;                                     // default over paths
  std::array<std::optional<Range>, static_cast<std::size_t>(ComputePath::count)> compute_by_path;
  // A weight format's matrix products cost more or less than its path's reference format (Q4_K
  // unpacks 6-bit scales per sub-block, F16 on an FP32 path converts every weight): a factor on
  // the compute fraction, 1 when absent.
  std::array<std::optional<double>, static_cast<std::size_t>(WeightFormat::count)> compute_factor_by_format;
  std::optional<Range> attention_fraction;                    // of the attention path's peak; absent = compute default
  double overhead_ms = 0;            // per forward pass
  double overhead_us_per_layer = 0;  // per layer of a forward pass (kernel launches, thread syncs)
  double runtime_mib = 0;  // the backend's own runtime
  std::array<std::optional<double>, k_device_classes.size()> runtime_by_class;
  std::vector<std::pair<std::string, double>> runtime_by_engine;  // other runtimes on this backend
  // Prompt tokens per prefill pass where a class of device runs another kind of runtime (MCUs
  // run llama2.c ports, one token at a time); absent = the backend's (types/backend.hpp).
  std::array<std::optional<std::uint32_t>, k_device_classes.size()> prefill_chunk_by_class;
  // Another runtime's prefill pass on this backend (the reference engine's 64 tokens).
  std::vector<std::pair<std::string, std::uint32_t>> prefill_chunk_by_engine;
  // Each source's text (url (note), or basis) with the fields it covers, in file order; and,
  // when devices/fitted.yaml overlays the row, what the fit was made on.
  std::vector<std::pair<std::vector<std::string>, std::string>> sources;
  std::string fitted_on;

  Range bandwidth(const std::string& device_class) const;
  Range compute(ComputePath path) const;
  double compute_factor(WeightFormat format) const;
  double runtime(const std::string& device_class) const;
  // Another runtime's memory on this backend, when known.
  std::optional<double> runtime_of(const std::string& engine) const;
  // The source of `field` ("bandwidth_fraction.phone"): the first that lists it, else the first
  // that lists its parent ("bandwidth_fraction"), else the row's first; after the fit, if any.
  std::string source_of(const std::string& field) const;
  // Another runtime's prompt tokens per prefill pass on this backend, when known.
  std::optional<std::uint32_t> prefill_chunk_of(const std::string& engine) const;
};

struct OffloadTier {
  std::string name;
  double read_gbps = 0;
  std::string source;
};

// How far published measurements fall from trilemma's predictions when the page they come from
// was held out of every fit (devices/fitted.yaml `ranges`, written from the leave-one-source-out
// residuals): measured / predicted at the 10th and 90th percentiles, per backend kind and phase.
// A figure's printed range is its prediction times these, so 80% of measurements like the
// held-out ones fall inside.
enum class Phase : std::uint8_t { decode, prefill };
struct ErrorBand {
  BackendKind kind = BackendKind::cpu;
  Phase phase = Phase::decode;
  double low = 1, high = 1;  // measured / predicted
  std::uint32_t points = 0;  // held-out measurements behind it
};

struct DeratingTables {
  std::array<std::optional<BackendDerating>, static_cast<std::size_t>(Backend::count)> backends;
  std::array<OffloadTier, k_device_classes.size()> offload;
  std::vector<ErrorBand> error_bands;
  const BackendDerating* find(Backend backend) const;
  const ErrorBand* error_band(BackendKind kind, Phase phase) const;
};

Result<DeratingTables> parse_derating_tables(const std::string& yaml_text, const std::string& file);

// devices/fitted.yaml (written by `trilemma fidelity --write`): values fitted to the published
// measurements, set on top of `tables`; its `devices` section is device_db's.
Status apply_fitted(const std::string& yaml_text, const std::string& file, DeratingTables& tables);

// devices/derating.yaml alone, parsed once: the priors a fit starts from.
Result<const DeratingTables*> prior_derating_tables();
// The priors with devices/fitted.yaml applied, parsed once: what plans use.
Result<const DeratingTables*> derating_tables();

}  // namespace trilemma::roofline
