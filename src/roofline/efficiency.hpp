// What a backend reaches on a device: the compute path a weight format's matrix products take
// (the first of the backend's preferences the device has a peak for), the fractions of peak
// bandwidth and of that path's peak, the fixed costs of a pass, and the runtime's memory. From
// devices/derating.yaml (per backend, by device class and compute path), replaced by the
// device's own calibration where it has one for that backend. docs/estimates.md#derating.
#pragma once
#include <optional>
#include <string>

#include "devices/device.hpp"
#include "roofline/derating_tables.hpp"
#include "types/backend.hpp"
#include "types/estimate.hpp"
#include "types/weight_format.hpp"

namespace trilemma::roofline {

// The first of `backend`'s paths for `weights` that `device` has a published peak for.
std::optional<ComputePath> matmul_path(const devices::Device& device, Backend backend, WeightFormat weights);
// The same for one token's matrix-vector products: the first such path that is not a matrix
// unit (types/compute_path.hpp), else the matmul path.
std::optional<ComputePath> matvec_path(const devices::Device& device, Backend backend, WeightFormat weights);
// The path attention over the KV cache runs on.
std::optional<ComputePath> attention_path(const devices::Device& device, Backend backend);

struct Efficiency {
  ComputePath path = ComputePath::cpu_fp32;         // prefill's matrix-matrix products
  ComputePath decode_path = ComputePath::cpu_fp32;  // decode's matrix-vector products (no matrix units)
  double bandwidth_gbps = 0;  // what the fraction is of: the DRAM peak, or the CPU's measured read
  Range bandwidth_fraction;
  Range compute_fraction;    // of the path's peak
  Range decode_compute_fraction;  // of the decode path's peak
  double overhead_ms = 0;    // per forward pass, whatever the model
  double overhead_us_per_layer = 0;
  double runtime_bytes = 0;
  std::uint32_t prefill_chunk = 512;  // prompt tokens per pass (and the scratch's micro-batch)
  double scratch_fraction = 1;      // of the compute-buffer model; calibrations fit it
  double speculative_round_ms = 0;  // per speculative round beyond its passes; calibrations fit it
  bool calibrated = false;          // a device calibration supplied the fractions
  std::string basis;

  // Fixed cost of one forward pass of a model with `layers` layers.
  double pass_overhead_ms(std::uint32_t layers) const { return overhead_ms + overhead_us_per_layer * layers / 1000.0; }
};

// nullopt when `backend` does not run `weights` on `device` (no path with a peak, or a
// format the backend does not run).
std::optional<Efficiency> efficiency(const DeratingTables& tables, const devices::Device& device, Backend backend,
                                     WeightFormat weights, bool with_basis = true);

// Attention over a cache of `kv` in `phase`: the fraction of the attention path's peak it
// reaches. derating.yaml's attention_fraction (else the backend's compute default), replaced by
// a calibration's value for that KV format and phase (a calibration without a prefill value
// uses its decode value for both).
enum class AttentionPhase { decode, prefill, count };
Range attention_fraction(const DeratingTables& tables, const devices::Device& device, Backend backend, TensorType kv,
                         AttentionPhase phase);

const OffloadTier& offload_tier(const DeratingTables& tables, const devices::Device& device);

}  // namespace trilemma::roofline
