// Black-box tests of `trilemma gate` and `trilemma emit`: the CI example end to end (a phone, a
// laptop and a fixture host profile via TRILEMMA_HOST_PROFILE, two models, one failing) against
// golden reports, exit codes as documented, and bad input. TRILEMMA_UPDATE_GOLDEN=1 rewrites.
#include <catch2/catch.hpp>

#include "golden.hpp"
#include "run_binary.hpp"
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

using trilemma::testing::Run;

const fs::path k_fixtures = fs::path(TRILEMMA_SOURCE_DIR) / "tests/gate/fixtures";

// A scratch directory holding the CI example; commands run inside it so reports name
// "budgets.yaml", not a temporary path.
fs::path workdir() {
  const auto dir = fs::temp_directory_path() / "trilemma-gate-cli-test";
  fs::create_directories(dir);
  fs::copy_file(k_fixtures / "ci-budgets.yaml", dir / "budgets.yaml", fs::copy_options::overwrite_existing);
  fs::copy_file(k_fixtures / "ci-host.yaml", dir / "ci-host.yaml", fs::copy_options::overwrite_existing);
  return dir;
}

Run run(const std::string& args, bool with_stderr = false) {
  const auto dir = workdir();
  return trilemma::testing::run_trilemma(
      args, with_stderr, "cd " + dir.string() + " && TRILEMMA_HOST_PROFILE=" + (dir / "ci-host.yaml").string() + " ");
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void check_golden(const std::string& name, const std::string& actual) {
  trilemma::testing::check_golden("gate", name, actual);
}

const std::string k_ci = "gate --budgets budgets.yaml --model qwen2.5-0.5b --model llama-3.1-8b";

}  // namespace

TEST_CASE("cli gate: the CI example, phone + laptop + host, two models, one failing (golden)", "[cli][gate]") {
  const auto dir = workdir();
  fs::remove(dir / "gate.xml");
  fs::remove(dir / "gate.json");
  const auto r = run(k_ci + " --junit gate.xml --out gate.json --github");
  CHECK(r.code == 1);
  check_golden("ci-report.txt", r.out);
  check_golden("ci-junit.xml", read(dir / "gate.xml"));
  const auto json = run(k_ci + " --json");
  CHECK(json.code == 1);
  CHECK(json.out == read(dir / "gate.json"));  // --out writes what --json prints
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["summary"]["total"] == 6);
  CHECK(j["summary"]["failed"] == 2);
  CHECK(j["results"][2]["device"] == "host");
  CHECK(j["results"][2]["status"] == "pass");
}

TEST_CASE("cli gate --report / --svg: the grid of the CI example, one cell per model x budget, beside the summary", "[cli][gate]") {
  const auto dir = workdir();
  fs::remove_all(dir / "pictures");
  fs::remove(dir / "gate.html");
  const auto r = run(k_ci + " --report gate.html --svg pictures");
  CHECK(r.code == 1);  // the example fails a budget; the pictures are written all the same
  const std::string svg = read(dir / "pictures/gate.svg"), html = read(dir / "gate.html");
  std::size_t cells = 0;
  for (const char* cls : {"<rect class=\"pass\" x=", "<rect class=\"fail\" x="})
    for (auto at = svg.find(cls); at != std::string::npos; at = svg.find(cls, at + 1)) ++cells;
  CHECK(cells == 6 + 2);  // 2 models x 3 budgets, and the legend's two samples
  CHECK(svg.find("budgets.yaml, 4 of 6 pass") != std::string::npos);
  CHECK(html.find("<svg xmlns=") != std::string::npos);
  CHECK(html.find("result: FAIL") != std::string::npos);  // the text summary
}

TEST_CASE("cli gate --verify: host budgets are checked against the engine's measurement", "[cli][gate]") {
  const auto dir = workdir();
  fs::copy_file(k_fixtures / "verify-budgets.yaml", dir / "verify-budgets.yaml", fs::copy_options::overwrite_existing);
  const auto r = run("gate --budgets verify-budgets.yaml --model stories260k --verify --json");
  CHECK(r.code == 0);  // 260K parameters decode far above 1 tok/s in far less than 4 GiB
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["results"].size() == 1);
  CHECK(j["results"][0]["message"].get<std::string>().find("as measured (synthetic weights") != std::string::npos);
  // Planned with formats the engine runs.
  const std::string w = j["results"][0]["config"]["weights"].get<std::string>();
  CHECK((w == "f32" || w == "bf16" || w == "f16" || w == "q8_0" || w == "q4_0" || w == "int3" || w == "int2"));
}

TEST_CASE("cli gate: exit codes as documented", "[cli][gate]") {
  CHECK(run("gate --budgets budgets.yaml --model qwen2.5-0.5b").code == 0);
  CHECK(run(k_ci).code == 1);
  CHECK(run("gate --budgets budgets.yaml").code == 2);                               // no model
  CHECK(run("gate --model qwen2.5-0.5b").code == 2);                                 // no budgets
  CHECK(run("gate --budgets budgets.yaml --model qwen2.5-0.5b --frobnicate").code == 2);
  CHECK(run("gate --budgets budgets.yaml --model qwen2.5-0.5b --margin-pct -1").code == 2);
  CHECK(run("gate --budgets budgets.yaml --model qwen2.5-0.5b --json --github").code == 2);
  CHECK(run("gate --budgets budgets.yaml --model no-such-model").code == 3);
  const auto bad = run("gate --budgets " + (fs::path(TRILEMMA_SOURCE_DIR) / "tests/gate/data/negative-value.yaml").string() +
                           " --model qwen2.5-0.5b --junit never.xml",
                       true);
  CHECK(bad.code == 3);
  CHECK(bad.out.find("negative-value.yaml:9:") != std::string::npos);
  CHECK_FALSE(fs::exists(workdir() / "never.xml"));
  CHECK(run("gate --budgets missing.yaml --model qwen2.5-0.5b").code == 5);
}

TEST_CASE("cli gate --baseline: a regression beyond the margin fails and is reported", "[cli][gate]") {
  const auto dir = workdir();
  REQUIRE(run("gate --budgets budgets.yaml --model qwen2.5-0.5b --out base.json").code == 0);
  CHECK(run("gate --budgets budgets.yaml --model qwen2.5-0.5b --baseline base.json").code == 0);
  auto base = nlohmann::json::parse(read(dir / "base.json"));
  base["results"][0]["figures"]["decode_tok_s"] = base["results"][0]["figures"]["decode_tok_s"].get<double>() * 2;
  std::ofstream(dir / "faster.json") << base.dump();
  const auto r = run("gate --budgets budgets.yaml --model qwen2.5-0.5b --baseline faster.json --margin-pct 10");
  CHECK(r.code == 1);
  CHECK(r.out.find("REGRESSION decode_tok_s") != std::string::npos);
  CHECK(r.out.find("1 regression(s) against faster.json (margin 10.0%)") != std::string::npos);
  CHECK(run("gate --budgets budgets.yaml --model qwen2.5-0.5b --baseline faster.json --margin-pct 60").code == 0);
  std::ofstream(dir / "broken.json") << "{\"schema\": \"trilemma.gate\", \"results\": 3}";
  CHECK(run("gate --budgets budgets.yaml --model qwen2.5-0.5b --baseline broken.json").code == 3);
  std::ofstream(dir / "typed.json") << "{\"schema\": {\"name\": \"trilemma.gate\"}, \"results\": []}";
  const auto typed = run("gate --budgets budgets.yaml --model qwen2.5-0.5b --baseline typed.json", true);
  CHECK(typed.code == 3);
  CHECK(typed.out.find("typed.json") != std::string::npos);
}

TEST_CASE("cli emit and plan --emit: files, JSON and bad input", "[cli][emitters]") {
  const auto dir = workdir();
  REQUIRE(run("plan -m llama-3.2-1b -d apple-m2 -s memory --out plan.json").code == 0);
  fs::remove(dir / "llama.sh");
  fs::remove(dir / "llama.sh.args");
  const auto e = run("emit --plan plan.json --format llama.cpp --out llama.sh", true);
  CHECK(e.code == 0);
  CHECK(e.out == "wrote llama.sh (command)\nwrote llama.sh.args (arguments)\n");  // on stderr
  fs::remove(dir / "llama.sh");
  CHECK(run("emit --plan plan.json --format llama.cpp --out llama.sh -q", true).out.empty());
  CHECK(read(dir / "llama.sh").find("exec llama-server") != std::string::npos);
  const auto printed = run("emit --plan plan.json --format llama.cpp");
  CHECK(printed.out.find(read(dir / "llama.sh")) == 0);

  const auto j = run("emit --plan plan.json --format ollama --json");
  REQUIRE(j.code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["schema"] == "trilemma.emit");
  CHECK(doc["files"][0]["role"] == "modelfile");

  fs::remove(dir / "Modelfile");
  CHECK(run("plan -m llama-3.2-1b -d apple-m2 -s memory --emit ollama --out Modelfile").code == 0);
  CHECK(read(dir / "Modelfile").find("PARAMETER num_ctx 2048") != std::string::npos);
  CHECK(fs::exists(dir / "Modelfile.env"));
  CHECK(run("plan -m llama-3.2-1b -d apple-m2 --emit ollama").code == 2);          // needs --out
  CHECK(run("plan -m llama-3.2-1b -d apple-m2 --emit vllm --out x").code == 2);
  CHECK(run("emit --plan plan.json --format vllm").code == 2);
  CHECK(run("emit --plan missing.json --format ollama").code == 5);

  // A plan document from a newer trilemma, and a malformed one: exit 3, nothing written.
  auto newer = nlohmann::json::parse(read(dir / "plan.json"));
  newer["schema_version"] = 99;
  std::ofstream(dir / "newer.json") << newer.dump();
  std::ofstream(dir / "broken.json") << "{\"schema\": \"trilemma.plan\",";
  fs::remove(dir / "out.cfg");
  const auto future = run("emit --plan newer.json --format mlc-llm --out out.cfg", true);
  CHECK(future.code == 3);
  CHECK(future.out.find("newer.json:schema_version:") != std::string::npos);
  CHECK(run("emit --plan broken.json --format mlc-llm --out out.cfg").code == 3);
  CHECK_FALSE(fs::exists(dir / "out.cfg"));
}
