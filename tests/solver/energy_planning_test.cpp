// The planner's energy figures and limits, the battery profile and sustained planning, on
// built-in devices: each checked against the same plan's own figures worked by hand.
#include <catch2/catch.hpp>

#include "catalog_fixture.hpp"
#include "devices/device_db.hpp"
#include "models/catalog.hpp"
#include "power/power_tables.hpp"
#include "power/sustained.hpp"
#include "solver/planner.hpp"

using namespace trilemma;

namespace {

struct Planning : testing::CatalogFixture {
  Result<solver::PlanResult> run(const std::string& model_id, const devices::Device& d, const std::string& scenario,
                                 solver::Constraints budgets = {}, std::optional<double> sustained = std::nullopt,
                                 solver::Pins pins = {}) {
    solver::PlanRequest req;
    req.model = &model(model_id);
    req.device = &d;
    req.profile = solver::resolve_profile(scenario).value();
    req.budgets = budgets;
    req.sustained_minutes = sustained;
    req.pins = pins;
    req.catalog = &catalog;
    return solver::plan(req);
  }
};

}  // namespace

TEST_CASE("plan: energy per token is the plan's draw over its speed; battery share from the phone's battery", "[solver][power]") {
  Planning p;
  const auto d = devices::resolve_device("snapdragon-8-gen-3").value();
  REQUIRE(d.battery_wh);
  auto r = p.run("llama-3.2-1b", d, "latency");
  REQUIRE(r.ok());
  REQUIRE(r->chosen);
  const auto& e = r->chosen->estimate.energy;
  REQUIRE(e.known);
  const auto& l = r->chosen->estimate.latency;
  CHECK(e.joules_per_token.mid == Approx(e.decode_w.mid / l.decode_tok_s.mid));
  CHECK(e.joules_per_prompt_token.mid == Approx(e.prefill_w.mid / l.prefill_tok_s.mid));
  REQUIRE(e.battery_pct_per_1k_tokens);
  CHECK(e.battery_pct_per_1k_tokens->mid == Approx(1000 * e.joules_per_token.mid / (*d.battery_wh * 3600) * 100));
  // The phone prior (devices/power.yaml: 4-9 W decode): no measurement in the file.
  CHECK(e.decode_w.low == Approx(4));
  CHECK(e.decode_w.high == Approx(9));
}

TEST_CASE("plan: --max-power-w and --max-joules-per-token are limits; a device without power figures cannot meet them", "[solver][power]") {
  Planning p;
  // Jetson Orin Nano prefill draws 0.75 x its power mode (devices/power.yaml module prior):
  // 18.75 W in the 25 W mode, 11.25 W in the 15 W mode.
  solver::Constraints cap;
  cap.max_power_w = 12;
  auto mode25 = p.run("qwen2.5-0.5b", devices::resolve_device("jetson-orin-nano-8gb").value(), "memory", cap);
  REQUIRE(mode25.ok());
  CHECK_FALSE(mode25->chosen);
  bool relaxes_power = false;
  for (const auto& x : mode25->relaxations)
    if (x.constraint == "max_power_w") relaxes_power = x.plan && x.plan->power_w() > 12;
  CHECK(relaxes_power);
  auto mode15 = p.run("qwen2.5-0.5b", devices::resolve_device("jetson-orin-nano-8gb-15w").value(), "memory", cap);
  REQUIRE(mode15.ok());
  REQUIRE(mode15->chosen);
  CHECK(mode15->chosen->power_w() == Approx(0.75 * 15));

  const auto phone = devices::resolve_device("snapdragon-8-gen-3").value();
  auto free = p.run("llama-3.2-1b", phone, "latency");
  REQUIRE(free.ok());
  REQUIRE(free->chosen);
  solver::Constraints tight;
  tight.max_joules_per_token = free->chosen->joules_per_token() * 0.8;
  auto limited = p.run("llama-3.2-1b", phone, "latency", tight);
  REQUIRE(limited.ok());
  if (limited->chosen) {
    CHECK(limited->chosen->joules_per_token() <= *tight.max_joules_per_token);
  } else {
    bool named = false;
    for (const auto& x : limited->relaxations) named = named || x.constraint == "max_joules_per_token";
    CHECK(named);
  }

  const auto mcu = devices::resolve_device("esp32-s3").value();
  solver::Constraints any_power;
  any_power.max_power_w = 1000;
  auto none = p.run("stories260k", mcu, "memory", any_power);
  REQUIRE(none.ok());
  CHECK_FALSE(none->chosen);
  REQUIRE_FALSE(none->relaxations.empty());
  CHECK(none->relaxations.front().message.find("no power figure for esp32-s3") != std::string::npos);
}

TEST_CASE("plan --scenario battery: the fewest joules per token within 10%, at 10 minutes' sustained speed", "[solver][power]") {
  Planning p;
  const auto d = devices::resolve_device("snapdragon-8-gen-3").value();
  auto battery = p.run("llama-3.2-3b", d, "battery");
  REQUIRE(battery.ok());
  REQUIRE(battery->chosen);
  REQUIRE(battery->sustained);
  CHECK(battery->sustained->minutes == 10);
  const double best = battery->chosen->joules_per_token();
  for (const auto& c : battery->front)
    if (c.violations.empty() && c.tok_s() >= 6 && c.loss_points() <= 10 && c.estimate.energy.known) CHECK(best <= 1.1 * c.joules_per_token() + 1e-12);
}

TEST_CASE("plan --sustained: throttled speed at the same draw, the fraction from the device's points", "[solver][power]") {
  Planning p;
  const auto d = devices::resolve_device("snapdragon-8-gen-3").value();  // measured: 0.483 after 20 minutes
  solver::Pins pins;
  pins.weights = WeightFormat::q4_0;
  pins.backend = Backend::cpu;
  pins.kv = TensorType::f16;
  pins.strategy = KvStrategy::contiguous;
  pins.speculative = false;
  pins.threads = 8;
  auto peak = p.run("llama-3.2-1b", d, "memory", {}, std::nullopt, pins);
  auto hot = p.run("llama-3.2-1b", d, "memory", {}, 20.0, pins);
  REQUIRE(peak.ok());
  REQUIRE(hot.ok());
  REQUIRE(peak->chosen);
  REQUIRE(hot->chosen);
  REQUIRE(hot->sustained);
  CHECK(hot->sustained->has_data);
  CHECK(hot->sustained->fraction.mid == Approx(0.483));
  // Bandwidth and compute scale by the fraction; the fixed per-pass overhead does not, so the
  // speed falls, by at most the fraction.
  const double ratio = hot->chosen->tok_s() / peak->chosen->tok_s();
  CHECK(ratio < 1);
  CHECK(ratio >= 0.483 - 1e-9);
  CHECK(hot->chosen->estimate.energy.decode_w.mid == Approx(peak->chosen->estimate.energy.decode_w.mid));
  CHECK(hot->chosen->joules_per_token() == Approx(peak->chosen->joules_per_token() / ratio));
  CHECK_FALSE(peak->sustained);
}
