// devices/derating.yaml and devices/fitted.yaml as typed tables: the built-in files load, every
// failure class is an error naming file, line and field, and a fitted overlay replaces exactly
// what it names.
#include <catch2/catch.hpp>

#include "roofline/derating_tables.hpp"
#include "roofline/efficiency.hpp"
#include "devices/device_db.hpp"

using namespace trilemma;
using namespace trilemma::roofline;

namespace {

const std::string k_tiers = R"(offload_tier:
  phone: {name: flash, read_gbps: 4, url: u}
  laptop: {name: ssd, read_gbps: 7, url: u}
  desktop: {name: ssd, read_gbps: 7, url: u}
  board: {name: sd, read_gbps: 0.1, url: u}
  module: {name: ssd, read_gbps: 3.5, url: u}
  mcu: {name: spi, read_gbps: 0.04, url: u}
  gpu: {name: pcie, read_gbps: 25, url: u}
)";

const std::string k_valid = R"(backends:
  cpu:
    bandwidth_fraction:
      default: {low: 0.4, mid: 0.5, high: 0.6}
      phone: {low: 0.3, mid: 0.4, high: 0.5}
      measured_copy: {low: 0.7, mid: 0.8, high: 0.9}
      measured_read: {low: 0.85, mid: 0.9, high: 0.95}
    compute_fraction:
      default: {low: 0.2, mid: 0.25, high: 0.3}
      cpu_int8_matmul: {low: 0.1, mid: 0.15, high: 0.2}
    compute_factor: {q4_k_m: 0.8}
    overhead_ms: 1
    runtime_mib: {default: 100, mcu: 0.5, executorch: 900}
    sources:
      - fields: [bandwidth_fraction]
        basis: "test"
)" + k_tiers;

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

void expect_error(const std::string& text, const std::string& field) {
  auto t = parse_derating_tables(text, "devices/derating.yaml");
  REQUIRE_FALSE(t.ok());
  const std::string msg = t.error().to_string();
  CAPTURE(msg);
  CHECK(msg.rfind("devices/derating.yaml:", 0) == 0);
  CHECK(msg.find(field) != std::string::npos);
  CHECK(t.error().kind == ErrorKind::input);
}

}  // namespace

TEST_CASE("roofline::parse_derating_tables: a valid table, by class, path, format and runtime", "[roofline]") {
  auto t = parse_derating_tables(k_valid, "devices/derating.yaml");
  REQUIRE(t.ok());
  const auto* cpu = t->find(Backend::cpu);
  REQUIRE(cpu);
  CHECK(cpu->bandwidth("phone").mid == 0.4);
  CHECK(cpu->bandwidth("laptop").mid == 0.5);  // the default
  REQUIRE(cpu->bandwidth_of_measured[static_cast<std::size_t>(CpuReadKind::copy)]);
  CHECK(cpu->bandwidth_of_measured[static_cast<std::size_t>(CpuReadKind::copy)]->mid == 0.8);
  REQUIRE(cpu->bandwidth_of_measured[static_cast<std::size_t>(CpuReadKind::read)]);
  CHECK(cpu->bandwidth_of_measured[static_cast<std::size_t>(CpuReadKind::read)]->mid == 0.9);
  CHECK(cpu->compute(ComputePath::cpu_int8_matmul).mid == 0.15);
  CHECK(cpu->compute(ComputePath::cpu_fp32).mid == 0.25);
  CHECK(cpu->compute_factor(WeightFormat::q4_k_m) == 0.8);
  CHECK(cpu->compute_factor(WeightFormat::q8_0) == 1.0);
  CHECK(cpu->runtime("mcu") == 0.5);
  CHECK(cpu->runtime("phone") == 100);
  CHECK(cpu->runtime_of("executorch") == 900.0);
  CHECK_FALSE(cpu->runtime_of("mlx"));
  CHECK_FALSE(t->find(Backend::metal));
  CHECK(t->offload[class_index("board").value()].read_gbps == 0.1);
}

TEST_CASE("roofline::BackendDerating::source_of: the source listing the field, its parent, or the first", "[roofline]") {
  auto t = parse_derating_tables(replace(k_valid, "    sources:\n      - fields: [bandwidth_fraction]\n        basis: \"test\"\n",
                                         "    sources:\n      - fields: [runtime_mib]\n        basis: \"runtime\"\n"
                                         "      - fields: [bandwidth_fraction]\n        basis: \"any class\"\n"
                                         "      - fields: [bandwidth_fraction.phone, bandwidth_fraction.board]\n        url: u\n        note: phones\n"),
                                 "devices/derating.yaml");
  INFO((t.ok() ? "" : t.error().to_string()));
  REQUIRE(t.ok());
  const auto* cpu = t->find(Backend::cpu);
  CHECK(cpu->source_of("bandwidth_fraction.board") == "u (phones)");
  CHECK(cpu->source_of("bandwidth_fraction.laptop") == "any class");  // the parent's
  CHECK(cpu->source_of("overhead_ms") == "runtime");                  // none: the row's first
}

TEST_CASE("roofline::parse_derating_tables: every failure class names file, line and field", "[roofline]") {
  expect_error("backends: [", "malformed YAML");
  expect_error("backends:\n - cpu: {}\n", "backends: expected a mapping, got a list");  // threw before (fuzz finding)
  expect_error(replace(k_valid, "    compute_factor: {q4_k_m: 0.8}", "    compute_factor: [q4_k_m]"), "compute_factor: expected a mapping");
  expect_error(replace(k_valid, "  cpu:\n", "  tpu:\n"), "unknown backend 'tpu'");
  expect_error(replace(k_valid, "      phone: {low", "      phablet: {low"), "unknown device class 'phablet'");
  expect_error(replace(k_valid, "      cpu_int8_matmul:", "      cpu_int9:"), "unknown compute path 'cpu_int9'");
  expect_error(replace(k_valid, "{q4_k_m: 0.8}", "{q4_k_z: 0.8}"), "unknown weight format 'q4_k_z'");
  expect_error(replace(k_valid, "{low: 0.4, mid: 0.5, high: 0.6}", "{low: 0.6, mid: 0.5, high: 0.4}"),
               "needs low <= mid <= high");
  expect_error(replace(k_valid, "{low: 0.4, mid: 0.5, high: 0.6}", "{low: -1, mid: 0.5, high: 0.6}"), "low");
  expect_error(replace(k_valid, "    overhead_ms: 1\n", ""), "overhead_ms");
  expect_error(replace(k_valid, "    runtime_mib: {default: 100, mcu: 0.5, executorch: 900}\n", ""), "runtime_mib");
  expect_error(replace(k_valid, "    overhead_ms: 1\n", "    overhead_ms: 1\n    overhed_ms: 2\n"), "overhed_ms");
  expect_error(replace(k_valid, "    sources:\n      - fields: [bandwidth_fraction]\n        basis: \"test\"\n", "    sources: []\n"),
               "sources");
  expect_error(replace(k_valid, "  gpu: {name: pcie, read_gbps: 25, url: u}\n", ""), "offload_tier.gpu");
  expect_error(replace(k_valid, "      default: {low: 0.2, mid: 0.25, high: 0.3}\n", ""), "compute_fraction.default");
}

TEST_CASE("roofline::apply_fitted: a fitted overlay replaces what it names and keeps the rest", "[roofline]") {
  auto t = parse_derating_tables(k_valid, "devices/derating.yaml");
  REQUIRE(t.ok());
  const std::string fitted = R"(fitted_on: "test rows"
backends:
  cpu:
    bandwidth_fraction:
      phone: {low: 0.35, mid: 0.45, high: 0.55}
    overhead_ms: 0
    overhead_us_per_layer: 120
devices:
  some-device: {fitted_on: x}
)";
  REQUIRE(apply_fitted(fitted, "devices/fitted.yaml", *t).ok());
  const auto* cpu = t->find(Backend::cpu);
  CHECK(cpu->bandwidth("phone").mid == 0.45);
  CHECK(cpu->bandwidth("laptop").mid == 0.5);
  CHECK(cpu->overhead_ms == 0);
  CHECK(cpu->overhead_us_per_layer == 120);
  CHECK(cpu->compute(ComputePath::cpu_int8_matmul).mid == 0.15);
  CHECK(cpu->source_of("bandwidth_fraction.phone") == "fitted: test rows (devices/fitted.yaml); priors: test");
  // A backend the priors lack, and a misspelt key, are errors naming the fitted file.
  auto bad = apply_fitted(replace(fitted, "  cpu:\n", "  metal:\n"), "devices/fitted.yaml", *t);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().to_string().rfind("devices/fitted.yaml:", 0) == 0);
  bad = apply_fitted(replace(fitted, "    overhead_ms: 0\n", "    overhead: 0\n"), "devices/fitted.yaml", *t);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().to_string().find("overhead") != std::string::npos);
}

TEST_CASE("roofline::apply_fitted: ranges are held-out error bands per backend kind and phase", "[roofline]") {
  auto t = parse_derating_tables(k_valid, "devices/derating.yaml");
  REQUIRE(t.ok());
  const std::string fitted = R"(fitted_on: "test rows"
backends: {}
ranges:
  - {kind: cpu, phase: decode, low: 0.6, high: 1.3, points: 150}
  - {kind: npu, phase: prefill, low: 0.7, high: 1.5, points: 70}
)";
  REQUIRE(apply_fitted(fitted, "devices/fitted.yaml", *t).ok());
  const auto* band = t->error_band(BackendKind::cpu, Phase::decode);
  REQUIRE(band);
  CHECK(band->low == 0.6);
  CHECK(band->high == 1.3);
  CHECK(band->points == 150u);
  CHECK(t->error_band(BackendKind::npu, Phase::prefill));
  CHECK_FALSE(t->error_band(BackendKind::gpu, Phase::decode));
  // A band must hold the prediction (low <= 1 <= high); the error names the row.
  auto bad = apply_fitted(replace(fitted, "low: 0.6", "low: 1.1"), "devices/fitted.yaml", *t);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().to_string().find("ranges[0]") != std::string::npos);
  bad = apply_fitted(replace(fitted, "kind: cpu", "kind: tpu"), "devices/fitted.yaml", *t);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().to_string().find("ranges[0].kind") != std::string::npos);
}

TEST_CASE("roofline: the built-in tables load and every backend but NNAPI has a row", "[roofline]") {
  auto priors = prior_derating_tables();
  REQUIRE(priors.ok());
  auto merged = derating_tables();
  REQUIRE(merged.ok());
  for (const auto& b : backends()) {
    CAPTURE(b.name);
    CHECK(((*merged)->find(b.backend) != nullptr) == (b.backend != Backend::nnapi));
  }
  REQUIRE(devices::class_table().ok());
  CHECK((*devices::class_table())->size() == 7);
}

TEST_CASE("roofline::efficiency: the compute path follows the weight format and the device", "[roofline]") {
  const auto tables = *parse_derating_tables(k_valid, "devices/derating.yaml");
  // The Snapdragon 8 Gen 3's cores have FP16 FMA, SDOT and SMMLA (devices/cores.yaml).
  auto phone = devices::resolve_device("snapdragon-8-gen-3").value();
  phone.calibration.reset();
  const auto q4 = efficiency(tables, phone, Backend::cpu, WeightFormat::q4_0).value();
  CHECK(q4.path == ComputePath::cpu_int8_matmul);
  CHECK(q4.decode_path == ComputePath::cpu_int8_dot);  // SMMLA needs two activation rows
  CHECK(q4.compute_fraction.mid == 0.15);
  CHECK(q4.decode_compute_fraction.mid == 0.25);
  CHECK(efficiency(tables, phone, Backend::cpu, WeightFormat::f16)->path == ComputePath::cpu_fp16);
  CHECK(efficiency(tables, phone, Backend::cpu, WeightFormat::f32)->path == ComputePath::cpu_fp32);
  // Only the formats llama.cpp has an SMMLA kernel for take it; the others multiply on SDOT.
  CHECK(efficiency(tables, phone, Backend::cpu, WeightFormat::q8_0)->path == ComputePath::cpu_int8_matmul);
  CHECK(efficiency(tables, phone, Backend::cpu, WeightFormat::q4_k_m)->path == ComputePath::cpu_int8_matmul);
  for (const auto w : {WeightFormat::q2_k, WeightFormat::q3_k_m, WeightFormat::q5_k_m, WeightFormat::q6_k, WeightFormat::iq2_xs}) {
    CAPTURE(info(w).name);
    const auto e = efficiency(tables, phone, Backend::cpu, w).value();
    CHECK(e.path == ComputePath::cpu_int8_dot);
    CHECK(e.decode_path == ComputePath::cpu_int8_dot);
  }
  // Q4_K_M costs its factor on top of the path's fraction.
  CHECK(efficiency(tables, phone, Backend::cpu, WeightFormat::q4_k_m)->compute_fraction.mid == Approx(0.15 * 0.8));
  CHECK(efficiency(tables, phone, Backend::cpu, WeightFormat::q4_0)->runtime_bytes == 100 * 1048576.0);
  // A Cortex-A72 has neither FP16 arithmetic nor an int8 dot product: F16 takes the FP32 path,
  // integer formats the widening multiply, whose peak is the FP32 FMA rate and whose fraction is
  // its own (the default here, as k_valid gives it none).
  auto pi4 = devices::resolve_device("raspberry-pi-4").value();
  pi4.calibration.reset();
  const auto pi4_q4 = efficiency(tables, pi4, Backend::cpu, WeightFormat::q4_0).value();
  CHECK(pi4_q4.path == ComputePath::cpu_int8_widen);
  CHECK(pi4_q4.decode_path == ComputePath::cpu_int8_widen);
  CHECK(pi4.peak_gops(ComputePath::cpu_int8_widen) == pi4.peak_gops(ComputePath::cpu_fp32));
  CHECK(efficiency(tables, pi4, Backend::cpu, WeightFormat::f16)->path == ComputePath::cpu_fp32);
  // Every core can widen, but a core with a dot product is costed on that: the Snapdragon 8
  // Gen 3's Q4_0 stayed on SMMLA and SDOT above, though the widening path has a peak there too.
  CHECK(phone.peak_gops(ComputePath::cpu_int8_widen).has_value());
  // The Snapdragon 8 Elite's Oryon cores list dotprod and i8mm; devices/cores.yaml now gives
  // them rates (assumed equal to Oryon 1st gen), so their int8 formats take those paths.
  auto elite = devices::resolve_device("snapdragon-8-elite").value();
  elite.calibration.reset();
  CHECK(efficiency(tables, elite, Backend::cpu, WeightFormat::q4_0)->path == ComputePath::cpu_int8_matmul);
  CHECK(efficiency(tables, elite, Backend::cpu, WeightFormat::q4_0)->decode_path == ComputePath::cpu_int8_dot);
  // Its measured CPU read bandwidth, not the DRAM peak, is what the fraction applies to: the
  // fraction for a read-only kernel's figure (tinymembench), where a STREAM Copy figure (the
  // RK3588's) takes the copy fraction.
  REQUIRE(pi4.cpu_read_gbps);
  REQUIRE(pi4.cpu_read_kind == CpuReadKind::read);
  CHECK(efficiency(tables, pi4, Backend::cpu, WeightFormat::q4_0)->bandwidth_gbps == *pi4.cpu_read_gbps);
  CHECK(efficiency(tables, pi4, Backend::cpu, WeightFormat::q4_0)->bandwidth_fraction.mid == 0.9);
  auto rk3588 = devices::resolve_device("rk3588").value();
  rk3588.calibration.reset();
  REQUIRE(rk3588.cpu_read_kind == CpuReadKind::copy);
  CHECK(efficiency(tables, rk3588, Backend::cpu, WeightFormat::q4_0)->bandwidth_gbps == *rk3588.cpu_read_gbps);
  CHECK(efficiency(tables, rk3588, Backend::cpu, WeightFormat::q4_0)->bandwidth_fraction.mid == 0.8);
  // No row for the backend, or a format it does not run: no efficiency.
  CHECK_FALSE(efficiency(tables, phone, Backend::qnn, WeightFormat::w4a16));
  const auto merged = *derating_tables().value();
  CHECK(efficiency(merged, phone, Backend::qnn, WeightFormat::w4a16));
  CHECK_FALSE(efficiency(merged, phone, Backend::qnn, WeightFormat::q4_k_m));
}

TEST_CASE("roofline::efficiency: a format the calibration did not measure moves with the ones it did", "[roofline]") {
  const auto tables = *parse_derating_tables(k_valid, "devices/derating.yaml");
  auto phone = devices::resolve_device("snapdragon-8-gen-3").value();
  phone.calibration.reset();
  const auto prior_q8 = efficiency(tables, phone, Backend::cpu, WeightFormat::q8_0).value();
  const auto prior_k = efficiency(tables, phone, Backend::cpu, WeightFormat::q4_k_m).value();
  // Only Q4_0 was measured, at a fifth of the tables' bandwidth and half their compute.
  devices::Calibration c;
  c.fitted_on = "test";
  auto& cpu = c.at("cpu");
  cpu.bandwidth_fraction = {{"q4_0", 0.4 / 5}};
  cpu.compute_fraction = {{"q4_0", 0.15 / 2}};
  cpu.decode_compute_fraction = {{"q4_0", 0.25 / 4}};
  phone.calibration = c;
  const auto q4 = efficiency(tables, phone, Backend::cpu, WeightFormat::q4_0).value();
  CHECK(q4.bandwidth_fraction.mid == Approx(0.08));
  // Q8_0 and Q4_K_M keep their own priors' shape (path, format factor) scaled as Q4_0 was.
  const auto q8 = efficiency(tables, phone, Backend::cpu, WeightFormat::q8_0).value();
  CHECK(q8.calibrated);
  CHECK(q8.bandwidth_fraction.mid == Approx(prior_q8.bandwidth_fraction.mid / 5));
  CHECK(q8.compute_fraction.mid == Approx(prior_q8.compute_fraction.mid / 2));
  CHECK(q8.decode_compute_fraction.mid == Approx(prior_q8.decode_compute_fraction.mid / 4));
  const auto k = efficiency(tables, phone, Backend::cpu, WeightFormat::q4_k_m).value();
  CHECK(k.compute_fraction.mid == Approx(prior_k.compute_fraction.mid / 2));
  CHECK(k.compute_fraction.mid == Approx(0.15 * 0.8 / 2));
  // Two measured formats: the geometric mean of their ratios.
  phone.calibration->at("cpu").bandwidth_fraction = {{"q4_0", 0.4 / 5}, {"q8_0", 0.4 / 20}};
  CHECK(efficiency(tables, phone, Backend::cpu, WeightFormat::f16)->bandwidth_fraction.mid == Approx(0.4 / 10));
  // A figure for "all" or the path still wins over the transfer.
  phone.calibration->at("cpu").bandwidth_fraction = {{"q4_0", 0.08}, {"all", 0.3}};
  CHECK(efficiency(tables, phone, Backend::cpu, WeightFormat::f16)->bandwidth_fraction.mid == Approx(0.3));
}
