#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <regex>
#include <set>

#include "devices/core_table.hpp"
#include "devices/device_db.hpp"
#include "devices/device_loader.hpp"
#include "yaml_file.hpp"

using namespace trilemma;

namespace {

const std::string k_valid = R"(id: test-board
name: Test Board
vendor: Nobody
class: board
memory:
  ram_options_gib: [4, 8]
  default_ram_gib: 8
  unified: true
  type: LPDDR4X-4267
  peak_bandwidth_gbps: 17.1
  bandwidth_basis: derived
cpu:
  isa: arm64
  clusters:
    - kind: performance
      cores: 4
      core: Cortex-A76
      clock_ghz: 2.4
      fp32_flops_per_cycle: 16
backends: [cpu]
sources:
  - fields: [memory]
    url: https://example.org/spec
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

// Parses `text` and expects an error whose message names `field` at a line.
void expect_error(const std::string& text, const std::string& field) {
  auto d = devices::parse_device(text, "devices/test-board.yaml", "test-board");
  REQUIRE_FALSE(d.ok());
  const std::string msg = d.error().to_string();
  CAPTURE(msg);
  CHECK(msg.rfind("devices/test-board.yaml:", 0) == 0);
  CHECK(msg.find(field) != std::string::npos);
  CHECK(d.error().kind == ErrorKind::input);
}

}  // namespace

TEST_CASE("devices::parse_device: a valid file", "[devices]") {
  auto d = devices::parse_device(k_valid, "devices/test-board.yaml", "test-board");
  REQUIRE(d.ok());
  CHECK(d->cpu_peak_gflops() == Approx(4 * 2.4 * 16));
  CHECK(d->peak_bandwidth_gbps == 17.1);
}

TEST_CASE("devices::parse_device: one fixture per failure class names file, line and field", "[devices]") {
  SECTION("malformed syntax") {
    auto d = devices::parse_device("id: [unclosed\n", "devices/x.yaml", "x");
    REQUIRE_FALSE(d.ok());
    CHECK(std::regex_search(d.error().to_string(), std::regex("^devices/x.yaml:\\d+:\\d+: malformed YAML")));
  }
  SECTION("wrong type") { expect_error(replace(k_valid, "peak_bandwidth_gbps: 17.1", "peak_bandwidth_gbps: fast"), "memory.peak_bandwidth_gbps: expected a number"); }
  SECTION("missing field") { expect_error(replace(k_valid, "  peak_bandwidth_gbps: 17.1\n", ""), "memory.peak_bandwidth_gbps: required field is missing"); }
  SECTION("negative value") { expect_error(replace(k_valid, "peak_bandwidth_gbps: 17.1", "peak_bandwidth_gbps: -5"), "memory.peak_bandwidth_gbps: must be > 0, got -5"); }
  SECTION("zero value") { expect_error(replace(k_valid, "clock_ghz: 2.4", "clock_ghz: 0"), "cpu.clusters[0].clock_ghz: must be > 0"); }
  SECTION("unknown key") { expect_error(replace(k_valid, "vendor: Nobody", "vendor: Nobody\nvendr: typo"), "vendr: unknown key"); }
  SECTION("bad enum") { expect_error(replace(k_valid, "class: board", "class: toaster"), "class: unknown value 'toaster'"); }
  SECTION("unknown backend") { expect_error(replace(k_valid, "backends: [cpu]", "backends: [cpu, warp]"), "backends[1]: unknown backend"); }
  SECTION("id does not match the file") { expect_error(replace(k_valid, "id: test-board", "id: other-board"), "does not match the file name"); }
  SECTION("id not hyphenated") { expect_error(replace(k_valid, "id: test-board", "id: Test_Board"), "not a lowercase hyphenated id"); }
  SECTION("source without url or basis") { expect_error(replace(k_valid, "    url: https://example.org/spec\n", "    note: trust me\n"), "a source needs a url or a basis"); }
  SECTION("not a mapping") { expect_error("- just\n- a list\n", "expected a mapping"); }
  SECTION("a CPU read measurement without its kind, or a kind without it") {
    expect_error(replace(k_valid, "  bandwidth_basis: derived\n", "  bandwidth_basis: derived\n  cpu_read_gbps: 9\n"),
                 "memory.cpu_read_kind: required field is missing");
    expect_error(replace(k_valid, "  bandwidth_basis: derived\n", "  bandwidth_basis: derived\n  cpu_read_kind: read\n"),
                 "memory.cpu_read_kind: says how cpu_read_gbps was measured, and there is no cpu_read_gbps");
    expect_error(replace(k_valid, "  bandwidth_basis: derived\n", "  bandwidth_basis: derived\n  cpu_read_gbps: 9\n  cpu_read_kind: triad\n"),
                 "memory.cpu_read_kind: unknown value 'triad'");
  }
}

TEST_CASE("devices::parse_device: a CPU read measurement says whether it read or copied", "[devices]") {
  auto d = devices::parse_device(replace(k_valid, "  bandwidth_basis: derived\n", "  bandwidth_basis: derived\n  cpu_read_gbps: 9\n  cpu_read_kind: copy\n"),
                                 "devices/test-board.yaml", "test-board");
  REQUIRE(d.ok());
  CHECK(d->cpu_read_gbps == 9.0);
  CHECK(d->cpu_read_kind == CpuReadKind::copy);
  auto back = devices::parse_device(devices::device_to_yaml(*d), "round-trip", "test-board");
  REQUIRE(back.ok());
  CHECK(back->cpu_read_kind == CpuReadKind::copy);
  CHECK_FALSE(devices::parse_device(k_valid, "devices/test-board.yaml", "test-board")->cpu_read_kind);
}

TEST_CASE("devices::builtin_devices: the database loads, 35+ devices from MCU to GPU", "[devices]") {
  auto all = devices::builtin_devices();
  REQUIRE(all.ok());
  CHECK(all->size() >= 35);
  std::set<std::string> classes, ids;
  for (const auto& d : *all) {
    CAPTURE(d.id);
    classes.insert(d.device_class);
    CHECK(ids.insert(d.id).second);
    CHECK(d.peak_bandwidth_gbps > 0);
    CHECK(devices::usable_memory_gib(d) > 0);
    CHECK(devices::usable_memory_gib(d) < d.ram_gib);
    CHECK_FALSE(d.sources.empty());
  }
  for (const char* c : {"phone", "laptop", "desktop", "board", "module", "mcu", "gpu"}) CHECK(classes.count(c) == 1);
}

TEST_CASE("devices::resolve_device: unknown ids suggest the closest", "[devices]") {
  auto d = devices::resolve_device("raspberry-pi-6");
  REQUIRE_FALSE(d.ok());
  CHECK(d.error().message.find("raspberry-pi-5") != std::string::npos);
  CHECK(devices::resolve_device("raspberry-pi-5").ok());
}

TEST_CASE("devices::device_to_yaml: a written profile reads back", "[devices]") {
  auto d = devices::parse_device(k_valid, "devices/test-board.yaml", "test-board");
  REQUIRE(d.ok());
  devices::Calibration cal;
  cal.fitted_on = "test fit";
  cal.points = 12;
  cal.error_before = 0.31;
  cal.error_after = 0.04;
  cal.files = {"bench.json"};
  auto& cpu = cal.at("cpu");
  cpu.bandwidth_fraction = {{"q4_0", 0.8}};
  cpu.compute_fraction = {{"q4_0", 0.5}, {"cpu_int8_dot", 0.3}};
  cpu.overhead_ms = 0.2;
  cpu.runtime_mib = 30.0;
  cpu.scratch_fraction = 0.7;
  cpu.attention_fraction = {{"q8_0", 0.05}};
  cpu.prefill_attention_fraction = {{"q8_0", 0.09}};
  cpu.speculative_round_ms = 3.5;
  cpu.sources = {{"bandwidth_fraction.q4_0", 2}, {"compute_fraction.cpu_int8_dot", 1}};
  cpu.at_bound = {"compute_fraction.q8_0 1.0 (upper bound) from bench.json:3"};
  cal.at("vulkan").bandwidth_fraction = {{"all", 0.6}};
  d->calibration = cal;
  auto back = devices::parse_device(devices::device_to_yaml(*d), "round-trip", "");
  REQUIRE(back.ok());
  CHECK(back->peak_bandwidth_gbps == d->peak_bandwidth_gbps);
  REQUIRE(back->calibration);
  const auto& c = *back->calibration;
  CHECK(c.points == 12u);
  CHECK(c.error_before == 0.31);
  CHECK(c.error_after == 0.04);
  CHECK(c.files == std::vector<std::string>{"bench.json"});
  REQUIRE(c.find("cpu"));
  const auto& b = *c.find("cpu");
  CHECK(b.bandwidth_fraction.at(0).second == 0.8);
  CHECK(b.scratch_fraction == 0.7);
  REQUIRE(b.attention_fraction.size() == 1);
  CHECK(b.attention_fraction.at(0) == std::pair<std::string, double>{"q8_0", 0.05});
  REQUIRE(b.prefill_attention_fraction.size() == 1);
  CHECK(b.prefill_attention_fraction.at(0) == std::pair<std::string, double>{"q8_0", 0.09});
  CHECK(b.speculative_round_ms == 3.5);
  CHECK(b.compute_fraction.at(1) == std::pair<std::string, double>{"cpu_int8_dot", 0.3});
  CHECK(b.runtime_mib == 30.0);
  CHECK(b.sources == std::vector<std::pair<std::string, std::uint32_t>>{{"bandwidth_fraction.q4_0", 2}, {"compute_fraction.cpu_int8_dot", 1}});
  CHECK(b.at_bound == std::vector<std::string>{"compute_fraction.q8_0 1.0 (upper bound) from bench.json:3"});
  REQUIRE(c.find("vulkan"));
  CHECK(c.find("vulkan")->bandwidth_fraction.at(0) == std::pair<std::string, double>{"all", 0.6});
}

TEST_CASE("devices::device_to_yaml: every field of a built-in device survives a round trip", "[devices]") {
  auto all = devices::builtin_devices();
  REQUIRE(all.ok());
  for (const auto& d : *all) {
    CAPTURE(d.id);
    auto back = devices::parse_device(devices::device_to_yaml(d), "round-trip", d.id);
    REQUIRE(back.ok());
    CHECK(back->csv_id == d.csv_id);
    CHECK(back->data_rate_mts == d.data_rate_mts);
    CHECK(back->cpu_read_gbps == d.cpu_read_gbps);
    CHECK(back->cpu_read_kind == d.cpu_read_kind);
    CHECK(back->tdp_w == d.tdp_w);
    CHECK(back->gpu_fp16_tensor_tflops == d.gpu_fp16_tensor_tflops);
    CHECK(back->gpu_int8_tensor_tops == d.gpu_int8_tensor_tops);
    CHECK(back->npu_int8_tops == d.npu_int8_tops);
    CHECK(back->npu_note == d.npu_note);
    CHECK(back->sources.size() == d.sources.size());
    for (auto p : {ComputePath::cpu_fp32, ComputePath::cpu_int8_dot, ComputePath::gpu_fp16, ComputePath::npu_int8})
      CHECK(back->peak_gops(p) == d.peak_gops(p));
  }
}

TEST_CASE("devices::parse_device: a calibration written before per-backend calibrations is the CPU's", "[devices]") {
  std::string text = k_valid;
  text += "calibration:\n  fitted_on: old host fit\n  bandwidth_fraction: {q4_0: 0.7}\n  overhead_ms: 0.4\n";
  auto d = devices::parse_device(text, "devices/test-board.yaml", "test-board");
  REQUIRE(d.ok());
  REQUIRE(d->calibration);
  REQUIRE(d->calibration->find("cpu"));
  CHECK(d->calibration->find("cpu")->bandwidth_fraction.at(0).second == 0.7);
  CHECK(d->calibration->find("cpu")->overhead_ms == 0.4);
}

TEST_CASE("devices: every number of every built-in device file is covered by a source", "[devices]") {
  // A source's `fields` entry covers a path and everything below it ("cpu.clusters" covers
  // "cpu.clusters.clock_ghz"); list indices are not part of a path.
  const std::filesystem::path dir = std::filesystem::path(TRILEMMA_SOURCE_DIR) / "devices";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto stem = entry.path().stem().string();
    if (entry.path().extension() != ".yaml" || devices::is_shared_table(stem))
      continue;
    const YAML::Node doc = testing::load_yaml_file(entry.path());
    std::vector<std::string> covered;
    for (const auto& s : doc["sources"])
      for (const auto& f : s["fields"]) covered.push_back(f.as<std::string>());
    std::vector<std::string> numbers;
    std::function<void(const YAML::Node&, const std::string&)> walk = [&](const YAML::Node& n, const std::string& path) {
      if (n.IsMap()) {
        for (const auto& kv : n) {
          const auto key = kv.first.as<std::string>();
          if (path.empty() && (key == "sources" || key == "calibration")) continue;
          walk(kv.second, path.empty() ? key : path + "." + key);
        }
      } else if (n.IsSequence()) {
        for (const auto& item : n) walk(item, path);
      } else if (n.IsScalar()) {
        double v;
        if (YAML::convert<double>::decode(n, v) && n.Tag() != "!") numbers.push_back(path);
      }
    };
    walk(doc, "");
    for (const auto& number : numbers) {
      const bool ok = std::any_of(covered.begin(), covered.end(), [&](const std::string& c) {
        return number == c || number.rfind(c + ".", 0) == 0;
      });
      CAPTURE(entry.path().filename().string(), number);
      CHECK(ok);
      ++checked;
    }
  }
  CHECK(checked > 300);
}

TEST_CASE("devices::core_table: built-in clusters take their rates from it, with the same FP32 rate", "[devices]") {
  const auto table = devices::core_table();
  REQUIRE(table.ok());
  const auto all = devices::builtin_devices();
  REQUIRE(all.ok());
  int clusters = 0, found = 0;
  for (const auto& d : *all)
    for (const auto& c : d.clusters) {
      CAPTURE(d.id, c.core);
      ++clusters;
      const auto* row = devices::find_core(**table, c.core);
      if (!row) continue;  // a core nobody has published rates for: FP32 from the file only
      ++found;
      CHECK(row->fp32_flops_per_cycle == c.fp32_flops_per_cycle);
      if (c.rates_source.rfind("devices/cores.yaml", 0) == 0) CHECK(c.int8_dot_ops_per_cycle == row->int8_dot_ops_per_cycle);
    }
  CHECK(found >= clusters * 9 / 10);
}

TEST_CASE("devices::parse_core_table: failure classes name file, line and field", "[devices]") {
  const std::string valid = "cores:\n  - core: X\n    isa: arm64\n    fp32_flops_per_cycle: 8\n"
                            "    sources: [{fields: [fp32_flops_per_cycle], url: https://x}]\n";
  REQUIRE(devices::parse_core_table(valid, "devices/cores.yaml").ok());
  auto expect = [](const std::string& text, const std::string& what) {
    auto t = devices::parse_core_table(text, "devices/cores.yaml");
    REQUIRE_FALSE(t.ok());
    CAPTURE(t.error().to_string());
    CHECK(t.error().to_string().rfind("devices/cores.yaml:", 0) == 0);
    CHECK(t.error().message.find(what) != std::string::npos);
  };
  expect(valid + valid.substr(7), "duplicate core 'X'");
  expect(replace(valid, "isa: arm64", "isa: mips"), "isa");
  expect(replace(valid, "fp32_flops_per_cycle: 8", "fp32_flops_per_cycle: 0"), "fp32_flops_per_cycle");
  expect(replace(valid, "    sources: [{fields: [fp32_flops_per_cycle], url: https://x}]\n", ""), "sources");
  expect(replace(valid, "isa: arm64", "isa: arm64\n    int8_dott_ops_per_cycle: 4"), "int8_dott_ops_per_cycle");
}

TEST_CASE("devices::parse_class_table: every class, each fraction in [0, 1)", "[devices]") {
  REQUIRE(devices::class_table().ok());
  std::string text = "classes:\n";
  for (const char* c : {"phone", "laptop", "desktop", "board", "module", "mcu", "gpu"})
    text += std::string("  ") + c + ": {os_reserve_fraction: 0.2, sources: [{fields: [os_reserve_fraction], basis: x}]}\n";
  REQUIRE(devices::parse_class_table(text, "devices/classes.yaml").ok());
  auto bad = devices::parse_class_table(replace(text, "  gpu: {os_reserve_fraction: 0.2", "  gpu: {os_reserve_fraction: 1.2"),
                                        "devices/classes.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().to_string().find("classes.gpu.os_reserve_fraction: must be in [0, 1)") != std::string::npos);
  bad = devices::parse_class_table(replace(text, "  mcu:", "  mcux:"), "devices/classes.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().to_string().find("classes.mcu") != std::string::npos);
}

TEST_CASE("parse_fitted_calibrations: backends given as a list is an error, not a throw (fuzz finding, issue 14)", "[devices]") {
  // fitted_yaml fuzz target, session 8: `backends` given as a list was iterated as a mapping,
  // whose keys are invalid nodes: YAML::Node::Scalar() threw YAML::InvalidNode and aborted.
  const std::string text = "devices:\n  apple-m1:\n    fitted_on: test\n    backends:\n      - cpu\n";
  const auto r = trilemma::devices::parse_fitted_calibrations(text, "devices/fitted.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().file == "devices/fitted.yaml");
  // The same for a table of fractions given as a list.
  const std::string fractions = "devices:\n  apple-m1:\n    fitted_on: test\n    backends:\n      metal:\n"
                                "        bandwidth_fraction:\n          - 0.5\n";
  const auto f = trilemma::devices::parse_fitted_calibrations(fractions, "devices/fitted.yaml");
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().file == "devices/fitted.yaml");
}
