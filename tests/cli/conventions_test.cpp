// The conventions a command-line user expects (issue 50): "-" as standard input and output,
// what was written reported on stderr and silent under -q, a plan written as YAML read back,
// JSON errors at line:column.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "engine/model/loaders.hpp"
#include "models/catalog.hpp"
#include "run_binary.hpp"

namespace {

namespace fs = std::filesystem;
using trilemma::testing::Run;

struct ConventionsDir {
  fs::path path;
  explicit ConventionsDir(const std::string& name) : path(fs::temp_directory_path() / ("trilemma-conventions-" + name + "-" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  ~ConventionsDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path / name) << text; }
  std::string read(const std::string& name) const {
    std::ifstream in(path / name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // The binary run in this directory; stderr merged when `with_stderr`.
  Run run(const std::string& args, bool with_stderr = false) const {
    return trilemma::testing::run_command("cd '" + path.string() + "' && " + TRILEMMA_BINARY + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null"));
  }
};

const char* k_plan_args = "plan -m qwen2.5-0.5b -d raspberry-pi-5 -s memory";

}  // namespace

TEST_CASE("conventions: --out - writes the document to stdout and the report to stderr", "[cli][conventions]") {
  ConventionsDir d("out");
  const auto piped = d.run(std::string(k_plan_args) + " --out -");
  REQUIRE(piped.code == 0);
  const auto doc = nlohmann::json::parse(piped.out);  // stdout is the document alone
  CHECK(doc["schema"] == "trilemma.plan");
  CHECK_FALSE(fs::exists(d.path / "-"));
  const auto both = d.run(std::string(k_plan_args) + " --out -", true);
  CHECK(both.out.find("qwen2.5-0.5b") != std::string::npos);
  CHECK(both.out.size() > piped.out.size());  // the table went to stderr

  // gate: the JSON report to stdout, JUnit to a file; two outputs cannot both be stdout.
  d.write("budgets.yaml", "version: 1\nbudgets:\n  - name: pi\n    device: raspberry-pi-5\n    scenario: memory\n    context: 2048\n"
                          "    limits: {min_decode_tok_s: 1, max_memory_gib: 6}\n");
  const auto gate = d.run("gate --budgets budgets.yaml -m qwen2.5-0.5b --out - --junit gate.xml");
  REQUIRE(gate.code == 0);
  CHECK(nlohmann::json::parse(gate.out)["schema"] == "trilemma.gate");
  CHECK(d.read("gate.xml").find("<testsuites") != std::string::npos);
  const auto twice = d.run("gate --budgets budgets.yaml -m qwen2.5-0.5b --out - --junit -", true);
  CHECK(twice.code == 2);
  CHECK(twice.out.find("two outputs to standard output") != std::string::npos);

  // emit: a one-file target to stdout; a target with companions refuses "-".
  REQUIRE(d.run(std::string(k_plan_args) + " --out plan.json").code == 0);
  const auto yaml = d.run("emit --plan plan.json --format plan-yaml --out -");
  REQUIRE(yaml.code == 0);
  CHECK(yaml.out.rfind("# trilemma plan document", 0) == 0);
  CHECK_FALSE(fs::exists(d.path / "-"));
  const auto companions = d.run("emit --plan plan.json --format llama.cpp --out -", true);
  CHECK(companions.code == 2);
  CHECK(companions.out.find("give --out a path") != std::string::npos);
}

TEST_CASE("conventions: - reads standard input, once", "[cli][conventions]") {
  ConventionsDir d("in");
  REQUIRE(d.run(std::string(k_plan_args) + " --out plan.json").code == 0);
  const auto from_file = d.run("emit --plan plan.json --format llama.cpp");
  const auto from_stdin = d.run("emit --plan - --format llama.cpp < plan.json");
  REQUIRE(from_stdin.code == 0);
  CHECK(from_stdin.out == from_file.out);
  d.write("budgets.yaml", "version: 1\nbudgets:\n  - name: pi\n    device: raspberry-pi-5\n    scenario: memory\n    context: 2048\n"
                          "    limits: {max_memory_gib: 6}\n");
  const auto gate = d.run("gate --budgets - -m qwen2.5-0.5b --json < budgets.yaml");
  REQUIRE(gate.code == 0);
  CHECK(nlohmann::json::parse(gate.out)["results"].size() == 1);
  const auto twice = d.run("gate --budgets - --baseline - -m qwen2.5-0.5b < budgets.yaml", true);
  CHECK(twice.code == 2);
  CHECK(twice.out.find("standard input is already read") != std::string::npos);
  // A file that does not exist: exit 5 from every reader.
  CHECK(d.run("emit --plan missing.json --format ollama").code == 5);
  CHECK(d.run("gate --budgets missing.yaml -m qwen2.5-0.5b").code == 5);
  CHECK(d.run("calibrate --device raspberry-pi-5 --from missing.json").code == 5);
  CHECK(d.run("verify -m qwen2.5-0.5b --device raspberry-pi-5 --replay missing.json").code == 5);
  // The evaluation text is read by the engine's child process; a missing one fails up front.
  REQUIRE(d.run("export --synthetic stories260k --weights f32 --out m.gguf").code == 0);
  const auto eval = d.run("verify -m m.gguf --model-file m.gguf --eval-text missing.txt", true);
  CHECK(eval.code == 5);
  CHECK(eval.out.find("missing.txt: no such file") != std::string::npos);
}

TEST_CASE("conventions: a plan written as YAML reads back as the same plan", "[cli][conventions]") {
  ConventionsDir d("yaml");
  REQUIRE(d.run(std::string(k_plan_args) + " --out plan.json").code == 0);
  REQUIRE(d.run("emit --plan plan.json --format plan-yaml --out plan.yaml -q").code == 0);
  const auto again = d.run("emit --plan plan.yaml --format plan-json");
  REQUIRE(again.code == 0);
  const auto original = nlohmann::json::parse(d.read("plan.json"));
  const auto read_back = nlohmann::json::parse(again.out);
  CHECK(read_back["model"] == original["model"]);
  CHECK(read_back["device"] == original["device"]);
  CHECK(read_back["chosen"]["config"] == original["chosen"]["config"]);
  const double tok_s = original["chosen"]["latency"]["decode_tok_s"]["mid"].get<double>();
  CHECK(read_back["chosen"]["latency"]["decode_tok_s"]["mid"].get<double>() == Approx(tok_s).epsilon(1e-9));
  CHECK(read_back["chosen"]["summary"] == original["chosen"]["summary"]);
  // The emitters read the YAML plan as they read the JSON one.
  CHECK(d.run("emit --plan plan.yaml --format llama.cpp").out == d.run("emit --plan plan.json --format llama.cpp").out);
  // A malformed plan: YAML at line:column, JSON at line:column too.
  d.write("bad.yaml", "schema: trilemma.plan\nmodel: [\n");
  const auto bad_yaml = d.run("emit --plan bad.yaml --format ollama", true);
  CHECK(bad_yaml.code == 3);
  CHECK(bad_yaml.out.find("bad.yaml:3:1") != std::string::npos);
  d.write("bad.json", "{\n  \"schema\": \"trilemma.plan\",\n  \"model\": nope\n}\n");
  const auto bad_json = d.run("emit --plan bad.json --format ollama", true);
  CHECK(bad_json.code == 3);
  CHECK(bad_json.out.find("bad.json:3:") != std::string::npos);
}

TEST_CASE("conventions: what was written is a note on stderr, silent under -q", "[cli][conventions]") {
  ConventionsDir d("quiet");
  REQUIRE(d.run(std::string(k_plan_args) + " --out plan.json").code == 0);
  const auto loud = d.run("emit --plan plan.json --format ollama --out Modelfile", true);
  CHECK(loud.out.find("wrote Modelfile") != std::string::npos);
  CHECK(d.run("emit --plan plan.json --format ollama --out Modelfile").out.empty());
  CHECK(d.run("emit --plan plan.json --format ollama --out Modelfile -q", true).out.empty());
}

TEST_CASE("conventions: a limit flag looser than the scenario's says the scenario's applies", "[cli][conventions]") {
  ConventionsDir d("looser");
  const auto looser = d.run("plan -m qwen2.5-0.5b -d raspberry-pi-5 -s latency --max-ttft-ms 500 --min-tok-s 5", true);
  CHECK(looser.out.find("--max-ttft-ms 500 is looser than the latency scenario's limit of 100 ms, which applies") != std::string::npos);
  CHECK(looser.out.find("--min-tok-s 5 is lower than the latency scenario's floor of 20 tok/s") != std::string::npos);
  const auto tighter = d.run("plan -m qwen2.5-0.5b -d raspberry-pi-5 -s latency --max-ttft-ms 50", true);
  CHECK(tighter.out.find("looser than") == std::string::npos);
  CHECK(d.run("requirements -m qwen2.5-0.5b -s latency --max-ttft-ms 500", true).out.find("--max-ttft-ms 500 is looser") != std::string::npos);
  CHECK(d.run("plan -m qwen2.5-0.5b -d raspberry-pi-5 -s latency --max-ttft-ms 500 -q", true).out.find("looser") == std::string::npos);
}

TEST_CASE("conventions: progress on a terminal only, never under -q or --json", "[cli][conventions]") {
  ConventionsDir d("progress");
  // Not a terminal (these tests' stderr is a pipe): the result alone.
  const auto piped = d.run("fidelity --method priors", true);
  REQUIRE(piped.code == 0);
  CHECK(piped.out.find("fidelity: costing the published measurements ...") == std::string::npos);
  // A terminal, through util-linux's script(1), which runs the command on a pseudo-terminal.
  if (trilemma::testing::run_command("command -v script").code != 0) {
    WARN("script(1) is not installed: progress on a terminal not checked");
    return;
  }
  const auto on_tty = [&](const std::string& args) {
    return trilemma::testing::run_command("cd '" + d.path.string() + "' && script -qec \"" + TRILEMMA_BINARY + " " + args + "\" /dev/null");
  };
  CHECK(on_tty("fidelity --method priors").out.find("fidelity: costing the published measurements ...") != std::string::npos);
  CHECK(on_tty("fidelity --method priors -q").out.find("costing the published") == std::string::npos);
  CHECK(on_tty("fidelity --method priors --json").out.find("costing the published") == std::string::npos);
}

TEST_CASE("conventions: Ollama's FROM names the model file wherever the plan was made and the Modelfile is written", "[cli][conventions]") {
  // Ollama reads a relative FROM against the Modelfile's folder, so the plan records the
  // model file's absolute path when it is made: a plan made beside the file (`s.gguf`) or
  // from another folder (`../a/s.gguf`), emitted from a third folder, names the same file.
  ConventionsDir d("ollama-from");
  fs::create_directories(d.path / "a");
  fs::create_directories(d.path / "b");
  fs::create_directories(d.path / "c");
  REQUIRE(d.run("export --synthetic stories260k --weights q8_0 --out a/s.gguf").code == 0);
  const std::string model = fs::canonical(d.path / "a" / "s.gguf").string();
  const std::string args = " -d raspberry-pi-5 -s memory --context 256 --prompt 64 --weights q8_0";
  auto in = [&](const char* folder, const std::string& command) {
    return trilemma::testing::run_command("cd '" + (d.path / folder).string() + "' && " + TRILEMMA_BINARY + " " + command + " 2>/dev/null");
  };
  REQUIRE(in("a", "plan -m s.gguf" + args + " --out ../beside.json").code == 0);
  REQUIRE(in("b", "plan -m ../a/s.gguf" + args + " --out ../above.json").code == 0);
  for (const char* plan : {"beside.json", "above.json"}) {
    CAPTURE(plan);
    CHECK(nlohmann::json::parse(d.read(plan))["model"]["path"] == model);
    REQUIRE(in("c", std::string("emit --plan ../") + plan + " --format ollama --out Modelfile -q").code == 0);
    // The file beside the model the plan names (s.gguf itself, or the s-Q8_0.gguf it asks
    // `trilemma export` to write there when the plan's weights differ from the file's).
    const std::string modelfile = d.read("c/Modelfile");
    const std::string folder = fs::path(model).parent_path().string() + "/";
    CHECK(modelfile.find("\nFROM " + folder + "s") != std::string::npos);
    CHECK(modelfile.find("FROM ./") == std::string::npos);
    CHECK(modelfile.find("FROM ../") == std::string::npos);
  }
}

TEST_CASE("conventions: the man page is generated from the command tree: every command and option, valid roff", "[cli][conventions]") {
  ConventionsDir d("man");
  const auto page = d.run("completion man > trilemma.1");
  REQUIRE(page.code == 0);
  const std::string roff = d.read("trilemma.1");
  CHECK(roff.find(".TH TRILEMMA 1") != std::string::npos);
  for (const char* section : {".SH NAME", ".SH SYNOPSIS", ".SH COMMANDS", ".SH OPTIONS", ".SH \"EXIT STATUS\""}) CHECK(roff.find(section) != std::string::npos);
  for (const char* command : {"devices", "models", "plan", "requirements", "run", "eval", "verify", "calibrate", "fidelity", "gate", "emit",
                              "export", "completion"})
    CHECK(roff.find(std::string(".SS \"trilemma ") + command + "\"") != std::string::npos);
  // Options as minus signs, so they search and copy as typed; every exit code of the table.
  for (const char* option : {"\\-\\-max\\-ttft\\-ms", "\\-\\-kv\\-strategy", "\\-\\-eval\\-text", "\\-\\-budgets"}) CHECK(roff.find(option) != std::string::npos);
  for (const char* code : {".B 0\n", ".B 2\n", ".B 5\n", ".B 70\n"}) CHECK(roff.find(code) != std::string::npos);
  // Only man(7) macros; no text line that roff would read as a request.
  std::istringstream lines(roff);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || (line[0] != '.' && line[0] != '\'')) continue;
    const std::string macro = line.substr(0, line.find(' '));
    CAPTURE(line);
    CHECK((macro == ".TH" || macro == ".SH" || macro == ".SS" || macro == ".TP" || macro == ".PP" || macro == ".B" || macro == ".I" ||
           macro == ".RI" || macro == ".\\\""));
  }
  if (trilemma::testing::run_command("command -v groff >/dev/null 2>&1").code != 0) {
    WARN("skipped: groff is not installed, the page's rendering is not checked");
    return;
  }
  const auto warnings = trilemma::testing::run_command("groff -man -ww -z '" + d.file("trilemma.1") + "' 2>&1");
  CHECK(warnings.code == 0);
  CHECK(warnings.out.empty());
}

TEST_CASE("conventions: every --synthetic model the docs name is one the engine can generate", "[cli][conventions][docs]") {
  // docs/calibrate.md and docs/arm.md once told users to run `--synthetic qwen2.5-0.5b`, a shape
  // with attention biases the synthetic generator refuses (issue 50).
  const fs::path root(TRILEMMA_SOURCE_DIR);
  std::vector<fs::path> pages{root / "README.md"};
  for (const auto& e : fs::directory_iterator(root / "docs"))
    if (e.path().extension() == ".md") pages.push_back(e.path());
  const std::regex flag("--synthetic ([A-Za-z0-9._/-]+)");
  int checked = 0;
  for (const auto& page : pages) {
    std::ifstream in(page);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    for (std::sregex_iterator it(text.begin(), text.end(), flag), end; it != end; ++it) {
      const std::string id = (*it)[1];
      if (id.find('/') != std::string::npos || id.find(".yaml") != std::string::npos) continue;  // a shape file
      if (std::none_of(id.begin(), id.end(), [](unsigned char c) { return std::islower(c); })) continue;  // a placeholder: ID
      CAPTURE(page.filename().string(), id);
      const auto model = trilemma::models::resolve_model(id);
      REQUIRE(model.ok());
      CHECK(trilemma::engine::synthetic_supported(model->shape));
      ++checked;
    }
  }
  CHECK(checked >= 3);
}

TEST_CASE("conventions: calibrate warns about noisy results and keeps a trilemma-exported Q4_0 file's label", "[cli][conventions]") {
  ConventionsDir d("calibrate-noisy");
  REQUIRE(d.run("export --synthetic smollm2-135m --weights q4_0 --out smol.gguf -q").code == 0);
  const auto size = fs::file_size(d.path / "smol.gguf");
  const auto model = trilemma::models::resolve_model("smollm2-135m").value();
  const auto params = static_cast<long long>(count_parameters(model.shape).total());
  auto record = [&](int pp, int tg, double ts, double sd) {
    return nlohmann::json{{"model_filename", "smol.gguf"}, {"model_type", "llama ?B Q4_0"}, {"model_size", size},
                          {"model_n_params", params}, {"backends", "CPU"}, {"n_threads", 2}, {"type_k", "f16"}, {"type_v", "f16"},
                          {"n_prompt", pp}, {"n_gen", tg}, {"n_depth", 0}, {"avg_ts", ts}, {"stddev_ts", sd}};
  };
  d.write("bench.json", nlohmann::json::array({record(64, 0, 400, 8), record(0, 16, 40, 12)}).dump());
  const auto run = trilemma::testing::run_command("cd '" + d.path.string() + "' && " + TRILEMMA_BINARY +
                                                  " calibrate --device raspberry-pi-5 --from bench.json --out cal.yaml --json > out.json 2> err.txt");
  const std::string err = d.read("err.txt");
  INFO(err);
  REQUIRE((run.code == 0 || run.code == 1));
  CHECK(err.find("warning: noisy: bench.json") != std::string::npos);
  CHECK(err.find("tg16: 40 +/- 12 tok/s (30%)") != std::string::npos);
  const auto doc = nlohmann::json::parse(d.read("out.json"));
  CHECK(doc["noisy"].size() == 1);
  CHECK(doc["notes"].empty());  // the label stands: no "taken as iq2_xs"
  for (const auto& p : doc["points"]) CHECK(p["config"]["weights"] == "q4_0");
}
