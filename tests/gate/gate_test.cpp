// The gate module: budgets loader (one fixture per failure class in tests/gate/data), plan
// checks with limiting figure and margin, baseline regressions, and the JSON, JUnit and GitHub
// renderings (schema, well-formed XML, escaping).
#include <catch2/catch.hpp>

#include <filesystem>
#include <cstdlib>
#include <map>
#include <set>

#include "emitters/json_schema.hpp"
#include "gate/report.hpp"
#include "gate/run.hpp"
#include "models/catalog.hpp"
#include "xml_check.hpp"

using namespace trilemma;
using trilemma::testing::xml_problem;
using trilemma::testing::xml_char_problem;

namespace {

std::string fixture(const std::string& name) {
  return (std::filesystem::path(TRILEMMA_SOURCE_DIR) / "tests/gate/data" / name).string();
}

const std::string k_budgets = R"(version: 1
budgets:
  - name: phone-chat
    device: snapdragon-8-gen-3
    scenario: memory
    context: 4096
    limits: {min_decode_tok_s: 8, max_ttft_ms: 4000, max_memory_gib: 3, max_loss_points: 5}
    weights: {min_bits: 3, max_bits: 9}
  - name: laptop-assistant
    device: apple-m2
    scenario: accuracy
    context: 8192
    limits: {min_decode_tok_s: 20, max_memory_gib: 8, max_kld: 0.05}
)";

gate::Request request_for(const std::vector<std::string>& model_ids, const std::string& yaml) {
  auto budgets = gate::parse_budgets(yaml, "budgets.yaml");
  REQUIRE(budgets.ok());
  gate::Request r;
  r.budgets = *budgets, r.budgets_file = "budgets.yaml", r.margin_pct = 5;
  for (const auto& id : model_ids) {
    auto model = models::resolve_model(id);
    REQUIRE(model.ok());
    r.models.push_back(*model);
  }
  return r;
}

gate::Report run_gate(const std::vector<std::string>& model_ids, const std::string& yaml = k_budgets) {
  auto report = gate::run(request_for(model_ids, yaml));
  REQUIRE(report.ok());
  return *report;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

const testing::Schema& report_schema() {
  using testing::Schema;
  static const Schema check{"object",
                            {{"figure", {"string"}}, {"limit_key", {"string"}}, {"limit", {"number"}}, {"value", {"number"}},
                             {"margin_pct", {"number"}}, {"pass", {"boolean"}}}};
  static const Schema figures{"object|null",
                              {{"decode_tok_s", {"number"}}, {"ttft_ms", {"number"}}, {"memory_gib", {"number"}},
                               {"loss_points", {"number"}}, {"kld", {"number"}}}};
  static const Schema limiting{"object|null",
                               {{"figure", {"string"}}, {"limit", {"number|null"}}, {"value", {"number|null"}},
                                {"margin_pct", {"number|null"}}, {"message", {"string"}}}};
  static const Schema regression{"object",
                                 {{"figure", {"string"}}, {"baseline", {"number"}}, {"value", {"number"}},
                                  {"change_pct", {"number"}}, {"message", {"string"}}}};
  static const Schema result{"object",
                             {{"model", {"string"}}, {"budget", {"string"}}, {"device", {"string"}}, {"scenario", {"string"}},
                              {"context", {"integer"}}, {"status", {"string"}}, {"message", {"string"}},
                              {"plan", {"string|null"}}, {"config", {"object|null"}}, {"figures", figures},
                              {"checks", {"array", {}, {check}}}, {"limiting", limiting},
                              {"regressions", {"array", {}, {regression}}}}};
  static const Schema s{"object",
                        {{"schema", {"string"}}, {"schema_version", {"integer"}}, {"budgets_file", {"string"}},
                         {"models", {"array", {}, {Schema{"string"}}}}, {"baseline", {"string"}}, {"margin_pct", {"number"}},
                         {"passed", {"boolean"}},
                         {"summary", {"object", {{"total", {"integer"}}, {"passed", {"integer"}}, {"failed", {"integer"}}, {"regressions", {"integer"}}}}},
                         {"results", {"array", {}, {result}}}}};
  return s;
}

}  // namespace

TEST_CASE("gate::parse_budgets: one fixture per failure class names file, line and field", "[gate]") {
  struct Case {
    std::string file, where, field;
  };
  const std::vector<Case> cases = {
      {"malformed.yaml", ":5:", "malformed YAML"},
      {"wrong-type.yaml", ":6:", "budgets[0].context: expected a number, got 'lots'"},
      {"missing-field.yaml", ":3:", "budgets[0].scenario: required field is missing"},
      {"negative-value.yaml", ":9:", "budgets[0].limits.max_memory_gib: must be > 0, got -3"},
      {"zero-context.yaml", ":6:", "budgets[0].context: must be 1..16777216"},
      {"unknown-key.yaml", ":8:", "budgets[0].limits.max_memory: unknown key"},
      {"unknown-device.yaml", ":4:", "budgets[0].device: unknown device 'pixel-99'"},
      {"bad-enum.yaml", ":5:", "budgets[0].scenario: unknown scenario 'fastest'"},
      {"bad-weight-format.yaml", ":9:", "budgets[0].weights.allowed[1]: unknown weight format 'q9_z'"},
      {"duplicate-name.yaml", ":8:", "budgets[1].name: duplicate budget name 'phone-chat'"},
      {"no-limits.yaml", ":7:", "budgets[0].limits: names no limit"},
      {"future-version.yaml", ":1:", "version: version 2 is not one this trilemma reads"},
      {"empty-weight-range.yaml", ":8:", "budgets[0].weights.max_bits: must be >= min_bits"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    const auto r = gate::load_budgets(fixture(c.file));
    REQUIRE_FALSE(r.ok());
    const std::string message = r.error().to_string();
    CAPTURE(message);
    CHECK(r.error().kind == ErrorKind::input);
    CHECK(message.rfind(fixture(c.file) + c.where, 0) == 0);
    CHECK(message.find(c.field) != std::string::npos);
  }
  CHECK(gate::load_budgets(fixture("no-such-file.yaml")).error().kind == ErrorKind::io);
}

TEST_CASE("gate::parse_budgets: a weight range resolves to the formats it allows", "[gate]") {
  auto b = gate::parse_budgets(R"(version: 1
budgets:
  - {name: b, device: apple-m2, scenario: memory, context: 2048, prompt: 128, ram_gib: 16,
     limits: {max_memory_gib: 4}, weights: {min_bits: 4, max_bits: 5}}
)", "inline.yaml");
  REQUIRE(b.ok());
  const auto& budget = b->budgets.at(0);
  // 4.5 bits each, and the NPUs' per-channel int4 at 4.0
  CHECK(budget.weight_formats == std::vector<std::string>{"q4_k_m", "q4_0", "w4a16"});
  CHECK(budget.resolved_device.ram_gib == 16);
  CHECK(budget.prompt == 128);
  CHECK(budget.line == 3);
  CHECK(gate::weight_bits(WeightFormat::q8_0) == Approx(8.5));
}

TEST_CASE("gate::evaluate: a budget passes only on a plan that meets every limit", "[gate]") {
  const auto report = run_gate({"qwen2.5-0.5b", "llama-3.1-8b"});
  REQUIRE(report.outcomes.size() == 4);
  for (const auto& o : report.outcomes) {
    CAPTURE(o.model, o.budget, o.message);
    REQUIRE(o.limiting);
    for (const auto& c : o.checks) {
      const auto& fi = gate::info(c.figure);
      const double expected = (fi.higher_is_better ? c.value - c.limit : c.limit - c.value) / c.limit * 100;
      CHECK(c.margin_pct == Approx(expected));
      CHECK(c.pass == (c.margin_pct >= 0));
    }
    if (o.pass) {
      CHECK(std::all_of(o.checks.begin(), o.checks.end(), [](const gate::Check& c) { return c.pass; }));
      double smallest = 1e300;
      for (const auto& c : o.checks) smallest = std::min(smallest, c.margin_pct);
      CHECK(*o.limiting->margin_pct == Approx(smallest));
    }
  }
  CHECK(report.outcomes[0].pass);   // qwen2.5-0.5b on the phone
  CHECK(report.outcomes[1].pass);   // and the laptop
  CHECK_FALSE(report.outcomes[2].pass);  // llama-3.1-8b does not fit the phone budget
  CHECK_FALSE(report.outcomes[3].pass);
  CHECK(report.failed() == 2);
  CHECK_FALSE(report.pass());
  // The phone budget's weight range excludes f16: the plan respects it.
  CHECK(gate::weight_bits(*weight_format_from_name(report.outcomes[0].weights)) <= 9);
}

TEST_CASE("gate::evaluate: max_kld is checked although the planner has no KLD constraint", "[gate]") {
  const auto loose = run_gate({"qwen2.5-0.5b"}, R"(version: 1
budgets:
  - {name: kld, device: apple-m2, scenario: memory, context: 2048, limits: {max_kld: 10}}
)");
  REQUIRE(loose.outcomes[0].pass);
  const double kld = loose.outcomes[0].figures[gate::Figure::kld];
  REQUIRE(kld > 0);
  const auto tight = run_gate({"qwen2.5-0.5b"}, "version: 1\nbudgets:\n  - {name: kld, device: apple-m2, scenario: memory, "
                                                "context: 2048, limits: {max_kld: " + std::to_string(kld / 2) + "}}\n");
  const auto& o = tight.outcomes[0];
  if (o.pass) CHECK(o.figures[gate::Figure::kld] <= kld / 2);  // a runner-up or front plan met it
  else CHECK(o.limiting->figure == "kld");
}

TEST_CASE("gate::evaluate: max_joules_per_token is a limit; a device without a power figure fails it as unknown", "[gate]") {
  const auto loose = run_gate({"qwen2.5-0.5b"}, R"(version: 1
budgets:
  - {name: energy, device: snapdragon-8-gen-3, scenario: memory, context: 2048, limits: {max_joules_per_token: 10}}
)");
  REQUIRE(loose.outcomes[0].pass);
  const double joules = loose.outcomes[0].figures[gate::Figure::joules_per_token];
  REQUIRE(joules > 0);
  REQUIRE(joules < 10);
  CHECK(loose.outcomes[0].limiting->figure == "joules_per_token");
  const auto tight = run_gate({"qwen2.5-0.5b"}, "version: 1\nbudgets:\n  - {name: energy, device: snapdragon-8-gen-3, "
                                                "scenario: memory, context: 2048, limits: {max_joules_per_token: " +
                                                    std::to_string(joules / 100) + "}}\n");
  CHECK_FALSE(tight.outcomes[0].pass);
  // The ESP32-S3 has no power figure under load (devices/power.yaml): no plan can show it meets an energy limit.
  const auto mcu = run_gate({"stories260k"}, R"(version: 1
budgets:
  - {name: energy, device: esp32-s3, scenario: memory, context: 256, limits: {max_joules_per_token: 1000}}
)");
  CHECK_FALSE(mcu.outcomes[0].pass);
  CHECK(mcu.outcomes[0].message.find("no power figure") != std::string::npos);
}

TEST_CASE("gate::evaluate: a budget failing only its scenario's limits names the limit it misses most, with its margin", "[gate]") {
  // The budget's own limit is loose; the latency scenario's (TTFT <= 100 ms, >= 20 tok/s) is
  // what an 8B model on a Raspberry Pi cannot meet: the cell must say which and by how much.
  const auto report = run_gate({"llama-3.1-8b"}, R"(version: 1
budgets:
  - {name: pi, device: raspberry-pi-5, scenario: latency, context: 2048, limits: {max_memory_gib: 100}}
)");
  REQUIRE(report.outcomes.size() == 1);
  const auto& o = report.outcomes[0];
  CAPTURE(o.message);
  CHECK_FALSE(o.pass);
  REQUIRE(o.limiting);
  CHECK((o.limiting->figure == "max_ttft_ms" || o.limiting->figure == "min_decode_tok_s"));
  REQUIRE(o.limiting->margin_pct);
  REQUIRE(o.limiting->limit);
  REQUIRE(o.limiting->value);
  CHECK(*o.limiting->margin_pct < 0);
  const bool upper = o.limiting->figure == "max_ttft_ms";
  const double expected = (upper ? *o.limiting->limit - *o.limiting->value : *o.limiting->value - *o.limiting->limit) / *o.limiting->limit * 100;
  CHECK(*o.limiting->margin_pct == Approx(expected));
  CHECK(o.limiting->message.find("scenario latency " + o.limiting->figure) == 0);
  CHECK(o.limiting->message.find("(margin -") != std::string::npos);
}

TEST_CASE("gate::evaluate: a context beyond the model's is a failing budget, not an error", "[gate]") {
  const auto report = run_gate({"stories260k"}, R"(version: 1
budgets:
  - {name: long, device: apple-m2, scenario: memory, context: 65536, limits: {max_memory_gib: 4}}
)");
  REQUIRE(report.outcomes.size() == 1);
  CHECK_FALSE(report.outcomes[0].pass);
  CHECK(report.outcomes[0].limiting->figure == "context");
}

TEST_CASE("gate: the JSON report matches its schema and round-trips as a baseline", "[gate]") {
  auto report = run_gate({"qwen2.5-0.5b", "llama-3.1-8b"});
  const auto j = gate::report_to_json(report);
  CHECK(testing::schema_mismatch(j, report_schema()).empty());
  CHECK(j["summary"]["failed"] == 2);
  CHECK(j["results"][0]["status"] == "pass");

  SECTION("the same figures are no regression") {
    REQUIRE(gate::compare_with_baseline(report, j.dump(), "base.json").ok());
    CHECK(report.regressions() == 0);
  }
  SECTION("a faster, smaller baseline makes this release regress") {
    auto base = j;
    base["results"][0]["figures"]["decode_tok_s"] = base["results"][0]["figures"]["decode_tok_s"].get<double>() * 1.5;
    base["results"][1]["figures"]["memory_gib"] = base["results"][1]["figures"]["memory_gib"].get<double>() * 0.5;
    base["results"][2]["status"] = "pass";
    REQUIRE(gate::compare_with_baseline(report, base.dump(), "base.json").ok());
    CHECK(report.outcomes[0].regressions.size() == 1);
    CHECK(report.outcomes[0].regressions[0].figure == "decode_tok_s");
    CHECK(report.outcomes[0].regressions[0].change_pct == Approx(100.0 / 3).epsilon(0.01));
    CHECK(report.outcomes[1].regressions.at(0).figure == "memory_gib");
    CHECK(report.outcomes[2].regressions.at(0).figure == "status");
    CHECK(report.regressions() == 3);
    CHECK(testing::schema_mismatch(gate::report_to_json(report), report_schema()).empty());
  }
  SECTION("a margin wider than the change is no regression") {
    auto base = j;
    base["results"][0]["figures"]["decode_tok_s"] = base["results"][0]["figures"]["decode_tok_s"].get<double>() * 1.04;
    REQUIRE(gate::compare_with_baseline(report, base.dump(), "base.json").ok());
    CHECK(report.regressions() == 0);
  }
  SECTION("a malformed baseline is bad input naming the field") {
    auto base = j;
    base["results"][1]["figures"]["ttft_ms"] = "fast";
    const auto s = gate::compare_with_baseline(report, base.dump(), "base.json");
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().to_string() == "base.json:results[1].figures.ttft_ms: must be a number, got \"fast\"");
    base["results"][1]["figures"]["ttft_ms"] = -1e308;  // an infinite regression once compared
    const auto negative = gate::compare_with_baseline(report, base.dump(), "base.json");
    REQUIRE_FALSE(negative.ok());
    CAPTURE(negative.error().to_string());
    CHECK(negative.error().to_string() == "base.json:results[1].figures.ttft_ms: must be in 0.0..1000000000000.0, got -1e+308");
    CHECK_FALSE(gate::compare_with_baseline(report, "{", "base.json").ok());
    CHECK_FALSE(gate::compare_with_baseline(report, R"({"schema": "trilemma.plan"})", "base.json").ok());
  }
}

TEST_CASE("gate: JUnit XML is well formed with one testcase per model x budget, everything escaped", "[gate]") {
  auto report = run_gate({"qwen2.5-0.5b", "llama-3.1-8b"});
  const auto xml = gate::report_to_junit(report);
  CHECK(xml_problem(xml).empty());
  CHECK(count(xml, "<testcase ") == 4);
  CHECK(count(xml, "<failure ") == 2);
  CHECK(xml.find("<testsuites name=\"trilemma gate\" tests=\"4\" failures=\"2\"") != std::string::npos);
  CHECK(xml.find("min_decode_tok_s") != std::string::npos);  // failures carry the limiting figure
  // A dotted model id is one class, not packages: CI viewers split classnames at dots (issue 50).
  CHECK(count(xml, "classname=\"trilemma.gate.qwen2_5-0_5b\"") == 2);
  CHECK(count(xml, "qwen2.5") == 0);

  // Hostile text in every field a report carries.
  report.budgets_file = "dir/<b&d>.yaml";
  report.outcomes[0].model = "m\"<&>'";
  report.outcomes[2].message = "a < b && c > d \"quoted\" 'single' ]]> \x01 end";
  report.outcomes[2].limiting->message = "<limit & more>";
  const auto hostile = gate::report_to_junit(report);
  CHECK(xml_problem(hostile).empty());
  CHECK(hostile.find("m&quot;&lt;&amp;&gt;&apos;") != std::string::npos);
  CHECK(xml_problem("<a><b></a></b>") != "");  // the checker catches misnesting
  CHECK(xml_problem("<a>x & y</a>") != "");
  CHECK(gate::xml_escape("<&>\"'") == "&lt;&amp;&gt;&quot;&apos;");
  // Characters XML 1.0 does not allow, escaped or not: controls and U+FFFE/U+FFFF become allowed ones.
  const std::string odd = gate::xml_escape("a\x01\x1b\xEF\xBF\xBE\xEF\xBF\xBF\xEF\xBF\xBD\xC3\xA9\xF0\x9F\x98\x80\xFF");
  CHECK(xml_char_problem(odd).empty());
  CHECK(odd == "a  \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xC3\xA9\xF0\x9F\x98\x80\xEF\xBF\xBD");
  CHECK_FALSE(xml_char_problem("\xEF\xBF\xBE").empty());  // the checker catches them
  CHECK_FALSE(xml_char_problem("\x01").empty());
  CHECK_FALSE(xml_char_problem("\xC0\x80").empty());
}

TEST_CASE("gate: GitHub annotations, one per outcome, escaped as workflow commands", "[gate]") {
  auto report = run_gate({"qwen2.5-0.5b", "llama-3.1-8b"});
  const auto gh = gate::report_to_github(report);
  CHECK(count(gh, "::notice ") == 2);
  CHECK(count(gh, "::error ") == 2);
  CHECK(gh.find("::error file=budgets.yaml,line=3,title=trilemma gate%3A llama-3.1-8b / phone-chat fails::") !=
        std::string::npos);
  CHECK(gate::github_escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext");
  CHECK(gate::github_escape_property("a:b,c%") == "a%3Ab%2Cc%25");
  for (std::size_t at = 0, next; (next = gh.find('\n', at)) != std::string::npos; at = next + 1)
    CHECK(gh.compare(at, 2, "::") == 0);  // every line is a workflow command: messages carry no raw newline
}

TEST_CASE("gate: every example budgets file loads (one per device class, and host)", "[gate]") {
  // `host` reads the fixture profile: the test never probes the machine.
  setenv("TRILEMMA_HOST_PROFILE", (std::filesystem::path(TRILEMMA_SOURCE_DIR) / "tests/gate/fixtures/ci-host.yaml").c_str(), 1);
  std::set<std::string> classes;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(TRILEMMA_SOURCE_DIR) / "examples/budgets")) {
    CAPTURE(entry.path().string());
    const auto b = gate::load_budgets(entry.path().string());
    REQUIRE(b.ok());
    for (const auto& budget : b->budgets) classes.insert(budget.device == "host" ? "host" : budget.resolved_device.device_class);
  }
  CHECK(classes == std::set<std::string>{"phone", "laptop", "desktop", "board", "module", "mcu", "gpu", "host"});
}

TEST_CASE("gate::run: every model x budget in order; only host budgets with a plan are measured; a failed measurement is the error", "[gate]") {
  const std::string yaml = k_budgets + R"(  - name: this-machine
    device: host
    scenario: memory
    context: 1024
    limits: {min_decode_tok_s: 0.001, max_memory_gib: 64}
)";
  // `host` from the CI fixture's profile, not this machine's probe (none is set in unit tests).
  const auto host = std::filesystem::path(TRILEMMA_SOURCE_DIR) / "tests/gate/fixtures/ci-host.yaml";
  REQUIRE(std::filesystem::exists(host));
  ::setenv("TRILEMMA_HOST_PROFILE", host.c_str(), 1);
  auto request = request_for({"qwen2.5-0.5b", "stories260k"}, yaml);
  std::vector<std::string> measured;
  request.measure_on_host = [&](gate::Outcome& o, const models::Model& m, const gate::Budget& b) -> Status {
    measured.push_back(m.id + "/" + b.name);
    gate::apply_measurement(o, b.limits, 1e6, 1, 0.001, "test measurement");
    return Ok{};
  };
  auto report = gate::run(request);
  REQUIRE(report.ok());
  REQUIRE(report->outcomes.size() == 6);
  CHECK(report->models == std::vector<std::string>{"qwen2.5-0.5b", "stories260k"});
  CHECK(report->outcomes[0].budget == "phone-chat");
  CHECK(report->outcomes[2].budget == "this-machine");
  CHECK(report->outcomes[3].model == "stories260k");
  // stories260k's 512-token context cannot take the host budget's 1024: no plan, nothing to measure.
  CHECK_FALSE(report->outcomes[5].has_plan);
  CHECK(measured == std::vector<std::string>{"qwen2.5-0.5b/this-machine"});
  CHECK(report->outcomes[2].figures[gate::Figure::decode_tok_s] == 1e6);
  // Without the callback the same budget keeps its prediction.
  request.measure_on_host = nullptr;
  auto predicted = gate::run(request);
  REQUIRE(predicted.ok());
  CHECK(predicted->outcomes[2].figures[gate::Figure::decode_tok_s] != 1e6);

  request.measure_on_host = [](gate::Outcome&, const models::Model&, const gate::Budget&) -> Status {
    return make_error(ErrorKind::io, "engine", "", "the engine did not start");
  };
  auto failed = gate::run(request);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().message == "the engine did not start");
  request.margin_pct = -1;
  auto bad_margin = gate::run(request);
  REQUIRE_FALSE(bad_margin.ok());
  CHECK(bad_margin.error().file == "--margin-pct");
  ::unsetenv("TRILEMMA_HOST_PROFILE");
}
