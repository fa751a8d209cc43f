// Charts from any axes and points: infinities, NaN, zero-width and reversed ranges, log axes
// through zero (reliability D18). Oracle: the SVG is well-formed XML and holds no NaN or
// infinite coordinate.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "../tests/xml_check.hpp"
#include "report/chart.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

namespace {

bool geometric(const std::string& key) {
  for (const char* k : {"x", "y", "x1", "x2", "y1", "y2", "cx", "cy", "r", "width", "height", "points", "d"})
    if (key == k) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  auto axis = [&] {
    report::Axis a;
    a.label = in.ConsumeRandomLengthString(16);
    a.min = in.ConsumeFloatingPoint<double>();
    a.max = in.ConsumeFloatingPoint<double>();
    a.log = in.ConsumeBool();
    return a;
  };
  report::Axis x = axis(), y = axis();
  report::Chart chart(in.ConsumeRandomLengthString(24), x, y);
  const int n = in.ConsumeIntegralInRange<int>(0, 12);
  for (int i = 0; i < n; ++i) {
    const double a = in.ConsumeFloatingPoint<double>(), b = in.ConsumeFloatingPoint<double>();
    const double c = in.ConsumeFloatingPoint<double>(), d = in.ConsumeFloatingPoint<double>();
    switch (in.ConsumeIntegralInRange<int>(0, 4)) {
      case 0: chart.line(a, b, c, d, "roof", in.ConsumeRandomLengthString(8)); break;
      case 1: chart.marker(a, b, in.ConsumeBool() ? "chosen" : "point", in.ConsumeRandomLengthString(8)); break;
      case 2: chart.rect(a, b, c, d, "bar-0"); break;
      case 3: chart.polyline({{a, b}, {c, d}}, "roof-effective"); break;
      default: chart.text(a, b, in.ConsumeRandomLengthString(12)); break;
    }
  }
  if (in.ConsumeBool()) chart.legend("point", in.ConsumeRandomLengthString(12));
  const std::string svg = chart.svg();
  // Every geometric attribute's value is numbers only (labels are free text: "nan" may be one).
  for (auto at = svg.find("=\""); at != std::string::npos; at = svg.find("=\"", at + 2)) {
    const auto key_start = svg.find_last_of(" <", at) + 1;
    const std::string key = svg.substr(key_start, at - key_start);
    const auto end = svg.find('"', at + 2);
    FUZZ_CHECK(end != std::string::npos);
    if (!geometric(key)) continue;
    for (const char c : svg.substr(at + 2, end - at - 2)) FUZZ_CHECK(std::string_view("0123456789.-+e, ML").find(c) != std::string_view::npos);
  }
  FUZZ_CHECK(testing::xml_problem(svg).empty());
  return 0;
}
