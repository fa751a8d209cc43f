// report/verify_plots: predicted against measured per figure, from hand-made verify points.
#include <catch2/catch.hpp>

#include "report/verify_plots.hpp"
#include "xml_check.hpp"

using namespace trilemma;

namespace {

verify::PointReport point(double decode_predicted, double decode_measured, double memory_predicted, double memory_measured) {
  verify::PointReport r;
  r.checks.push_back({"decode_tok_s", decode_predicted, decode_measured, (decode_predicted - decode_measured) / decode_measured, 0.1, true});
  r.checks.push_back({"peak_memory_bytes", memory_predicted, memory_measured, 0, 0.05, true});
  return r;
}

}  // namespace

TEST_CASE("report::verify_plots: one chart per checked figure, the diagonal and its band, points before and after calibration", "[report]") {
  verify::ReportInputs in;
  in.model_id = "stories260k";
  in.host.name = "a <host>";
  in.reports = {point(8, 10, 1e8, 1.1e8), point(20, 18, 2e8, 2e8)};
  in.calibrated = {point(9.8, 10, 1.08e8, 1.1e8), point(18.2, 18, 2e8, 2e8)};
  in.with_calibration = true;
  const auto plots = report::verify_plots(in);
  REQUIRE(plots.size() == 2);  // decode and memory; no TTFT check in these points
  CHECK(plots[0].name == "predicted-decode_tok_s");
  CHECK(plots[1].name == "predicted-peak_memory_bytes");
  for (const auto& p : plots) {
    CAPTURE(p.name);
    CHECK(testing::xml_problem(p.svg).empty());
    CHECK(testing::count_of(p.svg, "<circle class=\"point\" cx") == 2 + 1);      // before, and the legend sample
    CHECK(testing::count_of(p.svg, "<circle class=\"loss-high\" cx") == 2 + 1);  // after
    CHECK(testing::count_of(p.svg, "<line class=\"limit\" x1") == 2 + 1);        // the band's two edges
    CHECK(testing::count_of(p.svg, "<line class=\"roof-effective\" x1") == 1 + 1);
  }
  CHECK(plots[0].svg.find("tolerance +-10%") != std::string::npos);
  CHECK(plots[1].svg.find("peak memory, GiB") != std::string::npos);
  CHECK(plots[0].caption.find("a <host>") != std::string::npos);  // escaped where it is drawn, not in the caption text
  CHECK(report::verify_plots(verify::ReportInputs{}).empty());
}

TEST_CASE("report::calibrate_plots: each result before and after the fit, per figure", "[report]") {
  verify::DeviceCalibration fit;
  for (double m : {10.0, 30.0}) {
    verify::PointCheck c;
    c.before = {"prefill_tok_s", m * 2, m, 1, 0.2, false};
    c.after = {"prefill_tok_s", m * 1.05, m, 0.05, 0.2, true};
    fit.checks.push_back(c);
  }
  const auto plots = report::calibrate_plots(fit, "raspberry-pi-5");
  REQUIRE(plots.size() == 1);
  CHECK(plots[0].name == "predicted-prefill_tok_s");
  CHECK(testing::count_of(plots[0].svg, "<circle class=\"point\" cx") == 2 + 1);
  CHECK(testing::count_of(plots[0].svg, "<circle class=\"loss-high\" cx") == 2 + 1);
  CHECK(plots[0].caption.find("raspberry-pi-5") != std::string::npos);
}
