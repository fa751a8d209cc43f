#include "roofline/efficiency.hpp"
#include "types/number_text.hpp"

#include <cmath>
#include <cstdio>

namespace trilemma::roofline {
namespace {


std::string fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::optional<ComputePath> first_available(const devices::Device& d, std::span<const ComputePath> paths) {
  for (auto p : paths)
    if (d.peak_gops(p)) return p;
  return std::nullopt;
}

// A fraction fitted for this weight format wins over one for its compute path, which wins
// over one for "all".
std::optional<double> pick(const std::vector<std::pair<std::string, double>>& table, std::string_view format,
                           std::string_view path = {}) {
  std::optional<double> by_path, all;
  for (const auto& [key, value] : table) {
    if (key == format) return value;
    if (!path.empty() && key == path) by_path = value;
    if (key == "all") all = value;
  }
  return by_path ? by_path : all;
}

// A weight format the calibration has no figure for moves with the formats it has: its prior
// times the geometric mean of fitted / prior over the fitted formats. Kept at its prior, an
// unmeasured format on a device whose measured formats fitted at a fifth of the tables would
// look five times faster than they do, and win every plan.
template <class PriorOf>
std::optional<double> transferred(const std::vector<std::pair<std::string, double>>& table, double prior_here,
                                  PriorOf prior_of) {
  double log_sum = 0;
  int n = 0;
  for (const auto& [key, value] : table) {
    const auto format = weight_format_from_name(key);
    if (!format || value <= 0) continue;
    const std::optional<double> prior = prior_of(*format);
    if (!prior || *prior <= 0) continue;
    log_sum += std::log(value / *prior);
    ++n;
  }
  if (n == 0) return std::nullopt;
  return prior_here * std::exp(log_sum / n);
}

}  // namespace

std::optional<ComputePath> matmul_path(const devices::Device& d, Backend backend, WeightFormat weights) {
  const auto& b = info(backend);
  if (!runs(b, weights)) return std::nullopt;
  return first_available(d, paths_for(b, weights));
}

std::optional<ComputePath> matvec_path(const devices::Device& d, Backend backend, WeightFormat weights) {
  const auto& b = info(backend);
  if (!runs(b, weights)) return std::nullopt;
  for (auto p : paths_for(b, weights))
    if (!info(p).batched_only && d.peak_gops(p)) return p;
  return first_available(d, paths_for(b, weights));
}

std::optional<ComputePath> attention_path(const devices::Device& d, Backend backend) {
  return first_available(d, info(backend).attention_paths);
}

std::optional<Efficiency> efficiency(const DeratingTables& tables, const devices::Device& d, Backend backend,
                                     WeightFormat weights, bool with_basis) {
  const BackendDerating* row = tables.find(backend);
  const auto path = matmul_path(d, backend, weights);
  if (!row || !path) return std::nullopt;
  Efficiency e;
  e.path = *path;
  e.decode_path = matvec_path(d, backend, weights).value_or(*path);
  e.bandwidth_gbps = d.peak_bandwidth_gbps;
  e.bandwidth_fraction = row->bandwidth(d.device_class);
  const std::optional<Range>* of_measured =
      d.cpu_read_kind ? &row->bandwidth_of_measured[static_cast<std::size_t>(*d.cpu_read_kind)] : nullptr;
  const bool measured = info(backend).kind == BackendKind::cpu && d.cpu_read_gbps && of_measured && *of_measured;
  if (measured) {
    e.bandwidth_gbps = *d.cpu_read_gbps;
    e.bandwidth_fraction = **of_measured;
  }
  const double factor = row->compute_factor(weights);
  // A format's factor moves it along its path, never past the path's peak.
  auto scaled = [factor](Range r) { return Range{std::min(r.low * factor, 1.0), std::min(r.mid * factor, 1.0), std::min(r.high * factor, 1.0)}; };
  e.compute_fraction = scaled(row->compute(*path));
  e.decode_compute_fraction = scaled(row->compute(e.decode_path));
  e.overhead_ms = row->overhead_ms;
  e.overhead_us_per_layer = row->overhead_us_per_layer;
  e.runtime_bytes = row->runtime(d.device_class) * k_mib;
  e.prefill_chunk = info(backend).prefill_chunk;
  if (const auto ci = class_index(d.device_class); ci && row->prefill_chunk_by_class[*ci])
    e.prefill_chunk = *row->prefill_chunk_by_class[*ci];
  const std::string backend_name(info(backend).name);
  if (with_basis)
    e.basis = "derating: devices/derating.yaml " + backend_name + " (" +
            (measured ? "measured CPU " + std::string(info(*d.cpu_read_kind).name) + " " + fixed2(e.bandwidth_gbps) + " GB/s" : d.device_class + " peak") +
            " x" + fixed2(e.bandwidth_fraction.mid) + ", " + std::string(info(*path).name) + " x" +
            fixed2(e.compute_fraction.mid) + "); " +
            row->source_of("bandwidth_fraction." + (measured ? std::string(info(*d.cpu_read_kind).fraction_key) : d.device_class));
  const devices::BackendCalibration* cal = d.calibration ? d.calibration->find(backend_name) : nullptr;
  if (!cal) return e;
  const std::string_view format = info(weights).name, path_name = info(*path).name;
  // A fitted fraction is as uncertain as the fit's remaining error (at least 5%).
  const double spread = std::max(d.calibration->error_after.value_or(0.0), 0.05);
  auto around = [&](double f) { return d.calibration->error_after ? Range{f / (1 + spread), f, f * (1 + spread)} : Range::exact(f); };
  // Priors of other formats, as above: bandwidth's does not depend on the format, compute's is
  // its path's fraction times the format's factor.
  const double bandwidth_prior = e.bandwidth_fraction.mid;
  auto compute_prior = [&](WeightFormat w, bool decode) -> std::optional<double> {
    const auto p = decode ? matvec_path(d, backend, w) : matmul_path(d, backend, w);
    if (!p) return std::nullopt;
    return row->compute(*p).mid * row->compute_factor(w);
  };
  auto fitted = [&](const auto& table, std::string_view path_key, double prior_here, auto prior_of) {
    if (auto f = pick(table, format, path_key)) return f;
    return transferred(table, prior_here, prior_of);
  };
  if (auto f = fitted(cal->bandwidth_fraction, {}, bandwidth_prior,
                        [&](WeightFormat) { return std::optional<double>(bandwidth_prior); })) {
    e.bandwidth_fraction = around(*f);
    e.calibrated = true;
  }
  if (auto f = fitted(cal->compute_fraction, path_name, e.compute_fraction.mid,
                        [&](WeightFormat w) { return compute_prior(w, false); })) {
    e.compute_fraction = around(*f);
    e.calibrated = true;
  }
  const std::string_view decode_path_name = info(e.decode_path).name;
  if (auto f = fitted(cal->decode_compute_fraction, decode_path_name, e.decode_compute_fraction.mid,
                        [&](WeightFormat w) { return compute_prior(w, true); }))
    e.decode_compute_fraction = around(*f);
  else if (auto g = pick(cal->compute_fraction, format, decode_path_name)) e.decode_compute_fraction = around(*g);
  if (cal->overhead_ms || cal->overhead_us_per_layer) {
    e.overhead_ms = cal->overhead_ms.value_or(0);
    e.overhead_us_per_layer = cal->overhead_us_per_layer.value_or(0);
  }
  if (cal->runtime_mib) e.runtime_bytes = *cal->runtime_mib * k_mib;
  if (cal->scratch_fraction) e.scratch_fraction = *cal->scratch_fraction;
  if (cal->speculative_round_ms) e.speculative_round_ms = *cal->speculative_round_ms;
  if (e.calibrated && with_basis) e.basis = "calibrated: " + d.calibration->fitted_on;
  return e;
}

Range attention_fraction(const DeratingTables& tables, const devices::Device& d, Backend backend, TensorType kv,
                         AttentionPhase phase) {
  const BackendDerating* row = tables.find(backend);
  Range out = row ? row->attention_fraction.value_or(row->compute_fraction) : Range{0.25, 0.4, 0.55};
  const devices::BackendCalibration* cal = d.calibration ? d.calibration->find(std::string(info(backend).name)) : nullptr;
  if (!cal) return out;
  const std::string_view name = info(kv).name;
  if (auto f = pick(cal->attention_fraction, name)) out = Range::exact(*f);
  if (phase == AttentionPhase::prefill)
    if (auto f = pick(cal->prefill_attention_fraction, name)) out = Range::exact(*f);
  return out;
}

const OffloadTier& offload_tier(const DeratingTables& tables, const devices::Device& d) {
  const auto i = class_index(d.device_class);
  return tables.offload[i ? *i : class_index("desktop").value()];
}

}  // namespace trilemma::roofline
