// The inverse formulas against a hand-worked shape, and the device verdicts against plan.
#include <catch2/catch.hpp>

#include "devices/device_db.hpp"
#include "models/catalog.hpp"
#include "solver/requirements.hpp"

using namespace trilemma;

namespace {

// 2 layers, 4 query heads and 2 KV heads of 16: q_dim 64, kv_dim 32.
models::Model tiny_model() {
  models::Model m;
  m.id = "tiny";
  m.shape.layers = 2;
  m.shape.hidden = 64;
  m.shape.heads = 4;
  m.shape.kv_heads = 2;
  m.shape.head_dim = 16;
  m.shape.ffn = 128;
  m.shape.vocab = 256;
  m.shape.context = 512;
  return m;
}

}  // namespace

TEST_CASE("format_need: bandwidth = tok/s x bytes per token, compute = FLOPs / time, memory = weights + KV + scratch", "[solver][requirements]") {
  const auto model = tiny_model();
  const auto pm = solver::PreparedModel::prepare(model);
  DeploymentConfig c;
  c.weights = WeightFormat::f32;
  c.kv_type = TensorType::f16;
  c.context = 512;
  c.prompt = 64;
  const auto n = solver::format_need(pm, c, 10, 50);
  const double active = count_parameters(model.shape).active_per_token;
  // KV read at the context's end: K and V x 2 layers x kv_dim 32 x 512 positions x 2 bytes.
  const double kv_read = 2.0 * 2 * 32 * 512 * 2;
  CHECK(n.bytes_per_token == Approx(4 * active + kv_read));
  CHECK(n.bandwidth_gbps == Approx(10 * (4 * active + kv_read) / 1e9));
  // 2 FLOPs per weight, and QK^T + AV: 4 x layers x q_dim per attended position.
  CHECK(n.decode_gops == Approx(10 * (2 * active + 4.0 * 2 * 64 * 512) / 1e9));
  // The prompt of 64 attends on average to half of itself.
  const double prompt_flops = 64 * (2 * active + 4.0 * 2 * 64 * 32);
  CHECK(n.prefill_gops == Approx(prompt_flops / 0.05 / 1e9));
  const double weights = 4 * count_parameters(model.shape).total();
  const double kv_all = 2.0 * 2 * 32 * 512 * 2;
  CHECK(n.memory_gib * 1073741824.0 > weights + kv_all);
  CHECK(n.memory_gib * 1073741824.0 < 1.5 * (weights + kv_all) + 8e6);  // scratch on top, small
  // No limits, no speed figures.
  const auto none = solver::format_need(pm, c, 0, 0);
  CHECK(none.bandwidth_gbps == 0);
  CHECK(none.prefill_gops == 0);
  CHECK(none.bytes_per_token == n.bytes_per_token);
}

TEST_CASE("requirements: each device qualifies exactly when plan finds a feasible configuration on it", "[solver][requirements]") {
  auto catalog = models::builtin_models().value();
  const models::Model* model = nullptr;
  for (const auto& m : catalog)
    if (m.id == "qwen2.5-1.5b") model = &m;
  REQUIRE(model);
  auto devices = devices::builtin_devices().value();
  solver::RequirementsRequest req;
  req.model = model;
  req.profile = solver::resolve_profile("latency").value();
  req.devices = &devices;
  req.catalog = &catalog;
  auto r = solver::requirements(req);
  REQUIRE(r.ok());
  REQUIRE(r->devices.size() == devices.size());
  std::size_t qualifying = 0;
  bool ranked = true, seen_other = false;
  for (const auto& v : r->devices) {
    solver::PlanRequest p;
    p.model = model, p.device = v.device, p.profile = req.profile, p.catalog = &catalog;
    auto plan = solver::plan(p);
    INFO(v.device->id);
    CHECK(v.qualifies == (plan.ok() && plan->chosen.has_value()));
    if (v.qualifies) {
      ++qualifying;
      CHECK(v.margin >= 1);
      CHECK(v.plan->tok_s() >= 20);
      CHECK(v.plan->ttft_ms() <= 100);
      ranked = ranked && !seen_other;
    } else {
      seen_other = true;
      if (v.near_miss) CHECK(v.margin < 1);
      CHECK_FALSE(v.lacks.empty());
    }
  }
  CHECK(ranked);  // qualifying devices come first
  CHECK(qualifying > 0);
  CHECK(qualifying < devices.size());
  // Device RAM: the memory plus the CPU runtime, over the share the class leaves to apps.
  const auto classes = devices::class_table().value();
  for (const auto& n : r->needs) {
    REQUIRE(n.ram_gib_by_class.size() == classes->size());
    for (std::size_t i = 0; i < classes->size(); ++i)
      CHECK(n.ram_gib_by_class[i].second * (1 - (*classes)[i].os_reserve_fraction) > n.memory_gib);
  }
  // Per weight format and KV family.
  CHECK(r->needs.size() == 2 * (weight_formats().size() - 0) - 2 * std::count_if(weight_formats().begin(), weight_formats().end(),
                                                                                 [](const auto& w) { return w.pinned_only; }));
}
