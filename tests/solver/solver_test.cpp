#include <catch2/catch.hpp>

#include <cstring>

#include "catalog_fixture.hpp"
#include "devices/device_db.hpp"
#include "models/catalog.hpp"
#include "solver/plan_document.hpp"
#include "solver/planner.hpp"

using namespace trilemma;

namespace {

using Fixture = testing::CatalogFixture;

Result<solver::PlanResult> plan_for(Fixture& f, const std::string& model, const devices::Device& device,
                                    const std::string& scenario, solver::Pins pins = {}) {
  solver::PlanRequest req;
  req.model = &f.model(model);
  req.device = &device;
  req.profile = solver::resolve_profile(scenario).value();
  req.catalog = &f.catalog;
  req.pins = pins;
  return solver::plan(req);
}

}  // namespace

TEST_CASE("solver::profiles: the four scenarios load", "[solver]") {
  auto all = solver::builtin_profiles();
  REQUIRE(all.ok());
  REQUIRE(all->size() == 4);
  CHECK_FALSE(solver::resolve_profile("fastest").ok());
}

TEST_CASE("solver::plan: each scenario keeps its corner on a laptop", "[solver]") {
  Fixture f;
  const auto device = devices::resolve_device("apple-m1").value();
  auto latency = plan_for(f, "qwen2.5-0.5b", device, "latency");
  REQUIRE(latency.ok());
  REQUIRE(latency->chosen);
  CHECK(latency->chosen->tok_s() >= 20);
  CHECK(latency->chosen->ttft_ms() <= 100);

  auto memory = plan_for(f, "qwen2.5-0.5b", device, "memory");
  REQUIRE(memory.ok());
  REQUIRE(memory->chosen);
  CHECK(memory->chosen->memory_gib() <= 4);
  // Memory-first takes the smallest footprint within its 10% tolerance, then accuracy.
  CHECK(memory->chosen->memory_gib() <= 1.1 * latency->chosen->memory_gib());

  auto accuracy = plan_for(f, "qwen2.5-0.5b", device, "accuracy");
  REQUIRE(accuracy.ok());
  REQUIRE(accuracy->chosen);
  const auto w = accuracy->chosen->config.weights;
  CHECK((w == WeightFormat::f16 || w == WeightFormat::bf16 || w == WeightFormat::q8_0 || w == WeightFormat::f32));
  CHECK(accuracy->chosen->loss_points() <= latency->chosen->loss_points());
  CHECK(accuracy->chosen->loss_points() <= memory->chosen->loss_points());
}

TEST_CASE("solver::plan: the Pareto front has no dominated plan", "[solver]") {
  Fixture f;
  const auto device = devices::resolve_device("raspberry-pi-5").value();
  auto r = plan_for(f, "qwen2.5-1.5b", device, "memory");
  REQUIRE(r.ok());
  REQUIRE(r->front.size() >= 3);
  for (const auto& a : r->front)
    for (const auto& b : r->front) {
      const bool dominates = a.tok_s() >= b.tok_s() && a.memory_gib() <= b.memory_gib() &&
                             a.loss_points() <= b.loss_points() &&
                             (a.tok_s() > b.tok_s() || a.memory_gib() < b.memory_gib() || a.loss_points() < b.loss_points());
      CHECK_FALSE(dominates);
    }
}

TEST_CASE("solver::plan: nothing fits -> per-constraint relaxations and smaller models", "[solver]") {
  Fixture f;
  // 4 GiB: the allowed formats (f16, q8_0) do not fit, while decode stays above the accuracy
  // profile's 1 tok/s floor on this board, so memory alone keeps them out.
  auto device = devices::resolve_device("raspberry-pi-5").value();
  device.ram_gib = 4;
  auto r = plan_for(f, "llama-3.1-8b", device, "accuracy");
  REQUIRE(r.ok());
  CHECK_FALSE(r->chosen);
  REQUIRE_FALSE(r->relaxations.empty());
  bool memory_named = false;
  for (const auto& x : r->relaxations) memory_named |= x.constraint == "device_memory";
  CHECK(memory_named);
  CHECK_FALSE(r->smaller_models.empty());
  CHECK(r->smaller_models.front().rfind("llama-3.2-", 0) == 0);
}

TEST_CASE("solver::plan: pins reduce the search to one configuration", "[solver]") {
  Fixture f;
  const auto device = devices::resolve_device("apple-m2").value();
  solver::Pins p;
  p.weights = WeightFormat::q4_0;
  p.kv = TensorType::q8_0;
  p.strategy = KvStrategy::contiguous;
  p.speculative = false;
  p.backend = Backend::cpu;
  p.threads = 4;
  auto r = plan_for(f, "llama-3.2-1b", device, "latency", p);
  REQUIRE(r.ok());
  CHECK(r->evaluated == 1);
}

TEST_CASE("solver::PreparedModel: a file's untied embedding table is read one row per token", "[solver]") {
  Fixture f;
  auto model = f.model("tinyllama-1.1b");  // untied: the classifier is its own matrix
  REQUIRE_FALSE(model.shape.tied_embeddings);
  model.stored_format = "q4_0";
  model.stored_tensors = {{"token_embd.weight", 32000ull * 2048, 36864000, "q4_0"},
                          {"output.weight", 32000ull * 2048, 36864000, "q4_0"},
                          {"blk.0.attn_q.weight", 2048ull * 2048, 2359296, "q4_0"}};
  const auto p = solver::PreparedModel::prepare(model);
  REQUIRE(p.stored);
  CHECK(p.stored->total == Approx(36864000.0 * 2 + 2359296));
  CHECK(p.stored->per_token == Approx(36864000.0 / 32000 + 36864000 + 2359296));
  model.shape.tied_embeddings = true;  // a tied table is the classifier too: read whole
  CHECK(solver::PreparedModel::prepare(model).stored->per_token == Approx(p.stored->total));
}

TEST_CASE("solver::estimate: Mixtral memory uses total parameters, speed uses active", "[solver]") {
  Fixture f;
  const auto device = devices::resolve_device("apple-m2-ultra").value();
  const auto mixtral = solver::PreparedModel::prepare(f.model("mixtral-8x7b"));
  const auto pd = solver::PreparedDevice::prepare(device).value();
  DeploymentConfig c;
  c.weights = WeightFormat::f16;
  c.context = 4096;
  const auto e = solver::estimate(mixtral, pd, c).value();
  CHECK(e.memory.weights_bytes == Approx(46.7e9 * 2).epsilon(0.01));
  // A token reads ~12.9B parameters (two experts and the shared layers), not 46.7B.
  CHECK(e.latency.bytes_per_token < 0.3 * e.memory.weights_bytes);
  CHECK(e.latency.bytes_per_token > 0.25 * e.memory.weights_bytes);
  // The loss model sees the experts: total / active parameters (46.7B / 12.9B), dense models 1.
  CHECK(mixtral.traits.experts_ratio == Approx(46.7 / 12.9).epsilon(0.03));
  CHECK(solver::PreparedModel::prepare(f.model("llama-3.1-8b")).traits.experts_ratio == 1);
}

TEST_CASE("solver::estimate: speculative decoding adds the draft's memory and speeds decode", "[solver]") {
  Fixture f;
  const auto device = devices::resolve_device("apple-m1").value();
  const auto target = solver::PreparedModel::prepare(f.model("llama-3.1-8b"));
  const auto draft = solver::PreparedModel::prepare(f.model("llama-3.2-1b"));
  const auto pd = solver::PreparedDevice::prepare(device).value();
  DeploymentConfig plain;
  plain.backend = Backend::metal;  // GPU: verifying g+1 tokens costs about one memory-bound step
  plain.weights = WeightFormat::q8_0;
  plain.context = 2048;
  DeploymentConfig spec = plain;
  spec.speculative = {DraftKind::model, "llama-3.2-1b", WeightFormat::q8_0, 0, 5};
  const auto a = solver::estimate(target, pd, plain).value();
  const auto b = solver::estimate(target, pd, spec, &draft).value();
  CHECK(b.memory.draft_bytes > draft.bytes(WeightFormat::q8_0).total);
  CHECK(b.latency.decode_tok_s.mid > a.latency.decode_tok_s.mid);
  CHECK(b.accuracy.points.mid == a.accuracy.points.mid);  // verification keeps the target's output
}

TEST_CASE("solver::plan_document: round trip and refusal of bad documents", "[solver]") {
  Fixture f;
  const auto device = devices::resolve_device("apple-m2").value();
  auto r = plan_for(f, "llama-3.2-1b", device, "memory");
  REQUIRE(r.ok());
  REQUIRE(r->chosen);
  const auto profile = solver::resolve_profile("memory").value();
  const auto doc = solver::plan_to_json(*r, f.model("llama-3.2-1b"), device, profile);
  CHECK(doc["schema_version"] == solver::k_plan_schema_version);
  auto back = solver::parse_plan_document(doc.dump(), "plan.json");
  REQUIRE(back.ok());
  CHECK(describe(back->config) == describe(r->chosen->config));
  CHECK(back->model == "llama-3.2-1b");

  auto future = doc;
  future["schema_version"] = solver::k_plan_schema_version + 1;
  auto f1 = solver::parse_plan_document(future.dump(), "plan.json");
  REQUIRE_FALSE(f1.ok());
  CHECK(f1.error().where == "schema_version");
  CHECK(f1.error().message.find("newer") != std::string::npos);

  auto bad_format = doc;
  bad_format["chosen"]["config"]["weights"] = "q9_9";
  auto f2 = solver::parse_plan_document(bad_format.dump(), "plan.json");
  REQUIRE_FALSE(f2.ok());
  CHECK(f2.error().where == "chosen.config.weights");

  auto f3 = solver::parse_plan_document("{\"schema\": \"trilemma.plan\", ", "plan.json");
  REQUIRE_FALSE(f3.ok());
  CHECK(f3.error().message == "malformed JSON");
  CHECK(f3.error().where == "1:29");  // line:column as the YAML readers give them (issue 50)
  auto f3b = solver::parse_plan_document("{\n  \"schema\": \"trilemma.plan\",\n  \"x\": tru\n}", "plan.json");
  REQUIRE_FALSE(f3b.ok());
  CHECK(f3b.error().where == "3:11");  // where the parser gave up: just past `tru`

  // Issue 14: a document nested 100000 deep overflowed the stack when copied; a number no
  // double holds and a field of the wrong type threw past the parser (exit 70).
  const std::string deep = "{\"schema\": \"trilemma.plan\", \"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  auto f4 = solver::parse_plan_document(deep, "plan.json");
  REQUIRE_FALSE(f4.ok());
  CHECK(f4.error().kind == ErrorKind::input);
  CHECK(f4.error().message.find("nested deeper than 64") != std::string::npos);
  CHECK(f4.error().where == "1:" + std::to_string(std::strlen("{\"schema\": \"trilemma.plan\", \"x\": ") + 64));
  auto huge = doc.dump();
  huge.replace(huge.find("\"schema_version\":") + 17, 1, "1e400,\"was\":1");
  auto f5 = solver::parse_plan_document(huge, "plan.json");
  REQUIRE_FALSE(f5.ok());
  CHECK(f5.error().kind == ErrorKind::input);
  auto wrong_type = doc;
  wrong_type["device"]["id"] = 5;
  auto f6 = solver::parse_plan_document(wrong_type.dump(), "plan.json");
  REQUIRE_FALSE(f6.ok());
  CHECK(f6.error().kind == ErrorKind::input);
  CHECK(f6.error().file == "plan.json");

  // A strategy's own parameters come from its row of the strategy table: written, read back,
  // checked, and refused by their field's name.
  auto sliding = doc;
  auto& sc = sliding["chosen"]["config"];
  sc["kv_strategy"] = "sliding", sc["window"] = 512, sc["sinks"] = 4;
  auto s1 = solver::parse_plan_document(sliding.dump(), "plan.json");
  REQUIRE(s1.ok());
  CHECK(s1->config.kv_strategy == KvStrategy::sliding);
  CHECK(s1->config.kv_params.sliding.window == 512);
  CHECK(s1->config.kv_params.sliding.sinks == 4);
  CHECK(solver::config_to_json(s1->config)["window"] == 512);
  sc["window"] = 0;
  auto s2 = solver::parse_plan_document(sliding.dump(), "plan.json");
  REQUIRE_FALSE(s2.ok());
  CHECK(s2.error().where == "chosen.config.window");
  CHECK(s2.error().message == "a sliding window keeps at least 1 position");
  sc.erase("sinks");
  auto s3 = solver::parse_plan_document(sliding.dump(), "plan.json");
  REQUIRE_FALSE(s3.ok());
  CHECK(s3.error().where == "chosen.config.sinks");
  auto offload = doc;
  auto& oc = offload["chosen"]["config"];
  oc["kv_strategy"] = "offload", oc["kv_resident_fraction"] = 1.5;
  auto o1 = solver::parse_plan_document(offload.dump(), "plan.json");
  REQUIRE_FALSE(o1.ok());
  CHECK(o1.error().where == "chosen.config.kv_resident_fraction");
  CHECK(o1.error().message == "must be in (0, 1]");
  oc["kv_resident_fraction"] = "half";
  auto o2 = solver::parse_plan_document(offload.dump(), "plan.json");
  REQUIRE_FALSE(o2.ok());
  CHECK(o2.error().message == "missing or not a number");
}

TEST_CASE("solver::parse_profile: one fixture per failure class names file, line and field", "[solver]") {
  const std::string valid = R"(id: custom
name: Custom
use_cases: "tests"
keeps: memory
constraints:
  max_memory_gib: 2
objective:
  - {metric: memory_gib, direction: min, tolerance_pct: 10}
defaults:
  context: 1024
  prompt: 64
)";
  REQUIRE(solver::parse_profile(valid, "profiles/custom.yaml", "custom").ok());
  auto expect = [](const std::string& text, const std::string& needle) {
    auto p = solver::parse_profile(text, "profiles/custom.yaml", "custom");
    REQUIRE_FALSE(p.ok());
    CAPTURE(p.error().to_string());
    CHECK(p.error().to_string().rfind("profiles/custom.yaml:", 0) == 0);
    CHECK(p.error().to_string().find(needle) != std::string::npos);
  };
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = valid;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  expect("keeps: [", "malformed YAML");
  expect(with("max_memory_gib: 2", "max_memory_gib: lots"), "constraints.max_memory_gib: expected a number");
  expect(with("max_memory_gib: 2", "max_memory_gib: -2"), "constraints.max_memory_gib: must be > 0");
  expect(with("  prompt: 64\n", ""), "defaults.prompt: required field is missing");
  expect(with("keeps: memory", "keeps: money"), "keeps: unknown value 'money'");
  expect(with("max_memory_gib: 2", "max_memory_gb: 2"), "constraints.max_memory_gb: unknown key");
  expect(with("direction: min", "direction: down"), "objective[0].direction: unknown value");
  expect(with("max_memory_gib: 2", "allowed_weights: [q9_9]"), "unknown weight format 'q9_9'");
  expect(with("id: custom", "id: other"), "does not match the file name");
}
