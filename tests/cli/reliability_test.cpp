// The reproducers of ../shared/reliability/README.md (D1-D26) as regression tests of the real
// binary. Their inputs are built here, in code, from files trilemma writes itself (a synthetic
// model exported to GGUF and patched, YAML and JSON written out): nothing is copied from
// ../shared, so these run everywhere, in the sanitizer build too. Each case names its defect.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/json_output.hpp"
#include "run_binary.hpp"
#include "xml_check.hpp"

namespace fs = std::filesystem;
using trilemma::testing::Run;

namespace {

struct Dir {
  fs::path path;
  explicit Dir(const std::string& name) : path(fs::temp_directory_path() / ("trilemma-rel-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  // `trilemma ARGS` run in this folder, stderr with stdout, at most `seconds` (a hang fails).
  Run run(const std::string& args, int seconds = 60) const {
    return trilemma::testing::run_command("cd '" + path.string() + "' && timeout " + std::to_string(seconds) + " " +
                                          TRILEMMA_BINARY + " " + args + " 2>&1");
  }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path / name, std::ios::binary) << text; }
  std::string read(const std::string& name) const {
    std::ifstream in(path / name, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

bool has(const Run& r, const std::string& text) { return r.out.find(text) != std::string::npos; }

// UTF-8 as RFC 3629 has it (lead bytes and continuations; overlongs and surrogates aside).
bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 && c >= 0xC2 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 && c <= 0xF4 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

// A GGUF of a small synthetic llama (stories260K's shape, f32), written by `export`, as bytes.
std::vector<char> synthetic_gguf(const Dir& d) {
  const auto r = d.run("export --synthetic stories260k --weights f32 --out base.gguf");
  REQUIRE(r.code == 0);
  const std::string s = d.read("base.gguf");
  return {s.begin(), s.end()};
}

// The offset of metadata key `key`'s value (after its type), found by its bytes.
std::size_t value_of(const std::vector<char>& g, const std::string& key) {
  const std::string needle = key;
  const auto it = std::search(g.begin(), g.end(), needle.begin(), needle.end());
  REQUIRE(it != g.end());
  return std::size_t(it - g.begin()) + key.size() + 4;  // the key's bytes, then its u32 type
}

void save(const Dir& d, const std::string& name, const std::vector<char>& g) {
  std::ofstream(d.path / name, std::ios::binary).write(g.data(), std::streamsize(g.size()));
}

const char* k_budgets_ok = "version: 1\nbudgets:\n  - name: pi\n    device: raspberry-pi-5\n    scenario: memory\n    context: 2048\n"
                           "    limits: {min_decode_tok_s: 1, max_memory_gib: 6}\n";

}  // namespace

TEST_CASE("reliability D1, D6: NaN logits are an input error naming them, in run's sampler and in eval", "[cli][reliability]") {
  Dir d("nan");
  auto g = synthetic_gguf(d);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(&g[value_of(g, "llama.attention.layer_norm_rms_epsilon")], &nan, 4);
  save(d, "eps-nan.gguf", g);
  const auto run = d.run("run --model eps-nan.gguf --steps 8 --threads 1 --temperature 0.8 --top-p 0.9");
  CHECK(run.code == 3);
  CHECK(has(run, "non-finite logit"));
  d.write("text.txt", "Once upon a time there was a little girl who liked to play in the park with her dog.\n");
  const auto eval = d.run("eval --model eps-nan.gguf --weights q8_0 --text text.txt --threads 1");
  CHECK(eval.code == 3);
  CHECK(has(eval, "non-finite logit"));
}

TEST_CASE("reliability D2: a prompt that encodes to no tokens, without a BOS, is refused before speculating", "[cli][reliability]") {
  Dir d("nobos");
  auto g = synthetic_gguf(d);
  g[value_of(g, "tokenizer.ggml.add_bos_token")] = 0;  // the bool after its type
  save(d, "no-bos.gguf", g);
  const auto r = d.run("run --model no-bos.gguf --prompt \"\" --steps 4 --threads 1 --draft self --draft-weights q8_0");
  CHECK(r.code == 2);
  CHECK(has(r, "encodes to no tokens"));
}

TEST_CASE("reliability D3, D12: run's integer and size flags are range-checked; a huge window costs the context", "[cli][reliability]") {
  Dir d("flags");
  for (const auto& [args, flag] : std::vector<std::pair<std::string, std::string>>{
           {"--kv-strategy paged --page-size 2147483647", "--page-size"},
           {"--kv-strategy sliding --window 2147483647", "--window"},
           {"--steps 2147483647", "--steps"},
           {"--kv-strategy offload --kv-resident-mib 1e30", "--kv-resident-mib"},
           {"--kv-strategy sliding --window 8 --sinks 2147483647", "--sinks"},
           {"--context -1", "--context"}}) {
    CAPTURE(args);
    const auto r = d.run("run --synthetic stories260k --threads 1 " + args);
    CHECK(r.code == 2);
    CHECK(has(r, flag));
  }
  // A window of a million positions over a 16-token run: the cache holds the run, and the
  // report's breakdown is what was allocated.
  const auto r = d.run("run --synthetic stories260k --threads 1 --steps 8 --kv-strategy sliding --window 1000000 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  CHECK(j["kv_allocated_bytes"].get<double>() < 1e6);
  CHECK(j["peak_rss_bytes"].get<double>() < 200e6);
}

TEST_CASE("reliability D4: a newline in a plan's ids cannot reach an emitted script", "[cli][reliability]") {
  Dir d("inject");
  const auto plan = d.run("plan -m qwen2.5-0.5b -d raspberry-pi-5 -s memory --json");
  REQUIRE(plan.code == 0);
  for (const auto& [object, key] : std::vector<std::pair<std::string, std::string>>{{"model", "id"}, {"device", "id"}}) {
    auto j = nlohmann::json::parse(plan.out);
    j[object][key] = "qwen\ntouch injected-by-emit\n#";
    d.write("hostile.json", j.dump());
    for (const char* format : {"llama.cpp", "ollama", "mlc-llm"}) {
      CAPTURE(object, format);
      const auto r = d.run(std::string("emit --plan hostile.json --format ") + format + " --out out.sh");
      CHECK(r.code == 3);
      CHECK(has(r, object + "." + key));
      CHECK_FALSE(fs::exists(d.path / "out.sh"));
    }
  }
}

TEST_CASE("reliability D5: negative calibration values are refused, naming the field", "[cli][reliability]") {
  Dir d("negcal");
  const auto show = d.run("devices show raspberry-pi-5 --json");
  REQUIRE(show.code == 0);
  // The Pi 5's own file, with a calibration that would make memory negative.
  std::ifstream in(std::string(TRILEMMA_SOURCE_DIR) + "/devices/raspberry-pi-5.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  for (const auto& [name, block] : std::vector<std::pair<std::string, std::string>>{
           {"neg-overhead", "calibration:\n  fitted_on: test\n  backends:\n    cpu:\n      overhead_ms: -100000\n"},
           {"neg-runtime", "calibration:\n  fitted_on: test\n  backends:\n    cpu:\n      runtime_mib: -1000000\n"}}) {
    std::string yaml = ss.str();
    yaml.replace(yaml.find("id: raspberry-pi-5"), std::strlen("id: raspberry-pi-5"), "id: " + name);
    d.write(name + ".yaml", yaml + block);
    CAPTURE(name);
    const auto validate = d.run("devices validate " + name + ".yaml");
    CHECK(validate.code == 3);
    const auto plan = d.run("plan -m qwen2.5-14b -d " + name + ".yaml --scenario memory --backend cpu");
    CHECK(plan.code == 3);
    CHECK(has(plan, "calibration.backends.cpu."));
  }
}

TEST_CASE("reliability D7: llama-bench rates no device has are refused, and calibrate always ends", "[cli][reliability]") {
  Dir d("ts");
  for (const char* ts : {"1e308", "1e-308"}) {
    d.write("bench.csv",
            "build_commit,build_number,model_filename,model_type,model_size,model_n_params,n_threads,n_prompt,n_gen,avg_ts\n"
            "x,1,tl.gguf,llama 1B Q4_0,619094016,1100048384,4,64,0," + std::string(ts) + "\n"
            "x,1,tl.gguf,llama 1B Q4_0,619094016,1100048384,4,0,16," + std::string(ts) + "\n");
    const auto r = d.run("calibrate --device raspberry-pi-5 --from bench.csv --model tinyllama-1.1b --out c.yaml", 30);
    CAPTURE(ts, r.out);
    CHECK(r.code == 3);
    CHECK(has(r, "bench.csv:2: avg_ts"));
    CHECK_FALSE(fs::exists(d.path / "c.yaml"));
  }
}

TEST_CASE("reliability D8, D10: wrongly typed or out-of-range JSON fields are input errors naming the field", "[cli][reliability]") {
  Dir d("json");
  d.write("kl.json", R"({"schema": 5})");
  auto r = d.run("plan -m qwen2.5-0.5b -d raspberry-pi-5 --measured-kl kl.json");
  CHECK(r.code == 3);
  CHECK(has(r, "kl.json:schema"));

  d.write("budgets.yaml", k_budgets_ok);
  const auto base = d.run("gate --budgets budgets.yaml --model qwen2.5-0.5b --json");
  REQUIRE(base.code == 0);
  auto g = nlohmann::json::parse(base.out);
  g["results"][0]["status"] = 7;
  d.write("baseline.json", g.dump());
  r = d.run("gate --budgets budgets.yaml --model qwen2.5-0.5b --baseline baseline.json");
  CHECK(r.code == 3);
  CHECK(has(r, "results[0].status"));

  const auto plan = d.run("plan -m qwen2.5-0.5b -d raspberry-pi-5 -s memory --json");
  auto p = nlohmann::json::parse(plan.out);
  p["model"]["id"] = 5;
  d.write("plan.json", p.dump());
  r = d.run("verify --plan plan.json --runs 1 --prompt-tokens 4 --decode-tokens 2 --threads 1");
  CHECK(r.code == 3);
  CHECK(has(r, "plan.json:model.id"));

  // A run report with a thread count of 1e20 or a negative window: refused, not converted.
  const auto run = d.run("run --synthetic stories260k --steps 4 --threads 1 --json");
  REQUIRE(run.code == 0);
  const auto report = nlohmann::json::parse(run.out.substr(run.out.find('{')));
  auto threads = report;
  threads["threads"] = 1e20;
  d.write("threads.json", threads.dump());
  r = d.run("calibrate --device raspberry-pi-5 --from threads.json --out c.yaml");
  CHECK(r.code == 3);
  CHECK(has(r, "threads.json:threads"));
  auto window = report;
  window["kv_config"]["strategy"] = "sliding";
  window["kv_config"]["window"] = -5;
  d.write("window.json", window.dump());
  r = d.run("calibrate --device raspberry-pi-5 --from window.json --out c.yaml");
  CHECK(r.code == 3);
  CHECK(has(r, "kv_config.window"));
  CHECK_FALSE(fs::exists(d.path / "c.yaml"));
}

TEST_CASE("reliability D9, D14: unusable paths (too long, a symlink loop, a FIFO) are input errors, never a hang", "[cli][reliability]") {
  Dir d("paths");
  auto r = d.run("run --model " + std::string(5000, 'a'));
  CHECK(r.code == 3);
  fs::create_symlink("loop1", d.path / "loop2");
  fs::create_symlink("loop2", d.path / "loop1");
  r = d.run("export --model loop1 --weights q8_0 --out x.gguf");
  CHECK(r.code == 3);
  r = d.run("devices validate loop1");
  CHECK(r.code == 3);
  REQUIRE(::mkfifo((d.path / "fifo").c_str(), 0600) == 0);
  for (const std::string args : {"run --model fifo --steps 2", "run --synthetic stories260k --tokenizer fifo --steps 2",
                                 "models inspect fifo", "plan -m fifo -d raspberry-pi-5",
                                 "verify --model stories260k --model-file fifo --runs 1"}) {
    CAPTURE(args);
    r = d.run(args, 20);
    CHECK(r.code == 3);  // 124 would be the timeout: a hang
  }
}

TEST_CASE("reliability D11: fidelity's folds run on the threads the system grants", "[cli][reliability]") {
  if (trilemma::testing::skip_under_address_sanitizer()) return;
  Dir d("threads");
  const auto r = trilemma::testing::run_command("cd '" + d.path.string() + "' && ulimit -v 1000000 && timeout 300 " +
                                                TRILEMMA_BINARY + " fidelity --method lodo --threads 64 2>&1");
  CHECK(r.code == 0);
  CHECK(has(r, "decode_tok_s"));
}

TEST_CASE("reliability D15-D17, D21: output files: all or none, symlinks followed, modes kept, read-only refused", "[cli][reliability]") {
  Dir d("files");
  const auto plan = d.run("plan -m qwen2.5-0.5b -d raspberry-pi-5 -s memory --out plan.json");
  REQUIRE(plan.code == 0);
  // D15: the companion file cannot be written: the user's first file is untouched.
  d.write("run.sh", "USER SCRIPT\n");
  fs::create_directory(d.path / "run.sh.args");
  auto r = d.run("emit --plan plan.json --format llama.cpp --out run.sh");
  CHECK(r.code == 5);
  CHECK(d.read("run.sh") == "USER SCRIPT\n");
  // D16: a dangling symlink is written through; the link stays a link.
  fs::create_symlink("target.json", d.path / "link.json");
  r = d.run("plan -m qwen2.5-0.5b -d raspberry-pi-5 -s memory --out link.json");
  CHECK(r.code == 0);
  CHECK(fs::is_symlink(d.path / "link.json"));
  CHECK(fs::file_size(d.path / "target.json") > 1000);
  // D21: a file's mode is kept; a read-only file is refused; hard links keep seeing the file.
  d.write("private.json", "x");
  fs::permissions(d.path / "private.json", fs::perms::owner_read | fs::perms::owner_write);
  CHECK(d.run("plan -m qwen2.5-0.5b -d raspberry-pi-5 -s memory --out private.json").code == 0);
  CHECK((fs::status(d.path / "private.json").permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
  d.write("ro.json", "keep me");
  fs::permissions(d.path / "ro.json", fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  r = d.run("plan -m qwen2.5-0.5b -d raspberry-pi-5 -s memory --out ro.json");
  CHECK(r.code == 5);
  CHECK(has(r, "read-only"));
  CHECK(d.read("ro.json") == "keep me");
  d.write("h1.json", "old");
  fs::create_hard_link(d.path / "h1.json", d.path / "h2.json");
  CHECK(d.run("plan -m qwen2.5-0.5b -d raspberry-pi-5 -s memory --out h1.json").code == 0);
  CHECK(fs::hard_link_count(d.path / "h1.json") == 2);
  CHECK(d.read("h2.json") == d.read("h1.json"));
  CHECK(d.read("h2.json").find("trilemma.plan") != std::string::npos);
  // No temporary file is left behind by any of these.
  for (const auto& e : fs::directory_iterator(d.path)) CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
}

TEST_CASE("reliability D18: a device figure past any device is refused; no chart gets NaN coordinates", "[cli][reliability]") {
  Dir d("clock");
  std::ifstream in(std::string(TRILEMMA_SOURCE_DIR) + "/devices/raspberry-pi-5.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string yaml = ss.str();
  yaml.replace(yaml.find("id: raspberry-pi-5"), std::strlen("id: raspberry-pi-5"), "id: clock-huge");
  const auto at = yaml.find("clock_ghz: ");
  REQUIRE(at != std::string::npos);
  yaml.replace(at, yaml.find('\n', at) - at, "clock_ghz: 1e308");
  d.write("clock-huge.yaml", yaml);
  const auto r = d.run("plan -m qwen2.5-0.5b -d clock-huge.yaml --report r.html");
  CHECK(r.code == 3);
  CHECK(has(r, "clock_ghz: must be at most"));
  CHECK_FALSE(fs::exists(d.path / "r.html"));
}

TEST_CASE("reliability D19: JUnit stays well-formed XML whatever bytes a model's path holds", "[cli][reliability]") {
  Dir d("junit");
  REQUIRE(d.run("export --synthetic stories260k --weights q8_0 --out base.gguf").code == 0);
  const std::string odd = "m\xff\xfe\xc0.gguf";  // not UTF-8
  fs::rename(d.path / "base.gguf", d.path / odd);
  d.write("budgets.yaml", k_budgets_ok);
  const auto r = d.run("gate --budgets budgets.yaml --model '" + odd + "' --junit gate.xml");
  CAPTURE(r.out);
  REQUIRE(fs::exists(d.path / "gate.xml"));
  const auto xml = d.read("gate.xml");
  CHECK(trilemma::testing::xml_problem(xml) == "");
  CHECK(valid_utf8(xml));  // an XML parser refuses a document that is not
}

TEST_CASE("reliability D20, D22: a profile's id and an export's name are derived, never a raw file name or path", "[cli][reliability]") {
  Dir d("names");
  d.write("bench.csv",
          "build_commit,build_number,model_filename,model_type,model_size,model_n_params,n_threads,n_prompt,n_gen,avg_ts\n"
          "x,1,tl.gguf,llama 1B Q4_0,619094016,1100048384,4,64,0,40\n"
          "x,1,tl.gguf,llama 1B Q4_0,619094016,1100048384,4,0,16,9\n");
  auto r = d.run("calibrate --device raspberry-pi-5 --from bench.csv --model tinyllama-1.1b --out 'My Device.yaml'");
  CHECK((r.code == 0 || r.code == 1));
  CHECK(d.read("My Device.yaml").rfind("id: my-device\n", 0) == 0);
  CHECK(d.run("plan -m tinyllama-1.1b -d 'My Device.yaml' -s memory").code == 0);
  REQUIRE(d.run("export --synthetic stories260k --weights f32 --out src.gguf").code == 0);
  REQUIRE(d.run("export --model " + (d / "src.gguf") + " --weights q8_0 --out out.gguf").code == 0);
  const auto exported = d.read("out.gguf");
  CHECK(exported.find(d.path.string()) == std::string::npos);  // no local path inside
}

TEST_CASE("reliability D23, D24, D26: YAML with a key twice or two documents, a prompt past its context, a huge id", "[cli][reliability]") {
  Dir d("yaml");
  std::ifstream in(std::string(TRILEMMA_SOURCE_DIR) + "/devices/raspberry-pi-5.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string yaml = ss.str();
  yaml.replace(yaml.find("id: raspberry-pi-5"), std::strlen("id: raspberry-pi-5"), "id: dup-key");
  const auto vendor = yaml.find("vendor: ");
  d.write("dup-key.yaml", yaml.substr(0, vendor) + "vendor: Other\n" + yaml.substr(vendor));
  auto r = d.run("devices validate dup-key.yaml");
  CHECK(r.code == 3);
  CHECK(has(r, "vendor: a key given twice"));
  d.write("two-docs.yaml", std::string(k_budgets_ok) + "---\n" + k_budgets_ok);
  r = d.run("gate --budgets two-docs.yaml --model qwen2.5-0.5b");
  CHECK(r.code == 3);
  CHECK(has(r, "a second YAML document"));
  d.write("prompt.yaml", "version: 1\nbudgets:\n  - name: pi\n    device: raspberry-pi-5\n    scenario: memory\n    context: 16\n"
                         "    prompt: 100000\n    limits: {max_memory_gib: 6}\n");
  r = d.run("gate --budgets prompt.yaml --model qwen2.5-0.5b");
  CHECK(r.code == 3);
  CHECK(has(r, "budgets[0].prompt"));
  d.write("huge.yaml", "version: 1\nbudgets:\n  - name: pi\n    device: " + std::string(5'000'000, 'a') +
                           "\n    scenario: memory\n    context: 16\n    limits: {max_memory_gib: 6}\n");
  r = d.run("gate --budgets huge.yaml --model qwen2.5-0.5b", 10);
  CHECK(r.code == 3);
  CHECK(has(r, "budgets[0].device: is 5000000 characters long"));
}

TEST_CASE("reliability: every document a command prints holds only finite figures, no amount below zero", "[cli][reliability]") {
  // json_text refuses to print one that does (exit 3 naming the field), so each of these
  // exiting normally is one check; the documents are also walked here with the same rule
  // (cli/json_output.hpp: any NaN or infinity, a negative figure under an amount's key).
  Dir d("docs");
  save(d, "synthetic.gguf", synthetic_gguf(d));
  d.write("text.txt", "Once upon a time there was a little girl who liked to play in the park with her dog.\n");
  for (const std::string args :
       {"plan -m qwen2.5-0.5b -d raspberry-pi-5 -s memory --json", "plan -m llama-3.2-1b -d snapdragon-8-gen-3 --json",
        "plan -m qwen2.5-0.5b -d rtx-4090 -s accuracy --json", "plan -m smollm2-135m -d esp32-s3 -s memory --json",
        "plan -m qwen2.5-0.5b -d host -s latency --json",
        "run --synthetic stories260k --steps 8 --threads 1 --json",
        "run --model synthetic.gguf --steps 8 --threads 1 --draft self --draft-weights q8_0 --json",
        "eval --model synthetic.gguf --weights q8_0 --text text.txt --threads 1 --json",
        "verify --model stories260k --weights q8_0 --runs 1 --prompt-tokens 16 --decode-tokens 8 --threads 1 --json",
        "requirements -m qwen2.5-0.5b --json"}) {
    CAPTURE(args);
    const auto r = d.run(args);
    CHECK((r.code == 0 || r.code == 1 || r.code == 4));  // verify: 1 when a figure misses its tolerance
    REQUIRE(r.out.find('{') != std::string::npos);
    const auto doc = nlohmann::json::parse(r.out.substr(r.out.find('{')));
    CHECK(trilemma::cli::impossible_figure(doc) == "");
  }
  // The rule catches what it must.
  CHECK(trilemma::cli::impossible_figure(nlohmann::json{{"chosen", {{"decode_tok_s", -1.0}}}}) == "chosen.decode_tok_s = -1.000000 (an amount below zero)");
  CHECK(trilemma::cli::impossible_figure(nlohmann::json{{"points", {{{"ttft_ms", {{"low", 2.0}, {"high", std::nan("")}}}}}}}) != "");
  CHECK(trilemma::cli::impossible_figure(nlohmann::json{{"bias_pct", -12.0}, {"error_pct", -3}}) == "");
}
