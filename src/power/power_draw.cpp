#include "power/power_draw.hpp"

#include <cstdio>

namespace trilemma::power {
namespace {

std::string watts(const Range& r) {
  char buf[96];
  if (r.low == r.high) std::snprintf(buf, sizeof buf, "%.3g W", r.mid);
  else std::snprintf(buf, sizeof buf, "%.3g-%.3g W", r.low, r.high);
  return buf;
}

Range times(const Range& r, double f) { return {r.low * f, r.mid * f, r.high * f}; }

struct Phase {
  std::optional<Range> watts;
  std::string basis;
};

// Where each phase's figure lives: in the device file's measurement and in the class row.
struct PhaseFields {
  const char* name;
  std::optional<Range> devices::MeasuredPower::*measured;
  std::optional<Range> ClassPower::*tdp_fraction;
  std::optional<Range> ClassPower::*watts;
};
constexpr PhaseFields k_decode{"decode", &devices::MeasuredPower::decode_w, &ClassPower::decode_tdp_fraction, &ClassPower::decode_w};
constexpr PhaseFields k_prefill{"prefill", &devices::MeasuredPower::prefill_w, &ClassPower::prefill_tdp_fraction,
                                &ClassPower::prefill_w};

// One phase: the file's measurement on this backend, else the class's fraction of the file's
// TDP, else the class's absolute figure.
Phase phase_draw(const devices::Device& d, const devices::MeasuredPower* measured, const ClassPower* prior, const PhaseFields& f) {
  const std::string name = f.name;
  if (measured && measured->*f.measured)
    return {measured->*f.measured,
            name + " " + watts(*(measured->*f.measured)) + " measured on " + d.id + " (" + measured->backend + "; sources in its file)"};
  if (!prior) return {};
  if (d.tdp_w && prior->*f.tdp_fraction) {
    const Range w = times(*(prior->*f.tdp_fraction), *d.tdp_w);
    return {w, name + " " + watts(w) + " = TDP " + watts(Range::exact(*d.tdp_w)) + " x the " + d.device_class +
                   " prior (devices/power.yaml " + d.device_class + "." + name + "_tdp_fraction)"};
  }
  if (prior->*f.watts)
    return {prior->*f.watts,
            name + " " + watts(*(prior->*f.watts)) + ": the " + d.device_class + " prior (devices/power.yaml " + d.device_class + "." + name + "_w)"};
  return {};
}

}  // namespace

std::optional<PowerDraw> power_draw(const devices::Device& d, Backend backend, const PowerTables& tables, std::string* why) {
  const devices::MeasuredPower* measured = nullptr;
  for (const auto& m : d.measured_power)
    if (backend_from_name(m.backend) == backend) measured = &m;
  const ClassPower* prior_row = tables.find(d.device_class);
  const ClassPower* prior = prior_row && prior_row->covers(backend) ? prior_row : nullptr;
  Phase decode = phase_draw(d, measured, prior, k_decode);
  Phase prefill = phase_draw(d, measured, prior, k_prefill);
  // A measurement of one phase stands for the other where nothing else covers it.
  if (!prefill.watts && decode.watts) prefill = {decode.watts, "prefill as decode (no other figure)"};
  if (!decode.watts && prefill.watts) decode = {prefill.watts, "decode as prefill (no other figure)"};
  if (!decode.watts) {
    if (why)
      *why = "no power figure for " + d.id + " on " + std::string(info(backend).name) + ": its file has no llm_w." +
             std::string(info(backend).name) + " and devices/power.yaml has no " + d.device_class + " prior that covers it" +
             (d.tdp_w ? "" : " without a TDP") + (prior_row ? " (devices/power.yaml: " + prior_row->source_of("decode_w") + ")" : "");
    return std::nullopt;
  }
  return PowerDraw{*decode.watts, *prefill.watts, decode.basis + "; " + prefill.basis};
}

}  // namespace trilemma::power
