// The power module against hand-worked cases: energy arithmetic, where each phase's power comes
// from (measurement, TDP share, class figure), throttling interpolation, and devices/power.yaml.
#include <catch2/catch.hpp>

#include <algorithm>

#include "devices/device_loader.hpp"
#include "power/energy.hpp"
#include "power/power_draw.hpp"
#include "power/power_tables.hpp"
#include "power/sustained.hpp"

using namespace trilemma;

namespace {

// Every class has a row; the board prior has both kinds of figure, the gpu prior covers cuda only.
const char* k_tables = R"(classes:
  phone: {decode_w: {low: 4, mid: 6, high: 9}, prefill_w: 10, sustained: [{minutes: 5, fraction: {low: 0.6, mid: 0.8, high: 1.0}}], sources: [{fields: [decode_w], basis: b}]}
  laptop: {sources: [{fields: [decode_w], basis: none}]}
  desktop: {sources: [{fields: [decode_w], basis: none}]}
  board: {decode_w: 9, prefill_w: 10, decode_tdp_fraction: {low: 0.85, mid: 1.0, high: 1.1}, prefill_tdp_fraction: {low: 0.9, mid: 1.0, high: 1.15}, sources: [{fields: [decode_w], url: u}]}
  module: {sources: [{fields: [decode_w], basis: none}]}
  mcu: {sources: [{fields: [decode_w], basis: "nothing published"}]}
  gpu: {backends: [cuda], decode_tdp_fraction: 0.5, sources: [{fields: [decode_w], basis: b}]}
)";

power::PowerTables tables() {
  auto t = power::parse_power_tables(k_tables, "power.yaml");
  REQUIRE(t.ok());
  return *t;
}

devices::Device device(const std::string& device_class) {
  devices::Device d;
  d.id = "test-" + device_class;
  d.device_class = device_class;
  return d;
}

}  // namespace

TEST_CASE("energy: J/token = W / (tok/s), the range pairs low power with high speed; battery share per 1,000 tokens", "[power]") {
  power::PowerDraw draw{{5, 6.5, 8}, Range::exact(10), ""};
  LatencyEstimate l;
  l.decode_tok_s = {8, 10, 12};
  l.prefill_tok_s = {100, 200, 400};
  const auto e = power::energy(draw, l, 15.0);
  CHECK(e.known);
  CHECK(e.joules_per_token.low == Approx(5.0 / 12));   // 0.417
  CHECK(e.joules_per_token.mid == Approx(0.65));
  CHECK(e.joules_per_token.high == Approx(1.0));       // 8 W / 8 tok/s
  CHECK(e.joules_per_prompt_token.low == Approx(0.025));
  CHECK(e.joules_per_prompt_token.mid == Approx(0.05));
  CHECK(e.joules_per_prompt_token.high == Approx(0.1));
  // 1000 x 0.65 J = 650 J of 15 Wh x 3600 = 54000 J: 1.204 %.
  REQUIRE(e.battery_pct_per_1k_tokens);
  CHECK(e.battery_pct_per_1k_tokens->mid == Approx(1.2037).epsilon(1e-4));
  CHECK(e.battery_pct_per_1k_tokens->high == Approx(1000 * 1.0 / 54000 * 100));
  CHECK_FALSE(power::energy(draw, l, std::nullopt).battery_pct_per_1k_tokens);
}

TEST_CASE("power_draw: measured beats the TDP share, which beats the class figure; a measured phase carries over", "[power]") {
  const auto t = tables();
  auto board = device("board");
  board.tdp_w = 12;
  std::string why;
  // No measurement: the TDP share, and without a TDP the class's watts.
  auto p = power::power_draw(board, Backend::vulkan, t, &why);
  REQUIRE(p);
  CHECK(p->decode_w.low == Approx(12 * 0.85));
  CHECK(p->prefill_w.high == Approx(12 * 1.15));
  board.tdp_w.reset();
  p = power::power_draw(board, Backend::vulkan, t, &why);
  REQUIRE(p);
  CHECK(p->decode_w.mid == Approx(9));
  CHECK(p->prefill_w.mid == Approx(10));
  // A measured decode on the CPU: used there, standing for the board's other backends, and carried
  // to prefill by the class's prefill/decode ratio (TDP shares 1.0/1.0 here; watts 10/9 without them).
  board.tdp_w = 12;
  board.measured_power.push_back({"cpu", Range{11, 11.5, 12}, std::nullopt});
  p = power::power_draw(board, Backend::cpu, t, &why);
  REQUIRE(p);
  CHECK(p->decode_w.mid == Approx(11.5));
  CHECK(p->prefill_w.mid == Approx(11.5));
  CHECK(p->basis.find("measured on test-board (cpu;") != std::string::npos);
  CHECK(p->basis.find("prior's prefill/decode ratio") != std::string::npos);
  p = power::power_draw(board, Backend::vulkan, t, &why);
  REQUIRE(p);
  CHECK(p->decode_w.mid == Approx(11.5));
  CHECK(p->basis.find("standing for vulkan") != std::string::npos);
  auto phone = device("phone");  // watts 6 (decode) and 10 (prefill): ratio 10/6
  phone.measured_power.push_back({"metal", std::nullopt, Range::exact(20)});
  p = power::power_draw(phone, Backend::metal, t, &why);
  REQUIRE(p);
  CHECK(p->decode_w.mid == Approx(20 * 6.0 / 10));
  // A class without figures: only the measured phase, standing for both.
  auto mcu = device("mcu");
  CHECK_FALSE(power::power_draw(mcu, Backend::cpu, t, &why));
  CHECK(why.find("no power figure for test-mcu on cpu") != std::string::npos);
  CHECK(why.find("nothing published") != std::string::npos);
  mcu.measured_power.push_back({"cpu", Range::exact(0.3), std::nullopt});
  p = power::power_draw(mcu, Backend::cpu, t, &why);
  REQUIRE(p);
  CHECK(p->prefill_w.mid == Approx(0.3));
}

TEST_CASE("power_draw: a class prior covers only its backends (a GPU card's TDP is not the host CPU's)", "[power]") {
  const auto t = tables();
  auto gpu = device("gpu");
  gpu.tdp_w = 450;
  std::string why;
  auto p = power::power_draw(gpu, Backend::cuda, t, &why);
  REQUIRE(p);
  CHECK(p->decode_w.mid == Approx(225));
  CHECK_FALSE(power::power_draw(gpu, Backend::cpu, t, &why));
  CHECK(why.find("does not cover cpu") != std::string::npos);
  // A measurement on the card does not stand for the host's CPU either.
  gpu.measured_power.push_back({"cuda", Range::exact(250), std::nullopt});
  CHECK_FALSE(power::power_draw(gpu, Backend::cpu, t, &why));
  REQUIRE(power::power_draw(gpu, Backend::cuda, t, &why));
}

TEST_CASE("sustained_fraction: linear from 1 at minute 0, the last point beyond; the device's own points first", "[power]") {
  const auto t = tables();
  auto phone = device("phone");
  auto s = power::sustained_fraction(phone, 2.5, t);  // half way to the 5-minute point
  CHECK(s.has_data);
  CHECK(s.fraction.low == Approx(0.8));
  CHECK(s.fraction.mid == Approx(0.9));
  CHECK(s.fraction.high == Approx(1.0));
  s = power::sustained_fraction(phone, 60, t);
  CHECK(s.fraction.mid == Approx(0.8));
  CHECK(s.basis.find("phone class") != std::string::npos);
  phone.sustained.push_back({20, Range::exact(0.5)});
  s = power::sustained_fraction(phone, 10, t);
  CHECK(s.fraction.mid == Approx(0.75));
  CHECK(s.basis.find("measured on test-phone") != std::string::npos);
  // No points anywhere: full speed, and the basis says there are no data.
  s = power::sustained_fraction(device("desktop"), 30, t);
  CHECK_FALSE(s.has_data);
  CHECK(s.fraction.mid == 1);
  CHECK(s.basis.find("no published throttling figure") != std::string::npos);
}

TEST_CASE("throttled: bandwidths and every compute peak scale by the fraction", "[power]") {
  auto d = device("phone");
  d.peak_bandwidth_gbps = 60;
  d.cpu_read_gbps = 40;
  d.clusters.push_back({"prime", 1, "Cortex-X4", 3.2, 32, {}, {}, {}, ""});
  d.gpu_fp16_tflops = 4;
  d.npu_int8_tops = 40;
  const auto t = power::throttled(d, 0.5);
  CHECK(t.peak_bandwidth_gbps == Approx(30));
  CHECK(*t.cpu_read_gbps == Approx(20));
  CHECK(t.clusters[0].clock_ghz == Approx(1.6));
  CHECK(t.cpu_peak_gflops() == Approx(d.cpu_peak_gflops() / 2));
  CHECK(*t.gpu_fp16_tflops == Approx(2));
  CHECK(*t.npu_int8_tops == Approx(20));
}

TEST_CASE("parse_power_tables: bad tables name the file and field", "[power]") {
  auto fails = [](const std::string& text, const std::string& needle) {
    auto t = power::parse_power_tables(text, "power.yaml");
    REQUIRE_FALSE(t.ok());
    INFO(t.error().to_string());
    CHECK(t.error().to_string().find(needle) != std::string::npos);
  };
  std::string ok = k_tables;
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = ok;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  fails(replace("  mcu: {sources: [{fields: [decode_w], basis: \"nothing published\"}]}\n", ""), "classes.mcu");
  fails(replace("decode_w: 9,", "decode_watts: 9,"), "decode_watts");
  fails(replace("backends: [cuda]", "backends: [cudaa]"), "unknown backend 'cudaa'");
  fails(replace("fraction: {low: 0.6, mid: 0.8, high: 1.0}", "fraction: 1.2"), "at most 1");
  fails(replace("{minutes: 5, fraction: {low: 0.6, mid: 0.8, high: 1.0}}",
                "{minutes: 5, fraction: 0.9}, {minutes: 4, fraction: 0.8}"), "ascending");
  fails(replace("decode_w: {low: 4, mid: 6, high: 9}", "decode_w: {low: 9, high: 4}"), "low <= mid <= high");
  fails(replace("decode_tdp_fraction: 0.5", "decode_tdp_fraction: 7"), "at most 3");
  fails(replace(", sources: [{fields: [decode_w], url: u}]", ""), "sources");
  fails("classes: [1, 2]", "power.yaml");
}

TEST_CASE("devices/power.yaml: loads, and every figure of every class is covered by a source naming it", "[power]") {
  auto t = power::power_tables();
  REQUIRE(t.ok());
  REQUIRE((*t)->classes.size() == 7);
  for (const auto& c : (*t)->classes) {
    INFO(c.device_class);
    auto covered = [&](const std::string& field) {
      return std::any_of(c.sources.begin(), c.sources.end(), [&](const auto& s) {
        return std::find(s.first.begin(), s.first.end(), field) != s.first.end();
      });
    };
    if (c.decode_w) CHECK(covered("decode_w"));
    if (c.prefill_w) CHECK(covered("prefill_w"));
    if (c.decode_tdp_fraction) CHECK(covered("decode_tdp_fraction"));
    if (c.prefill_tdp_fraction) CHECK(covered("prefill_tdp_fraction"));
    // A class without throttling points still says why (a source on `sustained`).
    CHECK(covered("sustained"));
  }
}

TEST_CASE("device files: power.llm_w and power.sustained are read, checked and written back", "[power]") {
  const std::string head = R"(id: x
name: X
vendor: V
class: board
memory: {ram_options_gib: [8], default_ram_gib: 8, unified: true, type: LPDDR4X, peak_bandwidth_gbps: 17, bandwidth_basis: published}
)";
  const std::string tail = R"(cpu: {isa: arm64, clusters: [{kind: performance, cores: 4, core: Cortex-A76, clock_ghz: 2.4, fp32_flops_per_cycle: 16}]}
backends: [cpu]
sources: [{fields: [memory, power, cpu], basis: test}]
)";
  auto d = devices::parse_device(head + "power: {battery_wh: 19.4, llm_w: {cpu: {decode: {low: 10.5, high: 11.9}}}, sustained: [{minutes: 5, fraction: 0.9}]}\n" + tail, "x.yaml", "x");
  REQUIRE(d.ok());
  CHECK(*d->battery_wh == Approx(19.4));
  REQUIRE(d->measured_power.size() == 1);
  CHECK(d->measured_power[0].decode_w->mid == Approx(11.2));
  CHECK_FALSE(d->measured_power[0].prefill_w);
  REQUIRE(d->sustained.size() == 1);
  CHECK(d->sustained[0].fraction.mid == Approx(0.9));
  // Written back and read again: the same figures.
  auto again = devices::parse_device(devices::device_to_yaml(*d), "x.yaml", "x");
  REQUIRE(again.ok());
  CHECK(again->measured_power[0].decode_w->high == Approx(11.9));
  CHECK(again->sustained[0].minutes == Approx(5));
  CHECK(*again->battery_wh == Approx(19.4));
  for (const auto& [bad, needle] : std::vector<std::pair<std::string, std::string>>{
           {"power: {llm_w: {gpu0: {decode: 5}}}", "unknown backend 'gpu0'"},
           {"power: {llm_w: {cpu: {}}}", "power.llm_w.cpu"},
           {"power: {sustained: [{minutes: 5, fraction: 1.5}]}", "power.sustained[0].fraction"},
           {"power: {battery_wh: -3}", "power.battery_wh"},
           {"power: {sustained: [{minutes: 5, fraction: 0.9}, {minutes: 3, fraction: 0.8}]}", "ascending"}}) {
    auto r = devices::parse_device(head + bad + "\n" + tail, "x.yaml", "x");
    REQUIRE_FALSE(r.ok());
    INFO(r.error().to_string());
    CHECK(r.error().to_string().find(needle) != std::string::npos);
  }
}
