// Coordinate search in log space: the fitter behind every calibration (verify --calibrate,
// trilemma calibrate, the fidelity cross-validation). Each parameter in turn moves by a factor
// e^step up or down when that lowers the error (further, across a flat stretch where a bound
// does not bind); a sweep that gains less than 0.1% halves the
// step, so parameters that trade against each other do not zig-zag in tiny gains. Parameters
// stay positive: every fitted quantity (a fraction of peak, a fixed cost in ms) is.
#pragma once
#include <functional>
#include <vector>

namespace trilemma::calibration {

struct Parameter {
  double value = 1;  // start value; > 0
  double lower = 1e-5, upper = 16;
};

// Minimises `error(values)`; returns the error at the values left in `parameters`.
double coordinate_search(std::vector<Parameter>& parameters, const std::function<double(const std::vector<double>&)>& error,
                         double first_step = 0.6931471805599453, double last_step = 1e-3);

// log(predicted / measured), 0 when either is not a positive number (a failed measurement
// informs nothing).
double log_error(double predicted, double measured);

}  // namespace trilemma::calibration
