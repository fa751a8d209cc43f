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

std::string fmt_ratio(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", r);
  return buf;
}

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

// The file's measurement of a phase on `backend`; else on another backend whose power the
// class's figures also describe (a GPU card's draw does not stand for its host's CPU).
const devices::MeasuredPower* measured_phase(const devices::Device& d, Backend backend, const ClassPower* row,
                                              const PhaseFields& f) {
  const devices::MeasuredPower* other = nullptr;
  for (const auto& m : d.measured_power) {
    if (!(m.*f.measured)) continue;
    const auto b = backend_from_name(m.backend);
    if (b == backend) return &m;
    if (!other && b && (!row || (row->covers(backend) && row->covers(*b)))) other = &m;
  }
  return other;
}

// prefill / decode in the class's figures (TDP shares, else watts), to carry a measured phase
// over to the other; nullopt when the class has no pair.
std::optional<double> prefill_to_decode(const ClassPower* prior) {
  if (!prior) return std::nullopt;
  if (prior->decode_tdp_fraction && prior->prefill_tdp_fraction) return prior->prefill_tdp_fraction->mid / prior->decode_tdp_fraction->mid;
  if (prior->decode_w && prior->prefill_w) return prior->prefill_w->mid / prior->decode_w->mid;
  return std::nullopt;
}

// One phase, first that applies: the file's measurement; the other phase's measurement times
// the class's ratio between the phases; the class's share of the file's TDP; the class's watts.
Phase phase_draw(const devices::Device& d, Backend backend, const ClassPower* row, const ClassPower* prior, const PhaseFields& f,
                 const PhaseFields& other_phase) {
  const std::string name = f.name;
  if (const auto* m = measured_phase(d, backend, row, f))
    return {m->*f.measured, name + " " + watts(*(m->*f.measured)) + " measured on " + d.id + " (" + m->backend +
                                 (m->backend == info(backend).name ? "" : ", standing for " + std::string(info(backend).name)) +
                                 "; sources in its file)"};
  const auto ratio = prefill_to_decode(prior);
  if (const auto* m = measured_phase(d, backend, row, other_phase); m && ratio) {
    const double r = f.measured == k_prefill.measured ? *ratio : 1 / *ratio;
    const Range w = times(*(m->*other_phase.measured), r);
    return {w, name + " " + watts(w) + " = " + other_phase.name + " measured on " + d.id + " (" + m->backend + ") x " +
                   fmt_ratio(r) + ", the " + d.device_class + " prior's " + name + "/" + other_phase.name + " ratio"};
  }
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

// Why no figure covers the backend, naming the table's reason.
std::string gap(const devices::Device& d, Backend backend, const ClassPower* row) {
  const std::string b(info(backend).name);
  std::string why = "no power figure for " + d.id + " on " + b + ": its file has no llm_w for it";
  if (!row) return why + ", and devices/power.yaml has no " + d.device_class + " row";
  if (!row->covers(backend)) return why + ", and the " + d.device_class + " prior does not cover " + b + " (devices/power.yaml: " + row->source_of("backends") + ")";
  const bool tdp_only = row->decode_tdp_fraction || row->prefill_tdp_fraction;
  return why + ", and the " + d.device_class + " prior has no figure" + (tdp_only && !d.tdp_w ? " for a device without a TDP" : "") +
         " (devices/power.yaml: " + row->source_of("decode_w") + ")";
}

}  // namespace

std::optional<PowerDraw> power_draw(const devices::Device& d, Backend backend, const PowerTables& tables, std::string* why) {
  const ClassPower* row = tables.find(d.device_class);
  const ClassPower* prior = row && row->covers(backend) ? row : nullptr;
  Phase decode = phase_draw(d, backend, row, prior, k_decode, k_prefill);
  Phase prefill = phase_draw(d, backend, row, prior, k_prefill, k_decode);
  // A measurement of one phase stands for the other where nothing else covers it.
  if (!prefill.watts && decode.watts) prefill = {decode.watts, "prefill as decode (no other figure)"};
  if (!decode.watts && prefill.watts) decode = {prefill.watts, "decode as prefill (no other figure)"};
  if (!decode.watts) {
    if (why) *why = gap(d, backend, row);
    return std::nullopt;
  }
  return PowerDraw{*decode.watts, *prefill.watts, decode.basis + "; " + prefill.basis};
}

}  // namespace trilemma::power
