// The published dataset's cross-validated fidelity against the thresholds committed beside this
// file, and devices/fitted.yaml against a fresh fit of the same data (a stale file fails).
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include <cmath>

#include "calibration/observations.hpp"
#include "devices/device_db.hpp"
#include "fidelity/cross_validation.hpp"
#include "fidelity/fitted_file.hpp"
#include "models/catalog.hpp"
#include "yaml_file.hpp"

using namespace trilemma;

namespace {

struct Data {
  std::vector<measurements::SpeedRow> rows = measurements::load_speed_rows().value();
  std::vector<devices::Device> devices = [] {
    auto all = devices::builtin_devices().value();
    for (auto& d : all) d.calibration.reset();
    return all;
  }();
  std::vector<models::Model> models = models::builtin_models().value();
  calibration::ObservationSet set{rows, devices, models};
};

Data& data() {
  static Data d;
  return d;
}

// A fitted value by the name global_fit gives it ("cpu.bandwidth_fraction.phone").
double table_value(const roofline::DeratingTables& t, const std::string& name) {
  const auto dot = name.find('.');
  const auto* row = t.find(backend_from_name(name.substr(0, dot)).value());
  REQUIRE(row);
  const std::string rest = name.substr(dot + 1);
  auto after = [&](const std::string& prefix) { return rest.substr(prefix.size()); };
  if (rest.rfind("bandwidth_fraction.", 0) == 0) {
    const auto key = after("bandwidth_fraction.");
    if (const auto kind = cpu_read_kind_from_fraction_key(key)) return row->bandwidth_of_measured[static_cast<std::size_t>(*kind)]->mid;
    return row->bandwidth(key).mid;
  }
  if (rest.rfind("compute_fraction.", 0) == 0) return row->compute(compute_path_from_name(after("compute_fraction.")).value()).mid;
  if (rest.rfind("compute_factor.", 0) == 0) return row->compute_factor(weight_format_from_name(after("compute_factor.")).value());
  if (rest == "overhead_us_per_layer") return row->overhead_us_per_layer;
  if (rest == "runtime_mib") return row->runtime_mib;
  if (rest.rfind("runtime_mib.", 0) == 0) return row->runtime_of(after("runtime_mib.")).value();
  FAIL("unknown fitted value " << name);
  return 0;
}

}  // namespace

TEST_CASE("fidelity: leave-one-device-out errors stay within the committed thresholds", "[fidelity]") {
  auto& d = data();
  const auto report = fidelity::leave_one_device_out(d.set, *roofline::prior_derating_tables().value(), 2);
  const auto limits = testing::load_yaml_file(std::string(TRILEMMA_SOURCE_DIR) + "/tests/fidelity/thresholds.yaml");
  for (auto f : fidelity::k_figures) {
    const auto& s = report.figures[static_cast<std::size_t>(f)];
    const auto limit = limits[fidelity::figure_name(f)];
    CAPTURE(fidelity::figure_name(f), s.devices, s.points, s.median, s.p90, s.bias);
    CHECK(s.devices >= limit["min_devices"].as<int>());
    CHECK(s.median <= limit["median"].as<double>());
    CHECK(s.p90 <= limit["p90"].as<double>());
  }
  // Each held-out device got a prediction for each of its observations.
  std::size_t predicted = 0;
  for (const auto& dev : report.devices)
    for (const auto& e : dev.errors) predicted += e.size();
  CHECK(predicted == report.points.size());
  CHECK(double(report.points.size()) >= 0.9 * double(d.set.observations().size()));
}

TEST_CASE("fidelity: devices/fitted.yaml is what a fit of today's data gives", "[fidelity]") {
  auto& d = data();
  std::vector<std::size_t> all(d.set.observations().size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const auto fit = fidelity::fit_tables(d.set, all, *roofline::prior_derating_tables().value());
  const auto& committed = *roofline::derating_tables().value();
  for (const auto& v : fit.values) {
    CAPTURE(v.name, v.value);
    const double c = table_value(committed, v.name);
    // 4 significant digits in the file; a fit of changed data or code moves more than that.
    CHECK(c == Approx(v.value).epsilon(2e-3).margin(0.6));
  }
  const auto devices = fidelity::fit_devices(d.set, fit.tables, "check");
  for (const auto& dev : devices) {
    CAPTURE(dev.device);
    const auto* c = devices::fitted_calibration(dev.device);
    REQUIRE(c);
    for (const auto& b : dev.calibration.backends) {
      CAPTURE(b.backend);
      const auto* cb = c->find(b.backend);
      REQUIRE(cb);
      REQUIRE(cb->bandwidth_fraction.size() == b.bandwidth_fraction.size());
      for (std::size_t i = 0; i < b.bandwidth_fraction.size(); ++i)
        CHECK(cb->bandwidth_fraction[i].second == Approx(b.bandwidth_fraction[i].second).epsilon(2e-3));
    }
  }
}
