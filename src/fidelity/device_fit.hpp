// Per-device calibrations over the published dataset: each device with measurements gets the
// factors of its own rows (devices/fitted.yaml's `devices:`), on top of the fitted tables.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "calibration/observations.hpp"
#include "roofline/derating_tables.hpp"

namespace trilemma::fidelity {

struct DeviceFit {
  std::string device;
  devices::Calibration calibration;
};

// One device's calibration, fitted on the observations at `use` (indices into
// set.observations(); those of other devices are ignored) starting from `tables`: bandwidth per
// backend, compute per path, the per-layer overhead, runtime memory. nullopt when none of them
// is a run of the backend's own runtime.
std::optional<DeviceFit> fit_device(const calibration::ObservationSet& set, const std::string& device,
                                    const std::vector<std::size_t>& use, const roofline::DeratingTables& tables,
                                    const std::string& fitted_on);
// fit_device for every device of `set`, on all its observations.
std::vector<DeviceFit> fit_devices(const calibration::ObservationSet& set, const roofline::DeratingTables& tables,
                                   const std::string& fitted_on);

}  // namespace trilemma::fidelity
