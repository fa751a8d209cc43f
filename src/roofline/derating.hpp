// Derating factors: datasheet peak -> what an engine achieves. From devices/derating.yaml (per
// backend) and devices/classes.yaml (per device class), replaced by a device's calibration.
#pragma once
#include <string>

#include "devices/device.hpp"
#include "types/estimate.hpp"

namespace trilemma::roofline {

struct Derating {
  Range bandwidth_fraction;
  Range compute_fraction;
  double overhead_ms = 0;
  double runtime_bytes = 0;
  double scratch_fraction = 1;  // of llama.cpp's compute-buffer model; calibration fits it
  double speculative_round_ms = 0;  // per speculative round, beyond its passes; calibration fits it
  std::string basis;
};

// `weights` is the weight format name; calibrations may hold a fraction per format.
Derating derating_for(const devices::Device& device, const std::string& backend, const std::string& weights);

// Attention over a KV cache of `kv_format` (f16, q8_0, ...): the fraction of the f32 compute
// peak it reaches. devices/derating.yaml's `attention_fraction` per backend (else the backend's
// compute fraction), replaced by a calibration's value for that KV format and phase (a
// calibration without a prefill value uses its decode value for both).
enum class AttentionPhase { decode, prefill };
Range attention_fraction_for(const devices::Device& device, const std::string& backend, const std::string& kv_format,
                             AttentionPhase phase = AttentionPhase::decode);

struct OffloadTier {
  std::string name;
  double read_gbps = 0;
  std::string source;
};
OffloadTier offload_tier_for(const devices::Device& device);

}  // namespace trilemma::roofline
