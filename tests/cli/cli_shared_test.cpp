// Black-box tests of the real binary on the real stories260K model from ../shared/ (this binary
// exits 77, reported as skipped, when the data is absent): run, eval, and one quick end-to-end
// verify with calibration against a throwaway host profile.
#include <catch2/catch.hpp>

#include "run_binary.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "shared_data.hpp"

namespace {

using trilemma::testing::Run;

Run run(const std::string& args) { return trilemma::testing::run_trilemma(args); }

const std::string k_model = trilemma::testing::shared_file("models/stories260K.bin").string();
const std::string k_tok = trilemma::testing::shared_file("models/tok512.bin").string();
const std::string k_text = trilemma::testing::shared_file("models/eval-stories.txt").string();

struct SkipWithoutShared {
  SkipWithoutShared() { trilemma::testing::require_shared_or_skip("models/stories260K.bin"); }
} k_skip;

}  // namespace

TEST_CASE("cli run: stories260K greedy text from the real model", "[cli][shared]") {
  const auto r = run("run -m " + k_model + " --tokenizer " + k_tok + " --steps 12 --prompt 'Once upon a time' --quiet --json");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("\"synthetic\": false") != std::string::npos);
  CHECK(r.out.find("there was a little girl") != std::string::npos);
}

TEST_CASE("cli eval: q8_0 weights stay close to fp32, q4_0 KV does not", "[cli][shared]") {
  const std::string base = "eval -m " + k_model + " --tokenizer " + k_tok + " --text " + k_text + " --max-chunks 1 --json";
  const auto ref = run(base + " --weights f32 --kv f32");
  REQUIRE(ref.code == 0);
  CHECK(ref.out.find("\"kl_mean\": 0.0") != std::string::npos);  // the reference against itself
  const auto q8 = run(base + " --weights q8_0");
  const auto q4kv = run(base + " --kv q4_0");
  REQUIRE(q8.code == 0);
  REQUIRE(q4kv.code == 0);
  auto kl = [](const std::string& json) { return std::stod(json.substr(json.find("\"kl_mean\": ") + 11)); };
  CHECK(kl(q8.out) < 0.01);
  CHECK(kl(q4kv.out) > 10 * kl(q8.out));
  CHECK(run(base + " --kv q9").code == 2);
  CHECK(run("eval -m " + k_model + " --tokenizer " + k_tok + " --text /nonexistent.txt").code != 0);
}

TEST_CASE("cli verify: stories260K end to end, calibration written to the host profile", "[cli][shared]") {
  const auto dir = std::filesystem::temp_directory_path() / "trilemma-verify-test";
  std::filesystem::create_directories(dir);
  // A host profile in the device schema, so the test never probes the machine.
  const auto host = dir / "host.yaml";
  std::ofstream(host) << "id: host\nname: test host\nvendor: test\nclass: desktop\n"
                         "memory: {ram_options_gib: [16], default_ram_gib: 16, unified: true, type: test, "
                         "peak_bandwidth_gbps: 20, bandwidth_basis: measured, os_reserve_gib: 2}\n"
                         "cpu: {isa: x86-64, clusters: [{kind: performance, cores: 2, core: test, clock_ghz: 2, "
                         "fp32_flops_per_cycle: 16}]}\nbackends: [cpu]\n"
                         "sources: [{fields: [memory, cpu], basis: test fixture}]\n";
  const std::string args = "verify -m stories260k --model-file " + k_model + " --tokenizer " + k_tok +
                           " --weights f32 --runs 1 --decode-tokens 16 --device " + host.string();
  const auto r = run(args + " --json");
  CHECK((r.code == 0 || r.code == 1));  // within tolerance or not: both are verdicts
  CHECK(r.out.find("\"synthetic\": false") != std::string::npos);
  CHECK(r.out.find("\"figure\": \"decode_tok_s\"") != std::string::npos);
  CHECK(r.out.find("\"figure\": \"peak_memory_bytes\"") != std::string::npos);

  const auto c = run(args + " --calibrate --json");
  CHECK((c.code == 0 || c.code == 1));
  CHECK(c.out.find("\"calibrated_points\"") != std::string::npos);
  std::ifstream in(host);
  const std::string profile((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(profile.find("calibration:") != std::string::npos);
  CHECK(profile.find("bandwidth_fraction:") != std::string::npos);

  // A model file that does not match the named shape is refused before anything runs.
  const auto wrong = run("verify -m tinyllama-1.1b --model-file " + k_model + " --tokenizer " + k_tok + " --device " +
                         host.string());
  CHECK(wrong.code == 3);
  // A plan document from a future schema version is refused.
  const auto plan = dir / "future.json";
  std::ofstream(plan) << R"({"schema": "trilemma.plan", "schema_version": 99, "status": "ok"})";
  CHECK(run("verify --plan " + plan.string() + " --device " + host.string()).code == 3);
}
