// report/chart: ticks, labels, coordinates and the SVG document, checked by parsing it.
#include <catch2/catch.hpp>

#include <limits>
#include <utility>
#include <vector>

#include "report/chart.hpp"
#include "xml_check.hpp"

using namespace trilemma;
using namespace trilemma::report;

namespace {

std::vector<double> values(const std::vector<std::pair<double, std::string>>& ticks) {
  std::vector<double> out;
  for (const auto& t : ticks) out.push_back(t.first);
  return out;
}

}  // namespace

TEST_CASE("report::axis_ticks: nice linear steps, decades on log axes, category middles", "[report]") {
  CHECK(values(axis_ticks(Axis{"tok/s", 0, 150, false, {}})) == std::vector<double>{0, 50, 100, 150});
  CHECK(values(axis_ticks(Axis{"GiB", 0, 5.9, false, {}})) == std::vector<double>{0, 1, 2, 3, 4, 5});
  // Four decades: powers of ten only; two: 1, 2, 5 in each.
  CHECK(values(axis_ticks(Axis{"x", 0.1, 400, true, {}})) == std::vector<double>{0.1, 1, 10, 100});
  const auto fine = axis_ticks(Axis{"x", 10, 1000, true, {}});
  REQUIRE(fine.size() == 7);
  CHECK(fine[1].second == "20");
  CHECK(fine.back().second == "1k");
  const auto named = axis_ticks(Axis{"", 0, 2, false, {"a", "b"}});
  REQUIRE(named.size() == 2);
  CHECK(named[1].first == 1.5);
  CHECK(named[1].second == "b");
  CHECK(axis_ticks(Axis{"empty", 3, 3, false, {}}).empty());
}

TEST_CASE("report::short_label: three significant digits, k and M", "[report]") {
  CHECK(short_label(0.181) == "0.181");
  CHECK(short_label(20) == "20");
  CHECK(short_label(3600) == "3.6k");
  CHECK(short_label(2.5e6) == "2.5M");
}

TEST_CASE("report::Chart: data maps into the plot area; the SVG is well formed, self-contained and escaped", "[report]") {
  Chart chart("A <title> & more", Axis{"x, FLOP/byte", 1, 1000, true, {}}, Axis{"y, GB/s", 0, 100, false, {}}, 700, 400);
  chart.legend("roof", "a line");
  chart.legend("chosen", "the chosen one");
  // Log x: each decade a third of the width; linear y: top is the maximum.
  CHECK(chart.px(10) - chart.px(1) == Approx(chart.px(1000) - chart.px(100)));
  CHECK(chart.py(100) < chart.py(0));
  CHECK(chart.px(1e9) == chart.px(1000));  // clamped
  chart.polyline({{1, 10}, {10, 100}}, "roof", "a \"roof\"");
  chart.marker(10, 50, "chosen", "chosen <plan>");
  chart.marker(20, 40, "point", "other");
  chart.text(5, 5, "label & <note>");
  const std::string svg = chart.svg();
  CHECK(testing::xml_problem(svg).empty());
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("<script") == std::string::npos);
  CHECK(svg.find("href") == std::string::npos);
  CHECK(svg.find("A &lt;title&gt; &amp; more") != std::string::npos);
  CHECK(svg.find("label &amp; &lt;note&gt;") != std::string::npos);
  CHECK(testing::count_of(svg, "<polyline class=\"roof\"") == 1);
  CHECK(testing::count_of(svg, "<polygon class=\"chosen\"") == 2);  // the marker and its legend sample
  CHECK(testing::count_of(svg, "<circle class=\"point\"") == 1);
  CHECK(svg.find("x, FLOP/byte") != std::string::npos);
  CHECK(svg.find("y, GB/s") != std::string::npos);
}

TEST_CASE("report::Chart: infinite or empty axes and non-finite points still give finite coordinates (reliability D18)", "[report]") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& [x, y] : std::vector<std::pair<report::Axis, report::Axis>>{
           {{"a", 0, inf, true, {}}, {"b", 1, 10, true, {}}},
           {{"a", -inf, inf, false, {}}, {"b", nan, nan, false, {}}},
           {{"a", 5, 5, true, {}}, {"b", 0, 0, true, {}}},
           // Finite but extreme ends (fuzz finding, issue 45): a log axis from 1e308 overflowed
           // its own end to infinity and the tick loop converted it to int.
           {{"a", 1e308, 1e308, true, {}}, {"b", 1e-320, 1e-320, true, {}}},
           {{"a", -1.7e308, 1.7e308, false, {}}, {"b", 1e308, -1e308, false, {}}}}) {
    report::Chart c("t", x, y);
    c.line(1, 1, inf, nan, "roof");
    c.marker(nan, inf, "point", "p");
    c.polyline({{1, 2}, {inf, -inf}}, "roof");
    c.rect(0, 0, nan, 1, "bar-0");
    c.text(inf, 1, "x");
    const std::string svg = c.svg();
    CHECK(svg.find("nan") == std::string::npos);
    CHECK(svg.find("inf") == std::string::npos);
    CHECK(testing::xml_problem(svg) == "");
  }
}

TEST_CASE("report::Chart: a title longer than the chart wraps onto lines that fit, and the plot area moves down", "[report]") {
  const Axis x{"GiB", 0, 10, false, {}}, y{"", 0, 3, false, {"a", "b", "c"}};
  Chart one_line("Memory: short", x, y, 760, 300);
  const std::string title = "Memory: each plan against what Qualcomm Snapdragon 8 Gen 3 (SM8650) with a very long marketing name lets one app use";
  Chart wrapped(title, x, y, 760, 300);
  const std::string svg = wrapped.svg();
  CHECK(testing::xml_problem(svg).empty());
  // Every word once, in order, over two or more lines; no line wider than the chart at the
  // stylesheet's 15 px bold (at most 9.5 px a character).
  std::vector<std::string> lines;
  for (std::size_t at = 0; (at = svg.find("<text class=\"title\"", at)) != std::string::npos; ++at) {
    const auto open = svg.find('>', at) + 1;
    lines.push_back(svg.substr(open, svg.find("</text>", open) - open));
  }
  REQUIRE(lines.size() >= 2);
  std::string joined;
  for (const auto& l : lines) {
    CHECK(l.size() * 9.5 <= 760 - 16);
    joined += (joined.empty() ? "" : " ") + l;
  }
  CHECK(joined == title);
  CHECK(wrapped.py(3) > one_line.py(3));  // the plot starts below the extra line
  CHECK(one_line.svg().find("<text class=\"title\" x=\"8\" y=\"20.0\">Memory: short</text>") != std::string::npos);
}
