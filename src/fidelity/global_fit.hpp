// The derating tables fitted to published measurements of many devices: per backend, the
// fraction of peak bandwidth (by device class for the CPU), the fraction of each compute
// path's peak, the per-pass and per-layer overheads, and the runtime's memory. The same
// coordinate search and the same predictor as a device calibration (calibration/fit), with
// each device weighing the same in the least squares whatever its number of rows.
#pragma once
#include <string>
#include <vector>

#include "calibration/observations.hpp"
#include "roofline/derating_tables.hpp"

namespace trilemma::fidelity {

struct FittedValue {
  std::string name;   // "cpu.bandwidth_fraction.phone", "metal.overhead_ms"
  double value = 0;
  int devices = 0;    // devices whose observations inform it
};

struct GlobalFit {
  roofline::DeratingTables tables;
  std::vector<FittedValue> values;
  double error = 0;   // the least-squares objective at the fit
};

// Fits `priors` to the observations at `use` (indices into set.observations()). Devices must
// carry no calibration of their own (the set was built from such copies).
GlobalFit fit_tables(const calibration::ObservationSet& set, const std::vector<std::size_t>& use,
                     const roofline::DeratingTables& priors);

}  // namespace trilemma::fidelity
