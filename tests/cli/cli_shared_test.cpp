// Black-box tests of the real binary on the real stories260K model from ../shared/ (this binary
// exits 77, reported as skipped, when the data is absent): run, eval, and one quick end-to-end
// verify with calibration against a throwaway host profile.
#include <catch2/catch.hpp>

#include "run_binary.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "engine/gguf/gguf_file.hpp"
#include "shared_data.hpp"

namespace {

using trilemma::testing::Run;

Run run(const std::string& args) { return trilemma::testing::run_trilemma(args); }

const std::string k_model = trilemma::testing::shared_file("models/stories260K.bin").string();
const std::string k_tok = trilemma::testing::shared_file("models/tok512.bin").string();
const std::string k_text = trilemma::testing::shared_file("models/eval-stories.txt").string();

// A host profile in the device schema, so the tests never probe the machine.
std::filesystem::path write_test_host(const std::filesystem::path& dir) {
  const auto host = dir / "host.yaml";
  std::ofstream(host) << "id: host\nname: test host\nvendor: test\nclass: desktop\n"
                         "memory: {ram_options_gib: [16], default_ram_gib: 16, unified: true, type: test, "
                         "peak_bandwidth_gbps: 20, bandwidth_basis: measured, os_reserve_gib: 2}\n"
                         "cpu: {isa: x86-64, clusters: [{kind: performance, cores: 2, core: test, clock_ghz: 2, "
                         "fp32_flops_per_cycle: 16}]}\nbackends: [cpu]\n"
                         "sources: [{fields: [memory, cpu], basis: test fixture}]\n";
  return host;
}

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
  const auto host = write_test_host(dir);
  const std::string args = "verify -m stories260k --model-file " + k_model + " --tokenizer " + k_tok +
                           " --weights f32 --runs 1 --decode-tokens 16 --prompt-tokens 40 --device " + host.string();
  const auto r = run(args + " --json");
  CHECK((r.code == 0 || r.code == 1));  // within tolerance or not: both are verdicts
  CHECK(r.out.find("\"synthetic\": false") != std::string::npos);
  // The file's own vocabulary, its opening words repeated to the length asked for.
  CHECK(r.out.find("\"prompt_tokens\": 40") != std::string::npos);
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

TEST_CASE("cli verify --grid: KL per configuration on real weights, and the report replays", "[cli][shared]") {
  const auto dir = std::filesystem::temp_directory_path() / "trilemma-verify-grid-test";
  std::filesystem::create_directories(dir);
  const auto host = write_test_host(dir);
  const auto report = dir / "grid.json";
  std::filesystem::remove(report);
  const std::string args = "verify -m stories260k --model-file " + k_model + " --tokenizer " + k_tok +
                           " --grid --contexts 96 --runs 1 --decode-tokens 16 --device " + host.string();
  const auto r = run(args + " --eval-text " + k_text + " --out " + report.string());
  REQUIRE((r.code == 0 || r.code == 1));
  CHECK(r.out.find("kl_divergence") != std::string::npos);
  std::ifstream in(report);
  const auto doc = nlohmann::json::parse(in);
  REQUIRE(doc["points"].size() == 18);  // 3 weights x 3 KV formats x 1 context x speculative off/on
  std::map<std::string, double> kl;
  for (const auto& p : doc["points"]) {
    REQUIRE(p["accuracy"]["kl_measured"].is_number());
    CHECK(p["accuracy"]["kl_predicted"].is_number());
    CHECK(p["accuracy"]["top1_measured"].get<double>() > 0.0);
    kl[p["engine_weights"].get<std::string>() + "/" + p["config"]["kv_type"].get<std::string>()] = p["accuracy"]["kl_measured"];
  }
  // Real weights order the formats as accuracy should: f16 weights and KV are near-lossless,
  // 4-bit weights and a 4-bit KV cache each lose more.
  CHECK(kl.at("f16/f16") < 0.01);
  CHECK(kl.at("q4_0/f16") > 5 * kl.at("f16/f16"));
  CHECK(kl.at("f16/q4_0") > kl.at("f16/q8_0"));

  // The same flags replay the report's measurements without running the engine.
  const auto replay = run(args + " --replay " + report.string() + " --json");
  REQUIRE((replay.code == 0 || replay.code == 1));
  const auto again = nlohmann::json::parse(replay.out);
  REQUIRE(again["points"].size() == 18);
  for (std::size_t i = 0; i < 18; ++i)
    CHECK(again["points"][i]["measured"]["decode_tok_s"] == doc["points"][i]["measured"]["decode_tok_s"]);
  // The summary counts the points each figure is within tolerance for.
  REQUIRE(again["summary"].size() == 3);
  for (const auto& s : again["summary"]) {
    int within = 0;
    for (const auto& p : again["points"])
      for (const auto& c : p["checks"])
        if (c["figure"] == s["figure"] && c["pass"].get<bool>()) ++within;
    CHECK(s["total"] == 18);
    CHECK(s["within"] == within);
  }
  CHECK(again["host_profile"]["peak_bandwidth_gbps"].get<double>() > 0);
  // Other flags ask for points the report does not hold; KL needs real weights.
  CHECK(run("verify -m stories260k --grid --contexts 128 --device " + host.string() + " --replay " + report.string()).code == 3);
  CHECK(run("verify -m stories260k --weights q8_0 --device " + host.string() + " --eval-text " + k_text).code == 2);
}

TEST_CASE("cli export: fallback warnings and what was written go to stderr, silent under -q (issues 15, 50)", "[cli][shared]") {
  const auto out = std::filesystem::temp_directory_path() / "trilemma_cli_fallbacks.gguf";
  const std::string args = "export -m " + k_model + " --tokenizer " + k_tok + " --weights q8_0 --out " + out.string();
  const auto stdout_only = trilemma::testing::run_trilemma(args);
  REQUIRE(stdout_only.code == 0);
  CHECK(stdout_only.out.empty());
  const auto both = trilemma::testing::run_trilemma(args, true);
  CHECK(both.out.find("trilemma: warning: fallback: blk.0.ffn_down.weight: q8_0 -> f32") != std::string::npos);
  CHECK(both.out.find("wrote " + out.string() + " (q8_0, ") != std::string::npos);
  // --quiet (before or after the command) and TRILEMMA_LOG=error keep stderr to errors; the report stays.
  for (const auto& quiet : {trilemma::testing::run_trilemma("--quiet " + args, true), trilemma::testing::run_trilemma(args + " -q", true),
                            trilemma::testing::run_trilemma(args, true, "TRILEMMA_LOG=error ")}) {
    CHECK(quiet.code == 0);
    CHECK(quiet.out.empty());
  }
  const auto bogus = trilemma::testing::run_trilemma(args, true, "TRILEMMA_LOG=loud ");
  CHECK(bogus.out.find("TRILEMMA_LOG must be debug, info, warn or error") != std::string::npos);
  std::filesystem::remove(out);
}

// `export --weights q4_k_m` lays the recipe out with the planner's tensor plan and converts each
// matrix with the engine's quantizers: on stories260K the file must be what llama.cpp's own
// llama-quantize (build 10587) writes for that recipe, tensor for tensor and byte for byte
// (../shared/models/llama-quantize/; the 64-wide rows fall back to 32-element types in both).
TEST_CASE("cli export: recipes are byte-identical to llama-quantize's files of stories260K", "[cli][shared]") {
  const std::string gguf = trilemma::testing::shared_file("models/stories260K.gguf").string();
  for (const auto& [recipe, file] : std::map<std::string, std::string>{{"q3_k_m", "Q3_K_M"}, {"q4_k_m", "Q4_K_M"}, {"q5_k_m", "Q5_K_M"}}) {
    CAPTURE(recipe);
    const auto out = std::filesystem::temp_directory_path() / ("trilemma_cli_recipe_" + recipe + ".gguf");
    REQUIRE(run("export -m " + gguf + " --weights " + recipe + " --out " + out.string()).code == 0);
    auto ours = trilemma::gguf::GgufFile::open(out);
    auto theirs = trilemma::gguf::GgufFile::open(trilemma::testing::shared_file("models/llama-quantize/stories260K-" + file + ".gguf"));
    REQUIRE(ours.ok());
    REQUIRE(theirs.ok());
    CHECK(ours->get_uint("general.file_type") == theirs->get_uint("general.file_type"));
    REQUIRE(ours->tensors().size() == theirs->tensors().size());
    std::size_t identical = 0;
    for (const auto& t : theirs->tensors()) {
      CAPTURE(t.name);
      const auto* o = ours->find_tensor(t.name);
      REQUIRE(o != nullptr);
      REQUIRE(o->type == t.type);
      const auto a = ours->tensor_data(*o), b = theirs->tensor_data(t);
      REQUIRE(a.size() == b.size());
      CHECK(std::equal(a.begin(), a.end(), b.begin()));
      identical += std::equal(a.begin(), a.end(), b.begin()) ? 1 : 0;
    }
    std::printf("%s: %zu of %zu tensors byte-identical to llama-quantize's\n", recipe.c_str(), identical, theirs->tensors().size());
    std::filesystem::remove(out);
  }
}
