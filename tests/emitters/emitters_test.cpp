// Emitters: golden files for every emitter on plans from each scenario (and on pinned plans that
// exercise what targets cannot express), JSON output checked against its schema, and the
// emitted files parsed back to the settings the emitter reports. TRILEMMA_UPDATE_GOLDEN=1
// rewrites the golden files.
#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include "golden.hpp"
#include "emitted_syntax.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <unistd.h>

#include "devices/device_db.hpp"
#include "emitters/emitter.hpp"
#include "emitters/json_schema.hpp"
#include "emitters/llama_cpp_flags.hpp"
#include "models/catalog.hpp"
#include "solver/plan_document.hpp"

using namespace trilemma;
using Settings = std::vector<std::pair<std::string, std::string>>;

namespace {

struct PlanCase {
  std::string name, model, device, scenario;
  solver::Pins pins = {};
  std::optional<double> max_loss_points = {};  // loosens the scenario (int3 loses > 10 points)
};

solver::PlanDocument make_plan(const PlanCase& pc) {
  auto model = models::resolve_model(pc.model);
  REQUIRE(model.ok());
  auto device = devices::resolve_device(pc.device);
  REQUIRE(device.ok());
  auto profile = solver::resolve_profile(pc.scenario);
  REQUIRE(profile.ok());
  if (pc.max_loss_points) profile->constraints.max_loss_points = pc.max_loss_points;
  auto catalog = models::builtin_models();
  REQUIRE(catalog.ok());
  solver::PlanRequest req;
  req.model = &*model;
  req.device = &*device;
  req.profile = *profile;
  req.pins = pc.pins;
  req.catalog = &*catalog;
  auto result = solver::plan(req);
  REQUIRE(result.ok());
  CAPTURE(pc.name);
  REQUIRE(result->chosen);
  auto doc = solver::parse_plan_document(solver::plan_to_json(*result, *model, *device, *profile).dump(), pc.name + ".json");
  REQUIRE(doc.ok());
  return *doc;
}

// Each scenario on a laptop; on the phone the latency corner is infeasible (TTFT < 100 ms).
std::vector<PlanCase> scenario_cases() {
  std::vector<PlanCase> out;
  for (const std::string scenario : {"latency", "memory", "accuracy"})
    out.push_back({"apple-m2-" + scenario, "llama-3.2-1b", "apple-m2", scenario});
  for (const std::string scenario : {"memory", "accuracy"})
    out.push_back({"snapdragon-8-gen-3-" + scenario, "llama-3.2-1b", "snapdragon-8-gen-3", scenario});
  return out;
}

// Plans pinned to choices some targets cannot express.
std::vector<PlanCase> pinned_cases() {
  std::vector<PlanCase> out;
  PlanCase sliding{"sliding-q8kv", "llama-3.2-1b", "snapdragon-8-gen-3", "memory"};
  sliding.pins.strategy = KvStrategy::sliding, sliding.pins.kv_params = {{"window", 1024}, {"sinks", 4}};
  sliding.pins.kv = TensorType::q8_0;
  out.push_back(sliding);
  PlanCase layers{"layer-skip", "llama-3.2-1b", "snapdragon-8-gen-3", "memory"};
  layers.pins.speculative = true, layers.pins.draft_kind = DraftKind::layers;
  out.push_back(layers);
  PlanCase int3{"int3-offload", "llama-3.2-3b", "raspberry-pi-5", "memory"};
  int3.pins.weights = WeightFormat::int3, int3.pins.kv_params = {{"kv_resident_fraction", 0.5}}, int3.pins.strategy = KvStrategy::offload;
  int3.max_loss_points = 40;
  out.push_back(int3);
  PlanCase draft{"draft-model-cuda", "llama-3.1-8b", "rtx-4090", "accuracy"};
  draft.pins.draft_model = "llama-3.2-1b", draft.pins.speculative = true, draft.pins.draft_kind = DraftKind::model;
  out.push_back(draft);
  PlanCase paged{"paged-f32kv", "qwen2.5-0.5b", "apple-m2", "accuracy"};
  paged.pins.strategy = KvStrategy::paged, paged.pins.kv = TensorType::f32, paged.pins.weights = WeightFormat::q8_0;
  out.push_back(paged);
  return out;
}

std::string render(const emitters::Emission& e) {
  std::string s;
  for (const auto& f : e.files) s += "==> " + f.role + " (PATH" + f.suffix + ") <==\n" + f.content;
  s += "==> not expressed <==\n";
  for (const auto& n : e.not_expressed) s += describe(n) + "\n";
  return s;
}

void check_golden(const std::string& name, const std::string& actual) {
  trilemma::testing::check_golden("emitters", name, actual);
}

std::string file_name(const std::string& emitter) {
  std::string s(emitter);
  for (char& c : s)
    if (c == '.') c = '-';
  return s;
}

// --- the emitted formats read back (tests/emitted_syntax.hpp), failing the test where unsafe --

Settings parse_args_file(const std::string& text) {
  auto s = testing::parse_args_file(text);
  REQUIRE(s);
  return *s;
}

Settings parse_script(const std::string& text) {
  auto s = testing::parse_script(text);
  REQUIRE(s);
  return *s;
}

Settings parse_modelfile(const std::string& modelfile, const std::string& env) {
  auto s = testing::parse_modelfile(modelfile, env);
  REQUIRE(s);
  return *s;
}

const testing::Schema& emit_schema() {
  using testing::Schema;
  static const Schema s{"object",
                        {{"schema", {"string"}},
                         {"schema_version", {"integer"}},
                         {"format", {"string"}},
                         {"target", {"string"}},
                         {"plan", {"object", {{"model", {"string"}}, {"device", {"string"}}, {"scenario", {"string"}}, {"summary", {"string"}}}}},
                         {"files", {"array", {}, {Schema{"object", {{"role", {"string"}}, {"path", {"string"}}, {"content", {"string"}}}}}}},
                         {"settings", {"array", {}, {Schema{"object", {{"name", {"string"}}, {"value", {"string"}}}}}}},
                         {"not_expressed",
                          {"array", {}, {Schema{"object", {{"choice", {"string"}}, {"value", {"string"}}, {"reason", {"string"}}, {"substitute", {"string"}}}}}}}}};
  return s;
}

bool has_not_expressed(const emitters::Emission& e, const std::string& choice) {
  for (const auto& n : e.not_expressed)
    if (n.choice == choice) return true;
  return false;
}

std::string setting(const emitters::Emission& e, const std::string& name) {
  for (const auto& [k, v] : e.settings)
    if (k == name) return v;
  return "<unset>";
}

}  // namespace

TEST_CASE("emitters: the table lists each target once and finds it by name", "[emitters]") {
  std::set<std::string> names;
  for (const auto& e : emitters::emitters()) {
    CHECK(names.insert(std::string(e.name)).second);
    CHECK(emitters::find_emitter(e.name) == &e);
    CHECK(e.emit != nullptr);
  }
  CHECK(emitters::find_emitter("vllm") == nullptr);
  CHECK(emitters::emitter_names() == "llama.cpp, ollama, mlc-llm, plan-json, plan-yaml");
}

TEST_CASE("emitters: golden output of every emitter on plans from each scenario", "[emitters][golden]") {
  for (const auto& pc : scenario_cases()) {
    const auto plan = make_plan(pc);
    for (const auto& e : emitters::emitters()) {
      // trilemma's own formats are checked on the laptop plans only: they copy the document.
      const bool own = e.name.starts_with("plan-");
      if (own && pc.device != "apple-m2") continue;
      auto out = e.emit(plan);
      REQUIRE(out.ok());
      check_golden(pc.name + "." + file_name(std::string(e.name)) + ".txt", render(*out));
    }
  }
}

TEST_CASE("emitters: golden output on pinned plans, with what each target cannot express", "[emitters][golden]") {
  for (const auto& pc : pinned_cases()) {
    const auto plan = make_plan(pc);
    for (const std::string name : {"llama.cpp", "ollama", "mlc-llm"}) {
      auto out = emitters::find_emitter(name)->emit(plan);
      REQUIRE(out.ok());
      check_golden(pc.name + "." + file_name(name) + ".txt", render(*out));
    }
  }
}

TEST_CASE("emitters: choices a target lacks are reported and written into the output, never dropped", "[emitters]") {
  const auto cases = pinned_cases();
  auto emit = [&](std::size_t i, const std::string& name) {
    auto out = emitters::find_emitter(name)->emit(make_plan(cases[i]));
    REQUIRE(out.ok());
    return *out;
  };
  SECTION("sliding window with a q8_0 KV cache") {
    const auto llama = emit(0, "llama.cpp");
    CHECK(has_not_expressed(llama, "kv_strategy"));
    CHECK(setting(llama, "-fa") == "on");  // llama.cpp #10378: a quantized V cache needs flash attention
    CHECK(setting(llama, "-ctv") == "q8_0");
    CHECK(llama.files[0].content.find("# NOT EXPRESSED kv_strategy=sliding 1024+4") != std::string::npos);
    const auto ollama = emit(0, "ollama");
    CHECK(has_not_expressed(ollama, "kv_strategy"));
    CHECK(setting(ollama, "OLLAMA_FLASH_ATTENTION") == "1");
    CHECK(setting(ollama, "OLLAMA_KV_CACHE_TYPE") == "q8_0");
    // MLC applies sliding_window_size to mistral-type models only (issue 15): not to Llama.
    const auto mlc = emit(0, "mlc-llm");
    CHECK(has_not_expressed(mlc, "kv_strategy"));
    CHECK(setting(mlc, "sliding_window_size") == "-1");
    CHECK(has_not_expressed(mlc, "kv_type"));  // MLC keeps the KV in the activation dtype
    auto mistral_plan = make_plan(cases[0]);
    mistral_plan.raw["model"]["architecture"] = "mistral";
    auto mistral = emitters::find_emitter("mlc-llm")->emit(mistral_plan);
    REQUIRE(mistral.ok());
    CHECK_FALSE(has_not_expressed(*mistral, "kv_strategy"));
    CHECK(setting(*mistral, "sliding_window_size") == "1024");
    CHECK(setting(*mistral, "attention_sink_size") == "4");
    CHECK(setting(*mistral, "context_window_size") == "-1");
  }
  SECTION("layer-skip self-speculation") {
    for (const std::string name : {"llama.cpp", "ollama", "mlc-llm"}) {
      const auto e = emit(1, name);
      CAPTURE(name);
      CHECK(has_not_expressed(e, "speculative"));
      CHECK(setting(e, "-md") == "<unset>");
    }
  }
  SECTION("trilemma's int3 weights and a KV offload tier") {
    for (const std::string name : {"llama.cpp", "ollama", "mlc-llm"}) {
      const auto e = emit(2, name);
      CAPTURE(name);
      CHECK(has_not_expressed(e, "weights"));
      CHECK(has_not_expressed(e, "kv_strategy"));
    }
  }
  SECTION("a draft model on a discrete GPU") {
    const auto llama = emit(3, "llama.cpp");
    CHECK(setting(llama, "-md") == "llama-3.2-1b-" + std::string(info(make_plan(cases[3]).config.speculative.draft_weights).llama_cpp) + ".gguf");
    // llama.cpp b10587: a draft file needs --spec-type; --draft-max/--draft-min are removed (issue 15).
    CHECK(setting(llama, "--spec-type") == "draft-simple");
    CHECK(setting(llama, "--spec-draft-n-max") == std::to_string(make_plan(cases[3]).config.speculative.draft_len));
    CHECK(setting(llama, "--spec-draft-n-min") == setting(llama, "--spec-draft-n-max"));
    CHECK(setting(llama, "--draft-max") == "<unset>");
    CHECK(setting(llama, "-ngl") == "33");  // 32 layers + output
    // One --load-mode, never the --mlock/--no-mmap pair whose last flag wins (issue 15).
    CHECK((setting(llama, "--load-mode") == "none" || setting(llama, "--load-mode") == "mlock"));
    CHECK(setting(llama, "--no-mmap") == "<unset>");
    CHECK(setting(llama, "--mlock") == "<unset>");
    CHECK(setting(emit(3, "ollama"), "use_mmap") == "false");
    CHECK(has_not_expressed(emit(3, "ollama"), "speculative"));
    CHECK(has_not_expressed(emit(3, "mlc-llm"), "speculative"));
  }
  SECTION("the plan's own formats express everything") {
    for (std::size_t i = 0; i < cases.size(); ++i)
      for (const std::string name : {"plan-json", "plan-yaml"}) CHECK(emit(i, name).not_expressed.empty());
  }
}

TEST_CASE("emitters: the model file is derived from id and weights unless the plan names one", "[emitters]") {
  auto plan = make_plan(scenario_cases()[0]);
  auto derived = emitters::find_emitter("llama.cpp")->emit(plan);
  REQUIRE(derived.ok());
  const std::string expected = "llama-3.2-1b-" + std::string(info(plan.config.weights).llama_cpp) + ".gguf";
  CHECK(setting(*derived, "-m") == expected);
  CHECK(derived->files[0].content.find("derived from the plan's model id and weights") != std::string::npos);
  plan.raw["model"]["path"] = "/models/my llama.gguf";
  auto given = emitters::find_emitter("llama.cpp")->emit(plan);
  REQUIRE(given.ok());
  CHECK(setting(*given, "-m") == "/models/my llama.gguf");
  CHECK(given->files[1].content.find("-m '/models/my llama.gguf'") != std::string::npos);
  CHECK(parse_args_file(given->files[1].content) == given->settings);
  auto ollama = emitters::find_emitter("ollama")->emit(plan);
  REQUIRE(ollama.ok());
  CHECK(setting(*ollama, "FROM") == "/models/my llama.gguf");
}

TEST_CASE("emitters: a plan pinned to other weights than its file runs the file that writes them (issue 15)", "[emitters]") {
  auto plan = make_plan(scenario_cases()[0]);
  plan.raw["model"]["path"] = "/models/source.gguf";
  plan.raw["model"]["stored_format"] = "f32";
  plan.config.weights = WeightFormat::q8_0;
  auto llama = emitters::find_emitter("llama.cpp")->emit(plan);
  REQUIRE(llama.ok());
  CHECK(setting(*llama, "-m") == "/models/llama-3.2-1b-Q8_0.gguf");
  CHECK(llama->files[0].content.find("not /models/source.gguf (f32)") != std::string::npos);
  CHECK(llama->files[0].content.find("trilemma export --plan PLAN.json --out /models/llama-3.2-1b-Q8_0.gguf") != std::string::npos);
  auto ollama = emitters::find_emitter("ollama")->emit(plan);
  REQUIRE(ollama.ok());
  CHECK(setting(*ollama, "FROM") == "/models/llama-3.2-1b-Q8_0.gguf");
  // A format the engine does not write: llama-quantize from the source.
  plan.config.weights = WeightFormat::q4_k_m;
  llama = emitters::find_emitter("llama.cpp")->emit(plan);
  REQUIRE(llama.ok());
  CHECK(setting(*llama, "-m") == "/models/llama-3.2-1b-Q4_K_M.gguf");
  CHECK(llama->files[0].content.find("llama-quantize /models/source.gguf /models/llama-3.2-1b-Q4_K_M.gguf Q4_K_M") != std::string::npos);
  // The file already holds the plan's weights: it is what runs.
  plan.raw["model"]["stored_format"] = "q4_k";
  llama = emitters::find_emitter("llama.cpp")->emit(plan);
  REQUIRE(llama.ok());
  CHECK(setting(*llama, "-m") == "/models/source.gguf");
}

TEST_CASE("emitters: pinning and mapping as one --load-mode; Ollama's use_mmap and Modelfile-relative FROM (issue 15)", "[emitters]") {
  auto tight = [](solver::PlanDocument p) {  // 5% of usable memory left: the emitters pin the weights
    const double usable = p.raw["chosen"]["memory"]["usable_bytes"].get<double>();
    p.raw["chosen"]["memory"]["total_bytes"] = usable * 0.95;
    return p;
  };
  const auto laptop = make_plan(scenario_cases()[0]);
  const auto gpu = make_plan(pinned_cases()[3]);  // a discrete GPU: no host mapping
  auto mode = [](const solver::PlanDocument& p) {
    auto e = emitters::find_emitter("llama.cpp")->emit(p);
    REQUIRE(e.ok());
    return setting(*e, "--load-mode");
  };
  CHECK(mode(laptop) == "<unset>");
  CHECK(mode(tight(laptop)) == "mmap+mlock");
  CHECK(mode(gpu) == "none");
  CHECK(mode(tight(gpu)) == "mlock");  // lock without a mapping: both choices survive
  auto ollama = emitters::find_emitter("ollama")->emit(tight(laptop));
  REQUIRE(ollama.ok());
  CHECK(has_not_expressed(*ollama, "memory"));
  CHECK(setting(*ollama, "use_mmap") == "<unset>");
  // A relative path the plan names is made absolute: Ollama would read it from the Modelfile's folder.
  auto relative = laptop;
  relative.raw["model"]["path"] = "models/x.gguf";
  ollama = emitters::find_emitter("ollama")->emit(relative);
  REQUIRE(ollama.ok());
  const std::string from = setting(*ollama, "FROM");
  CHECK(from.front() == '/');
  CHECK(from == (std::filesystem::current_path() / "models/x.gguf").lexically_normal().string());
}

TEST_CASE("emitters: MLC's q0bf16, f16 weights kept f16 under an f32 KV plan (issue 15)", "[emitters]") {
  auto plan = make_plan(scenario_cases()[0]);
  plan.config.weights = WeightFormat::bf16;
  auto mlc = emitters::find_emitter("mlc-llm")->emit(plan);
  REQUIRE(mlc.ok());
  CHECK(setting(*mlc, "quantization") == "q0bf16");
  CHECK_FALSE(has_not_expressed(*mlc, "weights"));
  plan.config.weights = WeightFormat::f16;
  plan.config.kv_type = TensorType::f32;
  mlc = emitters::find_emitter("mlc-llm")->emit(plan);
  REQUIRE(mlc.ok());
  CHECK(setting(*mlc, "quantization") == "q0f16");  // not q0f32: that doubles the weights
  CHECK(has_not_expressed(*mlc, "kv_type"));
}

TEST_CASE("emitters: a quantized KV cache llama.cpp cannot block (head size 8) is reported, f16 emitted (issue 15)", "[emitters]") {
  PlanCase tiny{"stories-q8kv", "stories260k", "raspberry-pi-5", "memory"};
  tiny.pins.kv = TensorType::q8_0;
  const auto plan = make_plan(tiny);
  REQUIRE(plan.config.kv_type == TensorType::q8_0);
  auto llama = emitters::find_emitter("llama.cpp")->emit(plan);
  REQUIRE(llama.ok());
  CHECK(has_not_expressed(*llama, "kv_type"));
  CHECK(setting(*llama, "-ctk") == "f16");
  CHECK(setting(*llama, "-ctv") == "f16");
  CHECK(setting(*llama, "-fa") == "<unset>");
  CHECK(llama->files[0].content.find("head size (8) to be a multiple of q8_0's 32-element block") != std::string::npos);
  // Head size 64 (Llama-3.2-1B) takes q8_0 as planned.
  PlanCase big{"llama-q8kv", "llama-3.2-1b", "raspberry-pi-5", "memory"};
  big.pins.kv = TensorType::q8_0;
  auto ok = emitters::find_emitter("llama.cpp")->emit(make_plan(big));
  REQUIRE(ok.ok());
  CHECK(setting(*ok, "-ctk") == "q8_0");
  CHECK_FALSE(has_not_expressed(*ok, "kv_type"));
}

TEST_CASE("emitters: argument file, launch script, Modelfile and chat config parse back to the settings", "[emitters]") {
  auto cases = scenario_cases();
  for (const auto& p : pinned_cases()) cases.push_back(p);
  for (const auto& pc : cases) {
    CAPTURE(pc.name);
    const auto plan = make_plan(pc);
    auto llama = emitters::find_emitter("llama.cpp")->emit(plan);
    REQUIRE(llama.ok());
    REQUIRE(llama->files.size() == 2);
    CHECK(parse_args_file(llama->files[1].content) == llama->settings);
    CHECK(parse_script(llama->files[0].content) == llama->settings);
    CHECK(setting(*llama, "-c") == std::to_string(plan.config.context));

    auto ollama = emitters::find_emitter("ollama")->emit(plan);
    REQUIRE(ollama.ok());
    REQUIRE(ollama->files.size() == 2);
    CHECK(parse_modelfile(ollama->files[0].content, ollama->files[1].content) == ollama->settings);
    CHECK(setting(*ollama, "num_ctx") == std::to_string(plan.config.context));

    auto mlc = emitters::find_emitter("mlc-llm")->emit(plan);
    REQUIRE(mlc.ok());
    const auto j = nlohmann::json::parse(mlc->files[0].content);
    for (const auto& [k, v] : mlc->settings) {
      CAPTURE(k);
      REQUIRE(j.contains(k));
      CHECK((j[k].is_string() ? j[k].get<std::string>() : std::to_string(j[k].get<long long>())) == v);
    }
    CHECK(j["trilemma_warnings"].size() == mlc->not_expressed.size());

    auto yaml = emitters::find_emitter("plan-yaml")->emit(plan);
    REQUIRE(yaml.ok());
    const YAML::Node y = YAML::Load(yaml->files[0].content);
    const auto& cfg = plan.raw["chosen"]["config"];
    CHECK(y["chosen"]["config"]["weights"].as<std::string>() == cfg["weights"].get<std::string>());
    CHECK(y["chosen"]["config"]["context"].as<std::uint32_t>() == cfg["context"].get<std::uint32_t>());
    CHECK(y["schema_version"].as<int>() == 1);
    auto js = emitters::find_emitter("plan-json")->emit(plan);
    REQUIRE(js.ok());
    auto reread = solver::parse_plan_document(js->files[0].content, "reread.json");
    REQUIRE(reread.ok());
    CHECK(describe(reread->config) == describe(plan.config));
  }
}

TEST_CASE("emitters: emit --json documents match their schema", "[emitters]") {
  const auto plan = make_plan(pinned_cases()[0]);
  for (const auto& e : emitters::emitters()) {
    auto out = e.emit(plan);
    REQUIRE(out.ok());
    const auto j = emitters::emission_to_json(e, plan, *out, {"a", "b"});
    CAPTURE(e.name);
    CHECK(testing::schema_mismatch(j, emit_schema()).empty());
    CHECK(j["schema"] == "trilemma.emit");
    CHECK(j["not_expressed"].size() == out->not_expressed.size());
  }
  // The checker itself catches a wrong type and a missing key.
  auto j = emitters::emission_to_json(emitters::emitters()[0], plan, *emitters::emitters()[0].emit(plan), {});
  j["files"][0]["role"] = 3;
  CHECK(testing::schema_mismatch(j, emit_schema()) == "$.files[0].role: expected string, got number");
  j.erase("settings");
  CHECK_FALSE(testing::schema_mismatch(j, emit_schema()).empty());
}

TEST_CASE("emitters: write_emission writes the primary and companion files, or none", "[emitters]") {
  const auto dir = std::filesystem::temp_directory_path() / "trilemma-emitters-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto plan = make_plan(scenario_cases()[0]);
  auto out = emitters::find_emitter("ollama")->emit(plan);
  REQUIRE(out.ok());
  auto written = emitters::write_emission(*out, (dir / "Modelfile").string());
  REQUIRE(written.ok());
  CHECK(*written == std::vector<std::string>{(dir / "Modelfile").string(), (dir / "Modelfile.env").string()});
  CHECK(std::filesystem::exists(dir / "Modelfile.env"));
  auto failed = emitters::write_emission(*out, (dir / "missing-dir" / "Modelfile").string());
  CHECK_FALSE(failed.ok());
  CHECK_FALSE(std::filesystem::exists(dir / "missing-dir"));
}

TEST_CASE("emitters: every llama.cpp flag emitted is one the targeted build takes, with a value it takes (issue 15)", "[emitters]") {
  auto cases = scenario_cases();
  for (const auto& p : pinned_cases()) cases.push_back(p);
  PlanCase tiny{"stories-q8kv", "stories260k", "raspberry-pi-5", "memory"};
  tiny.pins.kv = TensorType::q8_0;
  cases.push_back(tiny);
  std::set<std::string> seen;
  for (const auto& pc : cases) {
    CAPTURE(pc.name);
    auto plan = make_plan(pc);
    for (bool tight : {false, true}) {
      if (tight)  // 5% of usable memory left: --load-mode with mlock
        plan.raw["chosen"]["memory"]["total_bytes"] = plan.raw["chosen"]["memory"]["usable_bytes"].get<double>() * 0.95;
      auto e = emitters::find_emitter("llama.cpp")->emit(plan);
      REQUIRE(e.ok());
      for (const auto& [flag, value] : parse_args_file(e->files[1].content)) {
        CAPTURE(flag, value);
        CHECK_FALSE(emitters::check_llama_cpp_flag(flag, value));
        seen.insert(flag);
      }
    }
  }
  // The cases reach the speculative and memory flags, not just the basic ones.
  for (const std::string flag : {"--spec-type", "--spec-draft-n-max", "--load-mode", "-ctk", "-fa", "-md"}) CHECK(seen.count(flag));
  // What older emitters wrote, and values outside the lists, are refused.
  CHECK(emitters::check_llama_cpp_flag("--draft-max", "3"));
  CHECK(emitters::check_llama_cpp_flag("--mlock", ""));
  CHECK(emitters::check_llama_cpp_flag("-ctk", "q6_k"));
  CHECK(emitters::check_llama_cpp_flag("-fa", ""));
  CHECK(emitters::check_llama_cpp_flag("-c", "4k"));
  for (const auto& f : emitters::llama_cpp_flags()) CHECK_FALSE(f.source.empty());
}

TEST_CASE("emitters: kv_gap_table answers every strategy a target has no row for with a not-expressed gap", "[emitters]") {
  // A target that answers only contiguous: the other strategies, however new, are reported.
  constexpr auto gaps = emitters::kv_gap_table<>(
      {{KvStrategy::contiguous, [](const DeploymentConfig&) -> std::optional<emitters::NotExpressed> { return std::nullopt; }}});
  DeploymentConfig c;
  c.kv_params.sliding = {512, 4};
  for (const auto& row : kv_strategies()) {
    c.kv_strategy = row.strategy;
    const auto gap = gaps[static_cast<std::size_t>(row.strategy)](c);
    CHECK(gap.has_value() == (row.strategy != KvStrategy::contiguous));
    if (gap) {
      CHECK(gap->choice == "kv_strategy");
      CHECK(gap->value.starts_with(std::string(row.name)));
    }
  }
  c.kv_strategy = KvStrategy::sliding;
  CHECK(gaps[static_cast<std::size_t>(KvStrategy::sliding)](c)->value == "sliding 512+4");
}

TEST_CASE("emitters: hostile ids are refused where a plan is read; hostile paths reach the shell as one argument (reliability D4)", "[emitters]") {
  const auto plan = make_plan(scenario_cases()[0]);
  // Ids: a newline (a new shell line), a quote, a flag, a space: each refused, naming the field.
  for (const auto& [object, key, value] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"model", "id", "qwen\ntouch injected-by-emit\n#"}, {"device", "id", "pi\nrm -rf x"},
           {"model", "id", "a'b"}, {"device", "id", "-rf"}, {"model", "architecture", "llama; reboot"},
           {"model", "id", "my model"}, {"model", "id", std::string(200, 'a')}}) {
    auto doc = plan.raw;
    doc[object][key] = value;
    const auto r = solver::parse_plan_document(doc.dump(), "hostile.json");
    CAPTURE(object, key, value);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().to_string().find("hostile.json:" + object + "." + key + ":") == 0);
  }
  auto doc = plan.raw;
  doc["model"]["path"] = "/models/x\n.gguf";
  CHECK_FALSE(solver::parse_plan_document(doc.dump(), "p.json").ok());

  // A path may hold anything but control characters: the script passes it as one argument.
  const std::string hostile = "/tmp/a b/$(touch pwned) `touch pwned2`; 'q' \"d\" \\ * ?.gguf";
  doc = plan.raw;
  doc["model"]["path"] = hostile;
  auto parsed = solver::parse_plan_document(doc.dump(), "p.json");
  REQUIRE(parsed.ok());
  auto e = emitters::find_emitter("llama.cpp")->emit(*parsed);
  REQUIRE(e.ok());
  const auto dir = std::filesystem::temp_directory_path() / ("trilemma-emit-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "run.sh") << e->files[0].content;
  // A stand-in llama-server that writes each argument it gets on its own line.
  std::ofstream(dir / "llama-server") << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$ARGV_OUT\"\n";
  std::filesystem::permissions(dir / "llama-server", std::filesystem::perms::owner_all);
  const std::string sh = "cd '" + dir.string() + "' && ";
  REQUIRE(std::system((sh + "bash -n run.sh").c_str()) == 0);
  REQUIRE(std::system((sh + "PATH=\"$PWD:$PATH\" ARGV_OUT=argv.txt sh run.sh").c_str()) == 0);
  std::ifstream in(dir / "argv.txt");
  std::vector<std::string> argv;
  for (std::string line; std::getline(in, line);) argv.push_back(line);
  std::vector<std::string> expected;
  for (const auto& [flag, value] : e->settings) {
    expected.push_back(flag);
    if (!value.empty()) expected.push_back(value);
  }
  CHECK(argv == expected);
  CHECK(std::find(argv.begin(), argv.end(), hostile) != argv.end());
  CHECK_FALSE(std::filesystem::exists(dir / "pwned"));
  CHECK_FALSE(std::filesystem::exists(dir / "pwned2"));
  std::filesystem::remove_all(dir);

  // Ollama reads FROM to the end of its line, trimmed and unquoted: a path with a trailing space
  // or quotes of its own comes back unchanged.
  for (const std::string& path : std::vector<std::string>{hostile, "/models/x.gguf ", "/models/\"q\" .gguf\""}) {
    doc["model"]["path"] = path;
    auto p = solver::parse_plan_document(doc.dump(), "p.json");
    REQUIRE(p.ok());
    auto o = emitters::find_emitter("ollama")->emit(*p);
    REQUIRE(o.ok());
    CAPTURE(path, o->files[0].content);
    CHECK(setting(*o, "FROM") == path);
    CHECK(parse_modelfile(o->files[0].content, o->files[1].content) == o->settings);
  }

  // A relative path that starts with '-' would be read as an option (emit fuzz finding, issue 45):
  // it is passed as ./-..., the same file.
  doc["model"]["path"] = "-m)x.gguf";
  auto dash = solver::parse_plan_document(doc.dump(), "p.json");
  REQUIRE(dash.ok());
  auto l = emitters::find_emitter("llama.cpp")->emit(*dash);
  REQUIRE(l.ok());
  CHECK(setting(*l, "-m") == "./-m)x.gguf");
  CHECK(parse_script(l->files[0].content) == l->settings);
  CHECK(testing::parse_args_file(l->files[1].content) == l->settings);
}
