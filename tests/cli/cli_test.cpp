// Black-box tests of the real binary: golden reports for the three scenarios on three device
// classes, exit codes, and bad input. TRILEMMA_UPDATE_GOLDEN=1 rewrites the golden files.
#include <catch2/catch.hpp>

#include "run_binary.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using trilemma::testing::Run;

// Runs the binary with `args`; stderr is merged into the output when `with_stderr`.
// Runs the binary with `args`; stderr is merged into the output when `with_stderr`.
Run run(const std::string& args, bool with_stderr = false) { return trilemma::testing::run_trilemma(args, with_stderr); }

std::filesystem::path golden(const std::string& name) {
  return std::filesystem::path(TRILEMMA_SOURCE_DIR) / "tests/cli/golden" / name;
}

void check_golden(const std::string& name, const std::string& actual) {
  const auto path = golden(name);
  if (std::getenv("TRILEMMA_UPDATE_GOLDEN")) {
    std::ofstream(path) << actual;
    return;
  }
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  CAPTURE(name);
  CHECK(actual == ss.str());
}

}  // namespace

TEST_CASE("cli plan: golden reports for three scenarios on a phone, a laptop and a board", "[cli]") {
  for (const std::string device : {"snapdragon-8-gen-3", "apple-m2", "raspberry-pi-5"})
    for (const std::string scenario : {"latency", "memory", "accuracy"}) {
      const auto r = run("plan -m qwen2.5-1.5b -d " + device + " -s " + scenario);
      CAPTURE(device, scenario);
      CHECK((r.code == 0 || r.code == 4));
      check_golden("plan-qwen2.5-1.5b-" + device + "-" + scenario + ".txt", r.out);
    }
}

TEST_CASE("cli: exit codes", "[cli]") {
  CHECK(run("plan -m llama-3.2-1b -d apple-m2 -s memory").code == 0);
  CHECK(run("plan -m llama-3.1-8b -d raspberry-pi-4 -s accuracy").code == 4);
  CHECK(run("plan -m nope -d apple-m2").code == 3);
  CHECK(run("plan -m llama-3.2-1b -d nope").code == 3);
  CHECK(run("plan -m llama-3.2-1b").code == 2);
  CHECK(run("plan -m llama-3.2-1b -d apple-m2 --weights q9").code == 2);
  CHECK(run("frobnicate").code == 2);
  CHECK(run("devices validate").code == 0);
  CHECK(run("devices list --json").code == 0);
  CHECK(run("models show stories260k").code == 0);
}

TEST_CASE("cli: bad files give a message naming file and field, and no output file", "[cli]") {
  const auto dir = std::filesystem::temp_directory_path() / "trilemma-cli-test";
  std::filesystem::create_directories(dir);
  const auto device = dir / "broken.yaml";
  std::ofstream(device) << "id: broken\nname: x\nvendor: y\nclass: board\nmemory: {ram_options_gib: [1], default_ram_gib: 1,"
                           " unified: true, type: x, peak_bandwidth_gbps: -1, bandwidth_basis: derived}\n";
  const auto out = dir / "plan.json";
  std::filesystem::remove(out);
  const auto r = run("plan -m llama-3.2-1b -d " + device.string() + " --out " + out.string(), true);
  CHECK(r.code == 3);
  CHECK(r.out.find(device.string() + ":5:") != std::string::npos);
  CHECK(r.out.find("memory.peak_bandwidth_gbps: must be > 0") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));

  const auto v = run("devices validate " + device.string(), true);
  CHECK(v.code == 3);
  CHECK(v.out.find("1 invalid") != std::string::npos);
}

TEST_CASE("cli plan --json: a plan document that --out writes identically", "[cli]") {
  const auto out = std::filesystem::temp_directory_path() / "trilemma-cli-plan.json";
  const auto r = run("plan -m llama-3.2-1b -d apple-m2 -s memory --json --out " + out.string());
  REQUIRE(r.code == 0);
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str() == r.out);
  CHECK(r.out.find("\"schema\": \"trilemma.plan\"") != std::string::npos);
}

TEST_CASE("cli run/export: synthetic weights of a catalog shape, stated in the report", "[cli]") {
  const auto r = run("run --synthetic stories260k --weights q8_0 --steps 4 --json");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("\"synthetic\": true") != std::string::npos);
  CHECK(r.out.find("\"weights\": \"q8_0+mixed\"") != std::string::npos);  // FFN rows of 172 fall back
  CHECK(run("run --synthetic stories260k --weights q4_k_m").code == 2);    // a recipe the engine does not run
  CHECK(run("run --synthetic stories260k --model x.gguf").code == 2);
  CHECK(run("run --model /nonexistent/model.gguf").code == 3);

  const auto out = std::filesystem::temp_directory_path() / "trilemma-cli-export.gguf";
  std::filesystem::remove(out);
  const auto e = run("export --synthetic stories260k --weights q4_0 -o " + out.string());
  REQUIRE(e.code == 0);
  const auto inspect = run("models inspect " + out.string() + " --json");
  REQUIRE(inspect.code == 0);
  CHECK(inspect.out.find("\"layers\": 5") != std::string::npos);
  // 47 tensors: embedding (tied classifier), 9 per layer, final norm. The 172-wide FFN rows
  // fell back to f32, which then holds the most bytes of this tiny model.
  CHECK(inspect.out.find("\"tensors\": 47") != std::string::npos);

  const auto bad = std::filesystem::path("/nonexistent-dir/model.gguf");
  CHECK(run("export --synthetic stories260k --weights q4_0 -o " + bad.string()).code != 0);
  CHECK_FALSE(std::filesystem::exists(bad));
}
