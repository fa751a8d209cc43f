#include "fidelity/run.hpp"

#include <algorithm>

#include "devices/device_db.hpp"
#include "fidelity/fitted_file.hpp"
#include "models/catalog.hpp"

namespace trilemma::fidelity {

Result<std::unique_ptr<Dataset>> load_dataset(const std::string& dir) {
  auto d = std::make_unique<Dataset>();
  TRILEMMA_TRY(rows, measurements::load_speed_rows(dir));
  TRILEMMA_TRY(devices, devices::builtin_devices());
  TRILEMMA_TRY(models, models::builtin_models());
  d->rows = std::move(rows);
  d->devices = std::move(devices);
  for (auto& dev : d->devices) dev.calibration.reset();
  d->models = std::move(models);
  d->set.emplace(d->rows, d->devices, d->models);
  return d;
}

FigureSummary worst(const std::vector<Report>& reports, calibration::Figure figure) {
  FigureSummary out;
  for (const auto& r : reports) {
    const auto& s = r.figures[static_cast<std::size_t>(figure)];
    if (s.median >= out.median) out.median = s.median, out.bias = s.bias;
    out.p90 = std::max(out.p90, s.p90);
    out.devices = std::max(out.devices, s.devices);
    out.points = std::max(out.points, s.points);
  }
  return out;
}

Result<Outcome> run(const Request& q) {
  const auto step = [&q](const std::string& what) {
    if (q.progress) q.progress(what);
  };
  Outcome out;
  step("costing the published measurements");
  TRILEMMA_TRY(data, load_dataset(q.data));
  out.data = std::move(data);
  const auto& set = *out.data->set;
  if (set.observations().empty())
    return make_error(ErrorKind::input, "data/measurements", "",
                      "no row could be costed (" + std::to_string(set.skipped().size()) + " left out" +
                          (set.skipped().empty() ? "" : "; the first: " + set.skipped().front()) + ")");
  // Priors only: the fit and the cross-validation must not see devices/fitted.yaml, which they
  // are what writes.
  TRILEMMA_TRY(priors, roofline::prior_derating_tables());
  if (q.methods.empty()) out.reports.push_back(with_tables(set, *priors));
  for (std::size_t k = 0; k < q.methods.size(); ++k) {
    step(hold_out_name(q.methods[k]) + " (" + std::to_string(k + 1) + " of " + std::to_string(q.methods.size()) + ")");
    out.reports.push_back(hold_out(set, *priors, q.methods[k], q.threads, k == 0 ? q.only : ""));
  }
  const Report* by_source = nullptr;
  const Report* by_device = nullptr;
  for (std::size_t k = 0; k < q.methods.size(); ++k) {
    if (q.methods[k] == HoldOut::source) by_source = &out.reports[k];
    if (q.methods[k] == HoldOut::device) by_device = &out.reports[k];
  }
  if (by_source && q.only.empty()) out.coverage = coverage(set, *by_source);
  if (q.fit_without || q.write) {
    std::vector<std::size_t> use;
    for (std::size_t i = 0; i < set.observations().size(); ++i)
      if (!q.fit_without || set.observations()[i].device != *q.fit_without) use.push_back(i);
    step("fitting the derating tables");
    out.fit = fit_tables(set, use, *priors);
  }
  if (q.write) {
    if (!by_source || !by_device || !q.only.empty() || (q.fit_without && !q.fit_without->empty()))
      return make_error(ErrorKind::usage, "--write", "",
                        "needs the full leave-one-device-out and leave-one-source-out cross-validations (no --hold-out)");
    set_ranges(*out.fit, set, *by_device);
    out.fit->tables.error_bands = error_bands(set, *by_source);
    const std::string on = std::to_string(out.data->rows.size()) + " published rows, " +
                           std::to_string(set.observations().size()) + " observations on " +
                           std::to_string(set.device_ids().size()) + " devices (data/measurements)";
    out.fitted_yaml = fitted_yaml(*out.fit, fit_devices(set, out.fit->tables, on), on);
  }
  return out;
}

}  // namespace trilemma::fidelity
