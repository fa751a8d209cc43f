#include "power/sustained.hpp"

#include <cstdio>
#include <vector>

namespace trilemma::power {
namespace {

double lerp(double a, double b, double t) { return a + (b - a) * t; }

Range interpolate(const std::vector<devices::SustainedPoint>& points, double minutes) {
  devices::SustainedPoint before{0, Range::exact(1)};
  for (const auto& p : points) {
    if (minutes <= p.minutes) {
      const double t = p.minutes > before.minutes ? (minutes - before.minutes) / (p.minutes - before.minutes) : 1;
      return {lerp(before.fraction.low, p.fraction.low, t), lerp(before.fraction.mid, p.fraction.mid, t),
              lerp(before.fraction.high, p.fraction.high, t)};
    }
    before = p;
  }
  return before.fraction;
}

std::string minutes_text(double m) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g min", m);
  return buf;
}

}  // namespace

Sustained sustained_fraction(const devices::Device& d, double minutes, const PowerTables& tables) {
  Sustained s;
  s.minutes = minutes;
  const std::vector<devices::SustainedPoint>* points = &d.sustained;
  std::string from = "measured on " + d.id + " (sources in its file)";
  if (points->empty())
    if (const auto* c = tables.find(d.device_class)) {
      points = &c->sustained;
      from = "the " + d.device_class + " class's points (devices/power.yaml " + d.device_class + ".sustained)";
    }
  if (points->empty()) {
    s.fraction = Range::exact(1);
    const auto* c = tables.find(d.device_class);
    s.basis = "no published throttling figure for " + d.id + " or its class (" + d.device_class + "): planned at full speed" +
              (c ? " (devices/power.yaml: " + c->source_of("sustained") + ")" : "");
    return s;
  }
  s.has_data = true;
  s.fraction = interpolate(*points, minutes);
  s.basis = "after " + minutes_text(minutes) + ": " + from;
  return s;
}

devices::Device throttled(const devices::Device& d, double fraction) {
  devices::Device t = d;
  auto scale = [&](std::optional<double>& v) {
    if (v) *v *= fraction;
  };
  t.peak_bandwidth_gbps *= fraction;
  scale(t.cpu_read_gbps);
  for (auto& c : t.clusters) c.clock_ghz *= fraction;
  for (auto* v : {&t.gpu_fp32_tflops, &t.gpu_fp16_tflops, &t.gpu_fp16_tensor_tflops, &t.gpu_int8_tensor_tops, &t.npu_int8_tops,
                  &t.npu_int4_tops, &t.npu_fp16_tflops, &t.measured_compute_gflops, &t.measured_int8_gflops})
    scale(*v);
  return t;
}

}  // namespace trilemma::power
