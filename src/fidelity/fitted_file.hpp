// devices/fitted.yaml: what `trilemma fidelity --write` fits to the published measurements,
// in the form the planner reads back (roofline::apply_fitted, devices::fitted_calibration):
//   backends: the derating tables' fitted values on top of devices/derating.yaml, each fraction
//             with a low-high range from the leave-one-device-out errors of its backend (the
//             range that held 80% of the held-out devices' points);
//   devices:  one calibration per device with measurements, fitted on its own rows.
#pragma once
#include <string>
#include <vector>

#include "calibration/observations.hpp"
#include "fidelity/cross_validation.hpp"
#include "fidelity/device_fit.hpp"
#include "fidelity/global_fit.hpp"

namespace trilemma::fidelity {

// Ranges for the fitted fractions from the held-out errors; sets them in `fit.tables`.
void set_ranges(GlobalFit& fit, const calibration::ObservationSet& set, const Report& held_out);

std::string fitted_yaml(const GlobalFit& fit, const std::vector<DeviceFit>& devices, const std::string& fitted_on);

}  // namespace trilemma::fidelity
