// report/gate_plots: the budgets x models grid of a hand-made gate report, parsed from the SVG.
#include <catch2/catch.hpp>

#include "report/gate_plots.hpp"
#include "xml_check.hpp"

using namespace trilemma;

namespace {

gate::Outcome outcome(const std::string& model, const std::string& budget, bool pass, double margin) {
  gate::Outcome o;
  o.model = model, o.budget = budget, o.pass = pass;
  o.limiting = gate::Limiting{"decode_tok_s", 20.0, 20.0 * (1 + margin / 100), margin, "decode"};
  o.message = pass ? "passes" : "fails";
  return o;
}

}  // namespace

TEST_CASE("report::gate_grid_plot: one cell per model x budget, pass, fail or regressed, with the limiting margin", "[report]") {
  gate::Report r;
  r.budgets_file = "ci/budgets & limits.yaml";
  r.models = {"model-a", "model-b"};
  r.outcomes = {outcome("model-a", "phone", true, 12), outcome("model-b", "phone", false, -9), outcome("model-a", "laptop", true, 40),
                outcome("model-b", "laptop", true, 5)};
  r.outcomes[3].regressions.push_back({"decode_tok_s", 30, 25, 16.7, "slower"});
  const report::Plot plot = report::gate_grid_plot(r);
  CHECK(plot.name == "gate");
  CHECK(testing::xml_problem(plot.svg).empty());
  CHECK(testing::count_of(plot.svg, "<rect class=\"pass\" x=") == 2 + 1);  // two passing cells, the legend sample
  CHECK(testing::count_of(plot.svg, "<rect class=\"fail\" x=") == 2 + 1);  // a failure, a regression, the legend sample
  CHECK(testing::count_of(plot.svg, ">FAIL<") == 1);
  CHECK(testing::count_of(plot.svg, ">REGRESSED<") == 1);
  CHECK(plot.svg.find(">decode_tok_s +12%<") != std::string::npos);
  CHECK(plot.svg.find(">decode_tok_s -9%<") != std::string::npos);
  CHECK(plot.svg.find("budgets &amp; limits.yaml, 3 of 4 pass") != std::string::npos);
  // Budgets in file order from the top, models in argument order from the left.
  CHECK(plot.svg.find(">phone<") != std::string::npos);
  CHECK(plot.svg.find(">model-b<") != std::string::npos);
}
