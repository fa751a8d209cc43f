// report/plan_plots and html_report on real plans: the plots hold the points, roofs, limits and
// bars the plan has, parsed from the SVG; the page holds the plots and the escaped text.
#include <catch2/catch.hpp>

#include <regex>

#include "devices/device_db.hpp"
#include "models/catalog.hpp"
#include "report/html_report.hpp"
#include "report/plan_plots.hpp"
#include "xml_check.hpp"

using namespace trilemma;

namespace {

struct Planned {
  models::Model model;
  devices::Device device;
  solver::Profile profile;
  solver::PlanResult result;
};

Planned plan(const std::string& model_id, const std::string& device_id, const std::string& scenario, std::optional<double> min_tok_s = {}) {
  auto model = models::resolve_model(model_id);
  auto device = devices::resolve_device(device_id);
  auto profile = solver::resolve_profile(scenario);
  auto catalog = models::builtin_models();
  REQUIRE(model.ok());
  REQUIRE(device.ok());
  REQUIRE(profile.ok());
  REQUIRE(catalog.ok());
  Planned p{*model, *device, *profile, {}};
  solver::PlanRequest req;
  req.model = &p.model, req.device = &p.device, req.profile = p.profile, req.catalog = &*catalog;
  req.budgets.min_decode_tok_s = min_tok_s;
  auto r = solver::plan(req);
  REQUIRE(r.ok());
  p.result = *r;
  return p;
}

}  // namespace

TEST_CASE("report::plan_plots: roofline, trade-off and memory of a real plan, element by element", "[report]") {
  const Planned p = plan("llama-3.2-1b", "apple-m2", "latency", 30.0);
  REQUIRE(p.result.chosen);
  solver::Constraints budgets;
  budgets.min_decode_tok_s = 30.0;
  const auto limits = report::effective_limits(p.profile.constraints, budgets);
  const auto plots = report::plan_plots(p.result, p.device, limits);
  REQUIRE(plots.size() == 4);
  for (const auto& plot : plots) {
    CAPTURE(plot.name);
    CHECK(testing::xml_problem(plot.svg).empty());
    CHECK(plot.svg.find("<script") == std::string::npos);
    CHECK_FALSE(plot.caption.empty());
  }
  const std::size_t plans = 1 + p.result.runners_up.size();
  // Roofline: decode and prefill of every compared plan; at least one roof; both axis labels.
  const std::string& roof = plots[0].svg;
  CHECK(plots[0].name == "roofline");
  CHECK(testing::count_of(roof, "<polygon class=\"chosen\"") == 2 + 1);  // decode, prefill, the legend sample
  CHECK(testing::count_of(roof, "<circle class=\"point\"") == 2 * (plans - 1) + 1);
  CHECK(testing::count_of(roof, "<polyline class=\"roof\"") >= 1);
  CHECK(roof.find("arithmetic intensity") != std::string::npos);
  CHECK(roof.find(">decode<") != std::string::npos);
  // Triangle: one marker per front plan and runner-up, the chosen plan, the three corners.
  const std::string& tri = plots[1].svg;
  CHECK(plots[1].name == "triangle");
  // Front plans over a scenario limit (this plan's 30 tok/s floor) are drawn apart: a dashed
  // hollow circle and a legend entry, in the triangle and the trade-off alike.
  const auto breaking = std::size_t(std::count_if(p.result.front.begin(), p.result.front.end(), [](const auto& c) { return !c.violations.empty(); }));
  REQUIRE(breaking > 0);
  REQUIRE(breaking < p.result.front.size());
  std::size_t tri_markers = 0;
  for (const char* cls : {"loss-low", "loss-mid", "loss-high", "point"}) tri_markers += testing::count_of(tri, std::string("<circle class=\"") + cls + "\" cx");
  CHECK(tri_markers == p.result.front.size() - breaking + p.result.runners_up.size() + 4);  // + the legend's four samples
  CHECK(testing::count_of(tri, "<circle class=\"breaks-limit\" cx") == breaking + 1);
  CHECK(testing::count_of(tri, "<polygon class=\"chosen\"") == 1 + 1);
  for (const char* corner : {">fast: ", ">small: ", ">accurate: "}) CHECK(tri.find(corner) != std::string::npos);
  CHECK(tri.find("class=\"frame\"") == std::string::npos);  // a diagram, not axes
  // Trade-off: one marker per front plan, the limits drawn, what the chosen plan gives up.
  const std::string& trade = plots[2].svg;
  std::size_t front_markers = 0;
  for (const char* cls : {"loss-low", "loss-mid", "loss-high"}) front_markers += testing::count_of(trade, std::string("<circle class=\"") + cls + "\" cx");
  CHECK(front_markers == p.result.front.size() - breaking + 3);  // + the legend's three samples
  CHECK(testing::count_of(trade, "<circle class=\"breaks-limit\" cx") == breaking + 1);
  CHECK(trade.find("breaks a scenario limit") != std::string::npos);
  CHECK(trade.find("; breaks min_decode_tok_s") != std::string::npos);  // the tooltip says which
  // Quality loss to one decimal, never a negative loss to three digits ("-0.00924 points").
  for (const std::string* svg : {&tri, &trade}) {
    CHECK_FALSE(std::regex_search(*svg, std::regex("[0-9]\\.[0-9]{2,} points")));
    CHECK(svg->find("--") == std::string::npos);
    CHECK(std::regex_search(*svg, std::regex("(< 0\\.1|[0-9]+\\.[0-9]) points lost")));
  }
  CHECK(testing::count_of(trade, "<line class=\"limit\" x1") >= 1);
  CHECK(trade.find("min 30 tok/s") != std::string::npos);
  CHECK(trade.find("gives up " + p.result.gives_up) != std::string::npos);
  // Memory: a bar part per non-zero part of every plan, and the device's usable memory.
  const std::string& mem = plots[3].svg;
  std::size_t parts = 0;
  for (std::size_t i = 0; i < plans; ++i) {
    const auto& m = (i == 0 ? *p.result.chosen : p.result.runners_up[i - 1]).estimate.memory;
    for (double b : {m.weights_bytes, m.kv_bytes, m.scratch_bytes, m.runtime_bytes, m.draft_bytes}) parts += b > 0;
  }
  const std::regex bar("<rect class=\"bar-[0-4]\" x=");
  CHECK(std::size_t(std::distance(std::sregex_iterator(mem.begin(), mem.end(), bar), std::sregex_iterator())) == parts + 5);  // + legend
  CHECK(testing::count_of(mem, "<line class=\"capacity\" x1") == 1 + 1);  // the line and its legend sample
}

TEST_CASE("report::plan_plots: no chosen plan, no plots; effective limits take the tighter bound", "[report]") {
  const Planned p = plan("llama-3.1-8b", "raspberry-pi-5", "latency");
  CHECK_FALSE(p.result.chosen);
  CHECK(report::plan_plots(p.result, p.device, p.profile.constraints).empty());
  solver::Constraints profile, budgets;
  profile.max_ttft_ms = 100, profile.min_decode_tok_s = 20, profile.max_memory_gib = 4;
  budgets.max_ttft_ms = 500, budgets.min_decode_tok_s = 30, budgets.max_loss_points = 2;
  const auto l = report::effective_limits(profile, budgets);
  CHECK(*l.max_ttft_ms == 100);
  CHECK(*l.min_decode_tok_s == 30);
  CHECK(*l.max_memory_gib == 4);
  CHECK(*l.max_loss_points == 2);
}

TEST_CASE("report::html_page: one self-contained page with the plots, the escaped text and the basis", "[report]") {
  const Planned p = plan("qwen2.5-0.5b", "raspberry-pi-5", "memory");
  REQUIRE(p.result.chosen);
  const auto plots = report::plan_plots(p.result, p.device, p.profile.constraints);
  const std::string html = report::html_page({"trilemma plan: <x> & y", "line 1 < line 2\n", plots, {"basis & one"}});
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(testing::count_of(html, "<svg xmlns=") == 4);
  CHECK(testing::count_of(html, "<figcaption>") == 4);
  CHECK(html.find("trilemma plan: &lt;x&gt; &amp; y") != std::string::npos);
  CHECK(html.find("line 1 &lt; line 2") != std::string::npos);
  CHECK(html.find("<li>basis &amp; one</li>") != std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
}
