// `trilemma fidelity` (speed and memory) as one call: the published dataset loaded as the fit
// sees it (devices without their calibrations, the priors without devices/fitted.yaml), each
// requested cross-validation, the error bands and their out-of-sample coverage, and, for
// --write, devices/fitted.yaml's text.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibration/observations.hpp"
#include "fidelity/cross_validation.hpp"
#include "fidelity/error_bands.hpp"
#include "fidelity/global_fit.hpp"
#include "types/result.hpp"

namespace trilemma::fidelity {

// data/measurements (or `dir`) with the devices and models it names, the devices stripped of
// their calibrations (predictions for devices without data of their own).
struct Dataset {
  std::vector<measurements::SpeedRow> rows;
  std::vector<devices::Device> devices;
  std::vector<models::Model> models;
  std::optional<calibration::ObservationSet> set;  // built last, over the three above
};
Result<std::unique_ptr<Dataset>> load_dataset(const std::string& dir = "");

struct Request {
  std::string data;                  // empty: the built-in data/measurements
  std::vector<HoldOut> methods;      // empty: the priors as they are, nothing held out
  unsigned threads = 2;
  std::string only;                  // one group of the first method (a device, a page, an engine)
  std::optional<std::string> fit_without;  // fit the tables on every device but this one ("" = all)
  bool write = false;                // also produce devices/fitted.yaml's text
  // Called before each step that takes seconds ("leave-one-source-out (2 of 3)"); may be empty.
  std::function<void(const std::string& step)> progress;
};

struct Outcome {
  std::unique_ptr<Dataset> data;
  std::vector<Report> reports;                    // one per requested method, in order; "priors" alone when none
  std::map<std::string, Coverage> coverage;       // of the leave-one-source-out bands, when that ran
  std::optional<GlobalFit> fit;                   // with fit_without or write
  std::string fitted_yaml;                        // with write
};

// REQUIRES for write: methods hold device and source, and `only` is empty.
Result<Outcome> run(const Request& request);

// The worst of the reports' figures: per figure, the largest median and the largest p90.
FigureSummary worst(const std::vector<Report>& reports, calibration::Figure figure);

}  // namespace trilemma::fidelity
