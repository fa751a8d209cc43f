// The ranges plans print, from held-out errors: for each backend kind (CPU, GPU, NPU) and phase,
// the 10th and 90th percentiles of measured / predicted over predictions whose page was held out
// of every fit (devices/fitted.yaml `ranges`). Their coverage is checked out of sample too: each
// page's points against the bands of the other pages' points. (Splitting by whether the device
// had a calibration of its own, or weighting each page as one, both covered fewer held-out
// points: docs/fidelity.md.)
#pragma once
#include <map>
#include <string>
#include <vector>

#include "calibration/observations.hpp"
#include "fidelity/cross_validation.hpp"
#include "roofline/derating_tables.hpp"

namespace trilemma::fidelity {

// Fewer held-out points than this in a kind and phase: no band (the plan keeps the fitted
// fractions' spread).
inline constexpr std::size_t k_min_band_points = 8;

// Bands from `held_out`'s decode and prefill points, leaving out those of `without_source`.
std::vector<roofline::ErrorBand> error_bands(const calibration::ObservationSet& set, const Report& held_out,
                                             const std::string& without_source = "");

struct Coverage {
  int points = 0, inside = 0;
  double share() const { return points ? double(inside) / points : 0; }
};
// Per "<kind> <phase>" and "all <phase>": the share of held-out points inside the band fitted
// without their page.
std::map<std::string, Coverage> coverage(const calibration::ObservationSet& set, const Report& held_out);

}  // namespace trilemma::fidelity
