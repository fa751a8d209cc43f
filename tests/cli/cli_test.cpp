// Black-box tests of the real binary: golden reports for the three scenarios on three device
// classes, exit codes, and bad input. TRILEMMA_UPDATE_GOLDEN=1 rewrites the golden files.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <set>

#include "golden.hpp"
#include "run_binary.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using trilemma::testing::Run;

// Runs the binary with `args`; stderr is merged into the output when `with_stderr`.
Run run(const std::string& args, bool with_stderr = false) { return trilemma::testing::run_trilemma(args, with_stderr); }

// A directory of its own for a test's files, removed when the test ends (pass or fail).
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("trilemma-cli-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

void check_golden(const std::string& name, const std::string& actual) {
  trilemma::testing::check_golden("cli", name, actual);
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
  // A llama.cpp recipe runs as the planner lays it out: Q4_K_M's q4_k rows of 64 fall back to
  // q5_0, as llama-quantize's do (cli_shared_test checks the bytes against its file). The
  // report names the recipe, so `calibrate --from` reads it back as one.
  const auto recipe = run("run --synthetic stories260k --weights q4_k_m --steps 2 --json");
  REQUIRE(recipe.code == 0);
  CHECK(recipe.out.find("\"weights\": \"q4_k_m\"") != std::string::npos);
  CHECK(run("run --synthetic stories260k --weights q4_k_x").code == 2);
  CHECK(run("run --synthetic stories260k --draft self --draft-weights q4_k_m").code == 2);  // the draft copy takes one type
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

namespace {

// A llama-bench jsonl result of TinyLlama-1.1B (Q4_0) with the given model type and rate.
std::string bench_line(const std::string& type, std::uint32_t pp, std::uint32_t tg, std::uint32_t threads, double ts) {
  return "{\"model_type\": \"" + type + "\", \"model_size\": 619094016, \"model_n_params\": 1100048384, \"backends\": \"CPU\", "
         "\"n_gpu_layers\": 0, \"n_threads\": " + std::to_string(threads) + ", \"type_k\": \"f16\", \"type_v\": \"f16\", "
         "\"n_prompt\": " + std::to_string(pp) + ", \"n_gen\": " + std::to_string(tg) + ", \"n_depth\": 0, \"avg_ts\": " +
         std::to_string(ts) + "}\n";
}

}  // namespace

TEST_CASE("cli calibrate: a board's llama-bench results give a calibrated profile; bad input exits 3", "[cli]") {
  const TempDir tmp("calibrate");
  const auto& dir = tmp.path;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const std::string in_dir = "cd " + dir.string() + " && ";
  auto calibrate = [&](const std::string& args) { return trilemma::testing::run_trilemma("calibrate " + args, true, in_dir); };

  // Plausible Raspberry Pi 5 figures (4 threads): the profile lands beside, named after the device.
  const auto good = write("pi5.jsonl", bench_line("llama 1B Q4_0", 512, 0, 4, 28.0) + bench_line("llama 1B Q4_0", 0, 128, 4, 9.5) +
                                           bench_line("llama 1B Q4_0", 0, 128, 2, 7.0));
  const auto ok = calibrate("--device raspberry-pi-5 --from " + good);
  INFO(ok.out);
  CHECK((ok.code == 0 || ok.code == 1));
  CHECK(ok.out.find("before") != std::string::npos);
  const auto profile = dir / "raspberry-pi-5-calibrated.yaml";
  REQUIRE(std::filesystem::exists(profile));
  const auto show = run("devices show " + profile.string());
  CHECK(show.code == 0);
  CHECK(show.out.find("calibrated calibrate: llama.cpp results from 1 file") != std::string::npos);
  CHECK(run("devices validate " + profile.string()).code == 0);
  std::filesystem::remove(profile);

  // Truncated, malformed and foreign files: exit 3 naming file and line; nothing written.
  const auto truncated = write("cut.json", "[\n  {\"model_type\": \"llama 1B Q4_0\", \"n_prompt\": 512,");
  auto r = calibrate("--device raspberry-pi-5 --from " + truncated);
  CHECK(r.code == 3);
  CHECK(r.out.find("cut.json") != std::string::npos);
  const auto bad_line = write("bad.jsonl", bench_line("llama 1B Q4_0", 512, 0, 4, 28.0) + "{\"model_type\": \"llama\", \"n_prompt\": \"x\", \"n_gen\": 0, \"avg_ts\": 1}\n");
  r = calibrate("--device raspberry-pi-5 --from " + bad_line);
  CHECK(r.code == 3);
  CHECK(r.out.find("bad.jsonl:2: n_prompt") != std::string::npos);
  const auto foreign = write("notes.txt", "meeting notes\n");
  r = calibrate("--device raspberry-pi-5 --from " + foreign);
  CHECK(r.code == 3);
  CHECK(r.out.find("notes.txt:1: not llama-bench output") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(profile));

  // A result of a model the catalog does not have is listed, not guessed; --skip-unmatched fits
  // the rest.
  const auto mixed = write("mixed.jsonl", bench_line("llama 13B Q4_0", 512, 0, 4, 3.0).replace(
                                              bench_line("llama 13B Q4_0", 512, 0, 4, 3.0).find("1100048384"), 10, "13015864320") +
                                              bench_line("llama 1B Q4_0", 0, 128, 4, 9.5));
  r = calibrate("--device raspberry-pi-5 --from " + mixed);
  CHECK(r.code == 3);
  CHECK(r.out.find("unmatched: " + mixed + ":1: llama 13B Q4_0: no catalog model") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(profile));
  r = calibrate("--device raspberry-pi-5 --from " + mixed + " --skip-unmatched --json");
  CHECK((r.code == 0 || r.code == 1));
  CHECK(r.out.find("\"unmatched\": [") != std::string::npos);
  CHECK(std::filesystem::exists(profile));

  // Results of two runtimes on one backend do not make one calibration.
  const auto run_report = write("run.json",
                                "{\"schema\": \"trilemma.run\", \"schema_version\": 1, \"model\": \"tinyllama-1.1b\", "
                                "\"kv_config\": {\"format\": \"f32\", \"strategy\": \"contiguous\"}, \"weights\": \"q4_0\", "
                                "\"threads\": 4, \"prompt_tokens\": [1, 2, 3], \"tokens\": [4, 5], \"ttft_ms\": 300, "
                                "\"prefill_tok_s\": 10, \"decode_tok_s\": 5, \"peak_rss_bytes\": 800000000, \"draft\": \"\"}\n");
  r = calibrate("--device raspberry-pi-5 --from " + good + " " + run_report);
  CHECK(r.code == 2);
  CHECK(r.out.find("one runtime") != std::string::npos);
  // Usage: no device, no files; a file that does not exist is 5, as in every command (issue 50).
  CHECK(calibrate("--from " + good).code == 2);
  CHECK(calibrate("--device raspberry-pi-5").code == 2);
  CHECK(calibrate("--device raspberry-pi-5 --from /nonexistent.json").code == 5);
  CHECK(calibrate("--device nope --from " + good).code == 3);
}

TEST_CASE("cli: a GGUF whose key_length is beyond any model is refused, not read (issue 14)", "[cli]") {
  const TempDir tmp("keylen");
  const auto& dir = tmp.path;
  const auto file = (dir / "tiny.gguf").string();
  REQUIRE(run("export --synthetic stories260k --weights f32 --out " + file).code == 0);
  // Patch llama.attention.key_length (a uint32 after its key and type) to 1073741832.
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    bytes = ss.str();
  }
  const std::string key = "llama.attention.key_length";
  const auto at = bytes.find(key);
  REQUIRE(at != std::string::npos);
  const std::uint32_t huge = 1073741832;
  std::memcpy(&bytes[at + key.size() + 4], &huge, 4);
  std::ofstream(file, std::ios::binary) << bytes;
  const auto inspect = run("models inspect " + file, true);
  CHECK(inspect.code == 3);
  CHECK(inspect.out.find("head_dim: 1073741832 is beyond any model") != std::string::npos);
  CHECK(run("run --model " + file + " --steps 2 --quiet").code == 3);
  CHECK(run("plan -m " + file + " -d apple-m2").code == 3);
}

TEST_CASE("cli: hostile JSON numbers and types are exit 3 or ignored, never exit 70 (issue 14)", "[cli]") {
  const TempDir tmp("json");
  const auto& dir = tmp.path;
  std::filesystem::create_directories(dir / "m");
  {
    std::ofstream(dir / "m" / "config.json") << R"({"num_hidden_layers": 2, "hidden_size": 1e400, "num_attention_heads": 8,
      "vocab_size": 10, "max_position_embeddings": 16, "intermediate_size": 32})";
  }
  const auto inspect = run("models inspect " + (dir / "m" / "config.json").string(), true);
  CHECK(inspect.code == 3);
  CHECK(inspect.out.find("config.json") != std::string::npos);
  // A plan whose model.shape.layers is 1e20: refused where the plan is read, naming the field
  // (it was once converted: undefined behaviour; then left out: reliability D25).
  const auto plan = run("plan -m llama-3.2-1b -d apple-m2 -s memory --json");
  REQUIRE(plan.code == 0);
  std::string doc = plan.out;
  const auto at = doc.find("\"layers\": ");
  REQUIRE(at != std::string::npos);
  doc.replace(at + 10, doc.find_first_of(",\n", at + 10) - (at + 10), "1e20");
  std::ofstream(dir / "plan.json") << doc;
  const auto emit = run("emit --plan " + (dir / "plan.json").string() + " --format llama.cpp", true);
  CHECK(emit.code == 3);
  CHECK(emit.out.find("model.shape.layers: must be in") != std::string::npos);
}

TEST_CASE("cli: output nobody received, and thread counts no machine has (issue 14)", "[cli]") {
  if (std::filesystem::exists("/dev/full")) {
    const auto r = trilemma::testing::run_command(std::string(TRILEMMA_BINARY) + " plan -m llama-3.2-1b -d apple-m2 -s memory --json > /dev/full 2>/dev/null");
    CHECK(r.code == 5);
  } else {
    WARN("skipped the /dev/full check: this system has no /dev/full");
  }
  CHECK(run("plan -m llama-3.2-1b -d apple-m2 --threads 100000").code == 2);
  CHECK(run("run --synthetic stories260k --threads 100000 --steps 1").code == 2);
}

TEST_CASE("cli run/eval --cores: threads on the CPUs asked for; CPUs the machine lacks are usage errors (issue 18)", "[cli]") {
  const auto r = run("run --synthetic stories260k --steps 2 --quiet --json --cores 0");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("\"cores\": [\n    0\n  ]") != std::string::npos);
  CHECK(r.out.find("\"threads\": 1,") != std::string::npos);  // --threads 0: one per chosen core
  for (const char* bad : {"--cores 4095", "--cores 1-0", "--cores fast"}) {
    CAPTURE(bad);
    const auto e = run(std::string("run --synthetic stories260k --steps 1 ") + bad, true);
    CHECK(e.code == 2);
    CHECK(e.out.find("--cores") != std::string::npos);
  }
  CHECK(run("eval --synthetic stories260k --text /dev/null --cores 99999").code == 2);
  CHECK(run("verify --model smollm2-135m --cores 4095").code == 2);
}

TEST_CASE("cli run: a system that will not start the threads asked for runs with fewer (issue 14)", "[cli]") {
  if (trilemma::testing::skip_under_address_sanitizer()) return;
  // 64 threads' stacks do not fit in 300 MB of address space: the pool keeps those it got.
  const auto r = trilemma::testing::run_command("(ulimit -v 300000; " + std::string(TRILEMMA_BINARY) +
                                                " run --synthetic stories260k --threads 64 --steps 2 --quiet --json) 2>/dev/null");
  CHECK(r.code == 0);
  CHECK(r.out.find("\"threads\": 64") == std::string::npos);
}

TEST_CASE("cli run: running out of memory has its own exit code and message (issue 14)", "[cli]") {
  if (trilemma::testing::skip_under_address_sanitizer()) return;
  // 540 MB of f32 weights in 400 MB of address space; --force skips the up-front check, which
  // looks at the machine's memory, not at this limit.
  const auto r = trilemma::testing::run_command("(ulimit -v 400000; " + std::string(TRILEMMA_BINARY) +
                                                " run --synthetic smollm2-135m --weights f32 --steps 1 --force) 2>&1");
  CHECK(r.code == 6);
  CHECK(r.out.find("out of memory") != std::string::npos);
}

TEST_CASE("cli export/plan --out: a device stays a device, a symlink stays a link (issue 14)", "[cli]") {
  const TempDir tmp("out");
  const auto& dir = tmp.path;
  if (std::filesystem::exists("/dev/null")) {
    CHECK(run("export --synthetic stories260k --weights q8_0 --out /dev/null").code == 0);
    CHECK(std::filesystem::is_character_file("/dev/null"));
    CHECK(run("plan -m llama-3.2-1b -d apple-m2 -s memory --out /dev/null").code == 0);
    CHECK(std::filesystem::is_character_file("/dev/null"));
  }
  const auto target = dir / "model.gguf", link = dir / "link.gguf";
  std::ofstream(target) << "old";
  std::filesystem::create_symlink(target, link);
  CHECK(run("export --synthetic stories260k --weights q8_0 --out " + link.string()).code == 0);
  CHECK(std::filesystem::is_symlink(link));
  CHECK(std::filesystem::file_size(target) > 1000);
  const auto r = run("plan -m llama-3.2-1b -d apple-m2 -s memory --out " + dir.string(), true);
  CHECK(r.code == 5);
  CHECK(r.out.find("is a directory") != std::string::npos);
}

TEST_CASE("cli eval: a text that is not a regular file is refused, not read forever (issue 14)", "[cli]") {
  const auto r = run("eval --synthetic stories260k --text /dev/urandom --max-chunks 1", true);
  CHECK(r.code == 3);
  CHECK(r.out.find("not a regular file") != std::string::npos);
}

TEST_CASE("cli run: weights larger than the available memory are refused before loading (issue 14)", "[cli]") {
  // A Llama-3.1-405B-sized shape: 1.6 TB of f32, beyond any test machine.
  const TempDir tmp("big");
  const auto& dir = tmp.path;
  const auto yaml = dir / "huge-405b.yaml";
  std::ofstream(yaml) << "id: huge-405b\nname: huge\npublisher: test\narchitecture: llama\ntokenizer_family: llama3\n"
                         "shape: {layers: 126, hidden: 16384, heads: 128, kv_heads: 8, head_dim: 128, ffn: 53248, vocab: 128256,\n"
                         "  tied_embeddings: false, context: 131072, rope_theta: 500000, rope_layout: adjacent, attention_bias: false, ffn_gated: true}\n"
                         "params: {published_total: 4.05e+11, source: test}\nsources: [{fields: [shape], url: test}]\n";
  if (!std::filesystem::exists("/proc/meminfo")) {
    WARN("skipped: no /proc/meminfo, so run cannot know the available memory");
    return;
  }
  const auto r = run("run --synthetic " + yaml.string() + " --steps 1 --quiet", true);
  CHECK(r.code == 4);
  CHECK(r.out.find("the run needs") != std::string::npos);
  CHECK(r.out.find("(weights ") != std::string::npos);
  CHECK(r.out.find("--force") != std::string::npos);
}

TEST_CASE("cli export: SIGINT while writing leaves no temporary file (issue 14)", "[cli]") {
  const TempDir tmp("sig");
  const auto& dir = tmp.path;
  const std::string out = (dir / "m.gguf").string();
  // Start an export of ~700 MB, wait until its temporary file exists, interrupt it.
  const std::string script = std::string(TRILEMMA_BINARY) + " export --synthetic smollm2-360m --weights f16 --out " + out +
                             " >/dev/null 2>&1 & pid=$!; for i in $(seq 1 600); do ls " + out +
                             ".tmp.* >/dev/null 2>&1 && break; sleep 0.05; done; kill -INT $pid; wait $pid; echo status=$?";
  const auto r = trilemma::testing::run_command("bash -c '" + script + "'");
  INFO(r.out);
  CHECK(r.out.find("status=130") != std::string::npos);  // 128 + SIGINT: ended by the signal
  std::string left;
  for (const auto& e : std::filesystem::directory_iterator(dir)) left += e.path().string() + " ";
  CHECK(left.empty());
}

TEST_CASE("cli verify: SIGTERM ends the engine child too (issue 14)", "[cli]") {
  const TempDir tmp("term");
  const auto& dir = tmp.path;
  const auto host = dir / "host.yaml";
  std::ofstream(host) << "id: host\nname: t\nvendor: t\nclass: desktop\nmemory: {ram_options_gib: [16], default_ram_gib: 16, "
                         "unified: true, type: test, peak_bandwidth_gbps: 20, bandwidth_basis: measured, os_reserve_gib: 2}\n"
                         "cpu: {isa: x86-64, clusters: [{kind: performance, cores: 2, core: test, clock_ghz: 2, fp32_flops_per_cycle: 16}]}\n"
                         "backends: [cpu]\nsources: [{fields: [memory, cpu], basis: test}]\n";
  // Wait for verify's first engine child, stop verify, then look at the child: gone, or a
  // zombie (dead; in a container whose init does not reap, nobody collects it).
  const std::string script = "TRILEMMA_HOST_PROFILE=" + host.string() + " " + TRILEMMA_BINARY +
                             " verify --model smollm2-360m --weights q8_0 --runs 5 --decode-tokens 64 >/dev/null 2>&1 & pid=$!; "
                             "child=; for i in $(seq 1 400); do child=$(pgrep -P $pid | head -1); [ -n \"$child\" ] && break; sleep 0.05; done; "
                             "[ -n \"$child\" ] || { echo no-child; exit 0; }; kill -TERM $pid; wait $pid; sleep 1; "
                             "echo state=$(ps -o stat= -p $child | cut -c1)";
  const auto r = trilemma::testing::run_command("bash -c '" + script + "'");
  INFO(r.out);
  REQUIRE(r.out.find("no-child") == std::string::npos);
  CHECK((r.out.find("state=Z") != std::string::npos || r.out.find("state=\n") != std::string::npos));
}

TEST_CASE("cli verify --replay: a report with fields of the wrong type is bad input (fuzz finding, issue 14)", "[cli]") {
  // "schema": 5 threw a JSON type error (exit 70); "schema_version": 1e20 was an undefined
  // float-to-int conversion.
  const TempDir tmp("replay");
  for (const std::string doc : {R"({"schema": 5, "schema_version": 1})", R"({"schema": "trilemma.verify", "schema_version": 1e20})",
                                R"({"schema": "trilemma.verify", "schema_version": 1, "points": [{"engine_weights": 3}]})"}) {
    CAPTURE(doc);
    std::ofstream(tmp.path / "report.json") << doc;
    const auto r = run("verify --model stories260k --replay " + (tmp.path / "report.json").string(), true);
    CHECK(r.code == 3);
    CHECK(r.out.find("report.json") != std::string::npos);
  }
}

TEST_CASE("cli: one validation of a configuration, for plan's pins and for plan documents read back (issue 14)", "[cli]") {
  for (const std::string bad : {"--window 0", "--draft-len 0", "--ram-gib inf", "--min-tok-s nan", "--max-ttft-ms -5",
                                "--context 4294967295", "--threads 100000", "--prompt 0"}) {
    CAPTURE(bad);
    CHECK(run("plan -m llama-3.2-1b -d apple-m2 " + bad).code == 2);
  }
  CHECK(run("verify --model smollm2-135m --decode-tokens 0").code == 2);
  CHECK(run("verify --model smollm2-135m --tol-decode nan").code == 2);
  // A plan document edited to a configuration plan would refuse: emit refuses it too, by field.
  const TempDir tmp("config");
  const auto plan = run("plan -m llama-3.2-1b -d apple-m2 -s memory --kv-strategy sliding --window 512 --json");
  REQUIRE(plan.code == 0);
  std::string doc = plan.out;
  const auto at = doc.find("\"window\": 512");
  REQUIRE(at != std::string::npos);
  doc.replace(at, 13, "\"window\": 0");
  std::ofstream(tmp.path / "plan.json") << doc;
  const auto emit = run("emit --plan " + (tmp.path / "plan.json").string() + " --format llama.cpp", true);
  CHECK(emit.code == 3);
  CHECK(emit.out.find("chosen.config.window") != std::string::npos);
}

TEST_CASE("cli plan: each KV strategy's parameters are pins from its row; a parameter pins its strategy only where the row says so", "[cli]") {
  // --sinks alone leaves the strategy searched; with --window, sliding is pinned.
  const auto both = run("plan -m llama-3.2-1b -d apple-m2 -s memory --window 512 --sinks 8 --json");
  REQUIRE(both.code == 0);
  const auto doc = nlohmann::json::parse(both.out);
  CHECK(doc["chosen"]["config"]["kv_strategy"] == "sliding");
  CHECK(doc["chosen"]["config"]["window"] == 512);
  CHECK(doc["chosen"]["config"]["sinks"] == 8);
  const auto sinks = run("plan -m llama-3.2-1b -d apple-m2 -s memory --sinks 8 --json");
  REQUIRE(sinks.code == 0);
  std::set<std::string> strategies;
  const auto front = nlohmann::json::parse(sinks.out)["front"];
  for (const auto& f : front) {
    strategies.insert(f["config"]["kv_strategy"].get<std::string>());
    if (f["config"]["kv_strategy"] == "sliding") CHECK(f["config"]["sinks"] == 8);
  }
  CHECK(strategies.size() > 1);
  CHECK(strategies.count("sliding") == 1);
  const auto resident = run("plan -m llama-3.2-1b -d apple-m2 -s memory --kv-resident 0.5 --json");
  REQUIRE(resident.code == 0);
  CHECK(nlohmann::json::parse(resident.out)["chosen"]["config"]["kv_resident_fraction"] == 0.5);
  // A share outside (0, 1] names its flag; a whole number outside its range is CLI11's error.
  const auto share = run("plan -m llama-3.2-1b -d apple-m2 --kv-resident 1.5", true);
  CHECK(share.code == 2);
  CHECK(share.out.find("--kv-resident") != std::string::npos);
  CHECK(run("plan -m llama-3.2-1b -d apple-m2 --sinks 99999999").code == 2);
}

TEST_CASE("cli plan --report / --svg: the page and the plots are written, or nothing and a clear error", "[cli]") {
  const TempDir tmp("report");
  const auto page = tmp.path / "plan.html", dir = tmp.path / "svg";
  const auto r = run("plan -m llama-3.2-1b -d apple-m2 --report " + page.string() + " --svg " + dir.string());
  REQUIRE(r.code == 0);
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("chosen: ") != std::string::npos);  // the text report
  std::size_t svgs = 0;
  for (auto at = html.find("<svg xmlns="); at != std::string::npos; at = html.find("<svg xmlns=", at + 1)) ++svgs;
  CHECK(svgs == 4);
  for (const char* name : {"roofline.svg", "triangle.svg", "tradeoff.svg", "memory.svg"}) CHECK(std::filesystem::file_size(dir / name) > 1000);
  // No plan: the page still carries the text (what to relax); no plots.
  const auto none = run("plan -m llama-3.1-8b -d raspberry-pi-5 -s latency --report " + (tmp.path / "none.html").string());
  CHECK(none.code == 4);
  CHECK(std::filesystem::exists(tmp.path / "none.html"));
  // A directory that cannot be made names the flag's path; nothing is left half-written.
  const auto bad = run("plan -m llama-3.2-1b -d apple-m2 --svg " + page.string() + "/x", true);
  CHECK(bad.code != 0);
  CHECK(bad.out.find(page.string() + "/x") != std::string::npos);
  const auto bad_page = run("plan -m llama-3.2-1b -d apple-m2 --report " + (tmp.path / "no/such/dir/p.html").string(), true);
  CHECK(bad_page.code != 0);
  CHECK_FALSE(std::filesystem::exists(tmp.path / "no"));
}

TEST_CASE("cli verify --report / --svg: predicted against measured per figure, beside the text report", "[cli]") {
  const TempDir tmp("verify-report");
  const auto host = tmp.path / "host.yaml";
  std::filesystem::copy_file(std::filesystem::path(TRILEMMA_SOURCE_DIR) / "tests/gate/fixtures/ci-host.yaml", host);
  const auto r = run("verify -m stories260k --runs 1 --prompt-tokens 16 --decode-tokens 8 --device " + host.string() + " --report " +
                     (tmp.path / "verify.html").string() + " --svg " + (tmp.path / "svg").string());
  REQUIRE((r.code == 0 || r.code == 1));  // within tolerance or not, the pictures are written
  for (const char* name : {"predicted-decode_tok_s.svg", "predicted-ttft_ms.svg", "predicted-peak_memory_bytes.svg"})
    CHECK(std::filesystem::file_size(tmp.path / "svg" / name) > 1000);
  std::ifstream in(tmp.path / "verify.html");
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t svgs = 0;
  for (auto at = html.find("<svg xmlns="); at != std::string::npos; at = html.find("<svg xmlns=", at + 1)) ++svgs;
  CHECK(svgs == 3);
  CHECK(html.find("verify: stories260k") != std::string::npos);
}

TEST_CASE("cli run: a .gguf without the GGUF magic is reported as such, not as a llama2.c header (issue 14)", "[cli]") {
  const TempDir tmp("magic");
  const auto file = (tmp.path / "fake.gguf").string();
  std::ofstream(file) << "XXXX not a model at all";
  const auto r = run("run --model " + file + " --steps 1 --quiet", true);
  CHECK(r.code == 3);
  CHECK(r.out.find("not a GGUF file") != std::string::npos);
  CHECK(r.out.find("header") == std::string::npos);
}

TEST_CASE("cli: a misspelt command or option is named, with the nearest one (issue 15)", "[cli]") {
  using trilemma::testing::run_trilemma;
  const auto cmd = run_trilemma("plna", true);
  CHECK(cmd.code == 2);
  CHECK(cmd.out.find("unknown command 'plna' (did you mean 'plan'?)") != std::string::npos);
  // CLI11 alone said "--model is required" here.
  const auto opt = run_trilemma("plan --modle llama-3.2-1b -d apple-m2", true);
  CHECK(opt.code == 2);
  CHECK(opt.out.find("unknown option '--modle' for 'plan' (did you mean '--model'?)") != std::string::npos);
  const auto sub = run_trilemma("devices shwo apple-m2", true);
  CHECK(sub.out.find("unknown command 'shwo' for 'devices' (did you mean 'show'?)") != std::string::npos);
  // Nothing near: named without a guess; a missing option is still reported as missing.
  CHECK(run_trilemma("plan -m llama-3.2-1b -d apple-m2 --zzzzzz", true).out.find("unknown option '--zzzzzz' for 'plan'\n") !=
        std::string::npos);
  CHECK(run_trilemma("plan -m llama-3.2-1b", true).out.find("--device is required") != std::string::npos);
  // Values of options are not commands or options: this one parses.
  CHECK(run_trilemma("plan -m llama-3.2-1b -d apple-m2 --scenario memory --context 512").code == 0);
}

TEST_CASE("cli completion: bash, zsh and fish scripts from the command tree complete commands and flags (issue 15)", "[cli]") {
  using trilemma::testing::run_command;
  using trilemma::testing::run_trilemma;
  const auto script = std::filesystem::temp_directory_path() / "trilemma_completion.bash";
  REQUIRE(run_command(std::string(TRILEMMA_BINARY) + " completion bash > " + script.string()).code == 0);
  REQUIRE(run_command("bash -n " + script.string()).code == 0);
  // COMP_WORDS as bash fills it for "trilemma pl<TAB>", "trilemma plan --mo<TAB>", "trilemma devices s<TAB>".
  const auto complete = [&](const std::string& words, int cword) {
    return run_command("bash -c 'source " + script.string() + "; COMP_WORDS=(" + words + "); COMP_CWORD=" +
                       std::to_string(cword) + "; _trilemma; echo \"${COMPREPLY[*]}\"'").out;
  };
  CHECK(complete("trilemma pl", 1) == "plan\n");
  CHECK(complete("trilemma plan --mo", 2) == "--model\n");
  CHECK(complete("trilemma devices s", 2) == "show\n");
  CHECK(complete("trilemma fidelity --acc", 2) == "--accuracy\n");
  // Values from the tables the commands read (issue 50): ids, scenarios, targets, formats.
  CHECK(complete("trilemma plan --device raspberry-pi-", 3) == "raspberry-pi-4 raspberry-pi-5\n");
  CHECK(complete("trilemma plan -d ho", 3) == "host\n");
  CHECK(complete("trilemma plan -m qwen2.5-0.5", 3) == "qwen2.5-0.5b\n");
  CHECK(complete("trilemma plan --scenario lat", 3) == "latency\n");
  CHECK(complete("trilemma emit --format plan-", 3) == "plan-json plan-yaml\n");
  CHECK(complete("trilemma plan --kv-strategy sl", 3) == "sliding\n");
  CHECK(complete("trilemma plan --weights q4_k_", 3).find("q4_k_m") != std::string::npos);
  CHECK(complete("trilemma gate --model qwen2.5-0.5", 3) == "qwen2.5-0.5b\n");
  std::filesystem::remove(script);
  const auto zsh = run_trilemma("completion zsh");
  CHECK(zsh.out.find("bashcompinit") != std::string::npos);
  const auto fish = run_trilemma("completion fish");
  CHECK(fish.out.find("complete -c trilemma -n '__fish_use_subcommand' -f -a plan") != std::string::npos);
  CHECK(fish.out.find("complete -c trilemma -n '__fish_seen_subcommand_from plan' -l model") != std::string::npos);
  CHECK(fish.out.find("complete -c trilemma -n '__fish_seen_subcommand_from plan' -l device -r -a 'host ") != std::string::npos);
  CHECK(run_trilemma("completion tcsh").code == 2);
}

TEST_CASE("cli plan/gate --measured-kl: a measured KLD calibrates the accuracy prior (issue 13)", "[cli]") {
  TempDir dir("measured-kl");
  const auto plan_json = [](const std::string& extra) {
    const Run r = run("plan -m llama-3.2-1b -d apple-m2 -s latency --weights q4_k_m --imatrix no --kv f16 --kv-strategy contiguous --json " + extra);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto prior = plan_json("");
  const double predicted = prior["chosen"]["accuracy"]["kld"]["mid"].get<double>();
  REQUIRE(predicted > 0);
  // Measured twice the prediction at the planned format: the plan now predicts the measurement.
  const auto calibrated = plan_json("--measured-kl q4_k_m=" + std::to_string(2 * predicted));
  CHECK(calibrated["chosen"]["accuracy"]["kld"]["mid"].get<double>() == Approx(2 * predicted).epsilon(1e-3));
  CHECK(calibrated.dump().find("calibrated x2") != std::string::npos);
  CHECK(calibrated["chosen"]["config"].value("imatrix", false) == false);
  // Measured with an importance matrix: the plan without one is predicted to lose more.
  const auto imatrix = plan_json("--measured-kl q4_k_m+imatrix=" + std::to_string(2 * predicted));
  CHECK(imatrix["chosen"]["accuracy"]["kld"]["mid"].get<double>() > 2 * predicted);

  // llama-perplexity output and `trilemma eval --json` output are read too.
  {
    std::ofstream log(dir.path / "kld.log");
    log << "llama_perf_context_print: ...\n0.13.291.205 I Mean    KLD:   " << 2 * predicted << " ±   0.000456\nSame top p: 93.4 %\n";
  }
  const auto from_log = plan_json("--measured-kl q4_k_m=" + (dir.path / "kld.log").string());
  CHECK(from_log["chosen"]["accuracy"]["kld"]["mid"].get<double>() == Approx(2 * predicted).epsilon(1e-3));
  {
    std::ofstream eval(dir.path / "eval.json");
    eval << R"({"schema": "trilemma.eval", "schema_version": 1, "synthetic": false, "weights": "q4_k_m", "kv": "f16", "kl_mean": )"
         << 2 * predicted << "}";
  }
  const auto from_eval = plan_json("--measured-kl " + (dir.path / "eval.json").string());
  CHECK(from_eval["chosen"]["accuracy"]["kld"]["mid"].get<double>() == Approx(2 * predicted).epsilon(1e-3));

  // Bad input: usage errors (2) for names, input errors (3) for files, each naming the problem.
  Run r = run("plan -m llama-3-8b -d apple-m2 --measured-kl q9=0.1", true);
  CHECK(r.code == 2);
  CHECK(r.out.find("unknown weight format 'q9'") != std::string::npos);
  CHECK(run("plan -m llama-3-8b -d apple-m2 --measured-kl f16=0.1").code == 2);
  CHECK(run("plan -m llama-3-8b -d apple-m2 --measured-kl q4_0=-1").code == 3);
  r = run("plan -m llama-3-8b -d apple-m2 --measured-kl q4_0=" + (dir.path / "eval.json").string(), true);
  CHECK(r.code == 3);
  CHECK(r.out.find("Mean    KLD:") != std::string::npos);
  {
    std::ofstream eval(dir.path / "synthetic.json");
    eval << R"({"schema": "trilemma.eval", "synthetic": true, "weights": "q4_0", "kv": "f16", "kl_mean": 0.1})";
  }
  r = run("plan -m llama-3-8b -d apple-m2 --measured-kl " + (dir.path / "synthetic.json").string(), true);
  CHECK(r.code == 3);
  CHECK(r.out.find("synthetic") != std::string::npos);
  const std::string budgets = std::string(TRILEMMA_SOURCE_DIR) + "/examples/budgets/phone.yaml";
  CHECK(run("gate -b " + budgets + " -m llama-3-8b -m llama-3.2-1b --measured-kl q4_0=0.1").code == 2);
  // One model: the gate plans with the calibrated prior. A collapse-level KLD at q4_k_m moves it
  // off the 4-bit formats it picks with the prior.
  r = run("gate -b " + budgets + " -m llama-3.2-1b");
  CHECK(r.code == 0);
  CHECK((r.out.find("plan q4_k_m") != std::string::npos || r.out.find("plan q4_0") != std::string::npos));
  r = run("gate -b " + budgets + " -m llama-3.2-1b --measured-kl q4_k_m=3");
  CHECK(r.out.find("plan q4_k_m") == std::string::npos);
  CHECK(r.out.find("plan q4_0") == std::string::npos);
}
