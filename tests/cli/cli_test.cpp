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

TEST_CASE("cli plan: NPU backends are planned where the device has a peak, refused with exit 3 where not", "[cli]") {
  const auto qnn = run("plan -m llama-3.2-1b -d snapdragon-8-gen-3 --backend qnn --json");
  REQUIRE(qnn.code == 0);
  CHECK(qnn.out.find("\"backend\": \"qnn\"") != std::string::npos);
  CHECK(qnn.out.find("npu_int8") != std::string::npos);  // the basis names the path it costed
  // The latency-first plan on this phone is an NPU plan: its first token comes under 100 ms.
  const auto latency = run("plan -m llama-3.2-1b -d snapdragon-8-gen-3 --scenario latency");
  REQUIRE(latency.code == 0);
  const auto chosen = latency.out.substr(latency.out.find("chosen:"), 120);
  CAPTURE(chosen);
  CHECK((chosen.find("/ qnn") != std::string::npos || chosen.find("/ hexagon") != std::string::npos));

  // A device file listing an NPU backend without a figure to cost it: exit 3, naming file and backend.
  const auto dir = std::filesystem::temp_directory_path() / "trilemma-cli-npu";
  std::filesystem::create_directories(dir);
  const auto device = dir / "npu-phone.yaml";
  std::ofstream(device) << "id: npu-phone\nname: x\nvendor: y\nclass: phone\n"
                           "memory: {ram_options_gib: [8], default_ram_gib: 8, unified: true, type: x, peak_bandwidth_gbps: 60, bandwidth_basis: derived}\n"
                           "cpu: {isa: arm64, clusters: [{kind: performance, cores: 4, core: Cortex-A720, clock_ghz: 3, fp32_flops_per_cycle: 16}]}\n"
                           "npu: {note: no figure}\nbackends: [cpu, qnn, nnapi]\nsources: [{fields: [memory, cpu], basis: test}]\n";
  for (const char* backend : {"qnn", "nnapi"}) {
    const auto r = run("plan -m llama-3.2-1b -d " + device.string() + " --backend " + backend, true);
    CAPTURE(backend, r.out);
    CHECK(r.code == 3);
    CHECK(r.out.find(device.string()) != std::string::npos);
    CHECK(r.out.find(std::string("'") + backend + "'") != std::string::npos);
  }
  // Unpinned, the device is planned on what it can cost (its CPU).
  CHECK(run("plan -m llama-3.2-1b -d " + device.string() + " -s memory").code == 0);
}

TEST_CASE("cli plan: per-format TTFTs follow the compute paths", "[cli]") {
  // A profile without constraints, so that every pinned configuration is reported.
  const auto profile = std::filesystem::temp_directory_path() / "trilemma-open-profile.yaml";
  std::ofstream(profile) << "id: open\nname: Open\nuse_cases: tests\nkeeps: latency\nconstraints: {}\n"
                            "objective:\n  - {metric: decode_tok_s, direction: max, tolerance_pct: 0}\n"
                            "defaults: {context: 4096, prompt: 512}\n";
  struct Prefill {
    double ttft_ms;
    std::string json;
  };
  auto plan = [&](const std::string& weights) {
    const auto r = run("plan -m llama-3.2-1b -d snapdragon-8-gen-3 --ram-gib 24 --backend cpu --threads 8 --no-speculative "
                       "--kv f16 --kv-strategy contiguous -s " + profile.string() + " --weights " + weights + " --json");
    REQUIRE(r.code == 0);
    const auto at = r.out.find("\"ttft_ms\"");
    REQUIRE(at != std::string::npos);
    return Prefill{std::stod(r.out.substr(r.out.find("\"mid\":", at) + 6)), r.out};
  };
  // Each format's basis names the path its matrix products take on this phone's cores.
  const auto f32 = plan("f32"), f16 = plan("f16"), q4 = plan("q4_0");
  CHECK(f32.json.find("prefill compute: cpu_fp32 peak") != std::string::npos);
  CHECK(f16.json.find("prefill compute: cpu_fp16 peak") != std::string::npos);
  CHECK(q4.json.find("prefill compute: cpu_int8_matmul peak") != std::string::npos);
  // Q4_0's SMMLA peak is 8x the FP32 FMA's: its first token comes well before F32's. (The
  // ratio against the fitted fractions is unit-tested with fixed tables in estimate_test.)
  CAPTURE(f32.ttft_ms, f16.ttft_ms, q4.ttft_ms);
  CHECK(f32.ttft_ms > 1.5 * q4.ttft_ms);
}

TEST_CASE("cli plan: the default context follows the model, and MCUs are costed as MCUs", "[cli]") {
  const auto r = run("plan -m stories260k -d esp32-s3 -s memory");
  CAPTURE(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("context 512") != std::string::npos);
}
