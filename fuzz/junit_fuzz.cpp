// Gate reports from any bytes (reliability D19): names, messages and budgets files of arbitrary
// bytes (invalid UTF-8, control characters, "]]>", U+FFFE), figures of any double. Oracle: the
// JUnit XML is well-formed, of XML 1.0 characters only, with one testcase per outcome; the
// GitHub annotations are one workflow command per line whose properties nothing can extend; the
// JSON report dumps.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "../tests/xml_check.hpp"
#include "gate/report.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

namespace {


}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  gate::Report report;
  report.budgets_file = in.ConsumeRandomLengthString(32);
  report.margin_pct = in.ConsumeFloatingPoint<double>();
  if (in.ConsumeBool()) report.baseline = in.ConsumeRandomLengthString(16);
  const int n = in.ConsumeIntegralInRange<int>(0, 4);
  for (int i = 0; i < n; ++i) {
    gate::Outcome o;
    o.model = in.ConsumeRandomLengthString(24);
    report.models.push_back(o.model);
    o.budget = in.ConsumeRandomLengthString(24);
    o.device = in.ConsumeRandomLengthString(16);
    o.scenario = in.ConsumeRandomLengthString(8);
    o.context = in.ConsumeIntegral<std::uint32_t>();
    o.line = in.ConsumeIntegral<int>();
    o.pass = in.ConsumeBool();
    o.has_plan = in.ConsumeBool();
    o.plan_summary = in.ConsumeRandomLengthString(24);
    o.weights = in.ConsumeRandomLengthString(8);
    for (auto& v : o.figures.values) v = in.ConsumeFloatingPoint<double>();
    const int checks = in.ConsumeIntegralInRange<int>(0, 3);
    for (int c = 0; c < checks; ++c) {
      gate::Check k;
      k.figure = static_cast<gate::Figure>(in.ConsumeIntegralInRange<int>(0, int(gate::Figure::count) - 1));
      k.limit = in.ConsumeFloatingPoint<double>(), k.value = in.ConsumeFloatingPoint<double>();
      k.margin_pct = in.ConsumeFloatingPoint<double>();
      k.pass = in.ConsumeBool();
      o.checks.push_back(k);
    }
    if (in.ConsumeBool()) {
      gate::Limiting l;
      l.figure = in.ConsumeRandomLengthString(12);
      if (in.ConsumeBool()) l.limit = in.ConsumeFloatingPoint<double>();
      if (in.ConsumeBool()) l.value = in.ConsumeFloatingPoint<double>();
      if (in.ConsumeBool()) l.margin_pct = in.ConsumeFloatingPoint<double>();
      l.message = in.ConsumeRandomLengthString(32);
      o.limiting = l;
    }
    o.message = in.ConsumeRandomLengthString(48);
    const int regressions = in.ConsumeIntegralInRange<int>(0, 2);
    for (int r = 0; r < regressions; ++r) {
      gate::Regression g;
      g.figure = in.ConsumeRandomLengthString(12);
      g.baseline = in.ConsumeFloatingPoint<double>(), g.value = in.ConsumeFloatingPoint<double>();
      g.change_pct = in.ConsumeFloatingPoint<double>();
      g.message = in.ConsumeRandomLengthString(32);
      o.regressions.push_back(g);
    }
    report.outcomes.push_back(std::move(o));
  }

  const std::string junit = gate::report_to_junit(report);
  FUZZ_CHECK(testing::xml_problem(junit).empty());
  FUZZ_CHECK(testing::xml_char_problem(junit).empty());
  FUZZ_CHECK(testing::count_of(junit, "<testcase ") == report.outcomes.size());

  // One command per line: "::error " or "::notice ", properties without a raw separator of
  // their own (file=, line=, title=), then "::" and the message.
  const std::string github = gate::report_to_github(report);
  std::size_t expected = 0;
  for (const auto& o : report.outcomes) expected += (o.pass ? 0 : 1) + o.regressions.size() + (o.pass && o.regressions.empty() ? 1 : 0);
  std::istringstream lines(github);
  std::size_t commands = 0;
  for (std::string line; std::getline(lines, line); ++commands) {
    FUZZ_CHECK(line.find('\r') == std::string::npos);
    const bool error = line.rfind("::error ", 0) == 0, notice = line.rfind("::notice ", 0) == 0;
    FUZZ_CHECK(error || notice);
    const std::size_t start = error ? 8 : 9, end = line.find("::", start);
    FUZZ_CHECK(end != std::string::npos);
    std::istringstream props(line.substr(start, end - start));
    for (std::string p; std::getline(props, p, ',');)
      FUZZ_CHECK(p.rfind("file=", 0) == 0 || p.rfind("line=", 0) == 0 || p.rfind("title=", 0) == 0);
  }
  FUZZ_CHECK(commands == expected);

  (void)gate::report_to_text(report);
  (void)gate::report_to_json(report).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
