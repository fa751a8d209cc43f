#include "fidelity/figure_check.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <set>
#include <variant>

#include "accuracy/accuracy_model.hpp"
#include "fidelity/median.hpp"
#include "types/deployment.hpp"

namespace trilemma::fidelity {
namespace {

// Published integer formats by weight and activation bits. The planner's w4a16 figure spans
// round-to-nearest (near llama.cpp's Q4_0) to GPTQ (near Q4_K_M), so every 4-bit weight-only
// method with a group scale maps to it; likewise 8-bit weights, and 8-bit weights with 8-bit
// activations. 3- and 2-bit GPTQ/AWQ, FP8, NVFP4 and codebook formats (AQLM, QuIP) have no
// planner format of that design: trilemma's int3/int2 are its own round-to-nearest blocks.
struct PublishedFormat {
  std::string_view name;
  WeightFormat planner;
};
// "-pc": one scale per output channel (no groups), as NPU converters often quantize.
constexpr std::array k_published_formats = {
    PublishedFormat{"w4a16", WeightFormat::w4a16},
    PublishedFormat{"gptq-int4", WeightFormat::w4a16},
    PublishedFormat{"awq-int4", WeightFormat::w4a16},
    PublishedFormat{"rtn-int4", WeightFormat::w4a16},
    PublishedFormat{"rtn-int4-pc", WeightFormat::w4a16},
    PublishedFormat{"autoround-int4-g128", WeightFormat::w4a16},
    PublishedFormat{"w8a16", WeightFormat::w8a16},
    PublishedFormat{"gptq-int8", WeightFormat::w8a16},
    PublishedFormat{"rtn-int8", WeightFormat::w8a16},
    PublishedFormat{"rtn-int8-pc", WeightFormat::w8a16},
    PublishedFormat{"w8a8", WeightFormat::w8a8},
    PublishedFormat{"w8a8-smoothquant", WeightFormat::w8a8},
};

PrintedSummary summarize(const std::vector<const PrintedPoint*>& points) {
  PrintedSummary s;
  s.points = points.size();
  if (points.empty()) return s;
  std::vector<double> error, signed_error;
  std::size_t inside = 0;
  for (const auto* p : points) {
    // Perplexity in log ratio (losses span decades), points in points (a score can rise).
    const double e = p->kind == PrintedKind::perplexity ? std::log(p->predicted.mid / p->measured) : p->predicted.mid - p->measured;
    signed_error.push_back(e);
    error.push_back(std::fabs(e));
    inside += p->inside();
  }
  const bool ratio = points.front()->kind == PrintedKind::perplexity;
  s.median_error = ratio ? std::exp(median(error)) : median(error);
  s.median_bias = ratio ? std::exp(median(signed_error)) : median(signed_error);
  s.inside = double(inside) / double(points.size());
  return s;
}

// What a row measures for this check, or the reason it is left out.
struct Measured {
  PrintedKind kind;
  WeightFormat format;
  double value;
};
std::variant<Measured, std::string> measured_of(const measurements::LossRow& r) {
  const bool perplexity = r.metric == "ppl" || r.metric == "ppl_delta_pct";
  if (r.metric == "kld_mean" || r.metric == "top1_pct") return "KLD and top-1 rows: the fitted rows' check (check_accuracy)";
  if (!r.kv_k.empty() || !r.kv_v.empty()) return "KV-cache rows";
  if (r.format.empty() || r.format == r.base_precision) return "the baseline itself";
  if (accuracy::is_qat(r)) return "quantization-aware-trained checkpoints";
  if (!r.params_b) return "parameter count not published";
  // llama.cpp formats' perplexities are the fitted rows, checked by check_accuracy.
  if (perplexity && accuracy::reference_bits(r.format)) return "llama.cpp formats' perplexity: the fitted rows' check";
  const auto format = planner_format_of(r.format);
  if (!format) return "formats with no planner format of that design (3/2-bit GPTQ/AWQ, 5/6-bit round-to-nearest, FP8, NVFP4, codebooks)";
  if (perplexity) {
    if (r.metric == "ppl" && (!r.baseline_value || !(*r.baseline_value > 0))) return "perplexity without its baseline";
    const double pct = r.metric == "ppl" ? (r.value / *r.baseline_value - 1) * 100 : r.value;
    // A ratio says nothing about a loss within rounding, or a perplexity that fell.
    if (!(pct >= accuracy::k_min_ppl_delta_pct)) return "perplexity increase below what the figure resolves (< 0.05%)";
    return Measured{PrintedKind::perplexity, *format, pct};
  }
  if (!r.baseline_value) return "benchmark scores without their baseline";
  return Measured{PrintedKind::points, *format, *r.baseline_value - r.value};
}

}  // namespace

std::optional<WeightFormat> planner_format_of(std::string_view published) {
  for (const auto& f : k_published_formats)
    if (f.name == published) return f.planner;
  if (accuracy::reference_bits(published)) return weight_format_from_name(published);
  return std::nullopt;
}

PrintedReport check_printed_figures(const std::vector<measurements::LossRow>& rows,
                                    const std::vector<measurements::TrainingTokens>& tokens) {
  PrintedReport report;
  const auto observations = accuracy::loss_observations(rows, tokens);
  std::map<std::string, accuracy::LossFit> fits;                        // family held out -> fit
  std::map<std::string, std::optional<accuracy::PointsMap>> points_maps;  // family held out -> map
  std::set<std::string> fitted_families;
  for (const auto& o : observations.points) fitted_families.insert(o.family);
  const auto fit_without = [&](const std::string& family) -> const accuracy::LossFit& {
    // Families with no fitted rows (most benchmark-only ones) share the fit on every family.
    const std::string key = fitted_families.count(family) ? family : std::string();
    auto it = fits.find(key);
    if (it == fits.end()) it = fits.emplace(key, accuracy::fit_loss(observations.points, key)).first;
    return it->second;
  };
  const auto points_without = [&](const std::string& family) -> const accuracy::PointsMap* {
    auto it = points_maps.find(family);
    if (it == points_maps.end()) {
      std::vector<measurements::LossRow> others;
      for (const auto& r : rows)
        if (r.family != family) others.push_back(r);
      auto map = accuracy::fit_points_map(others);
      it = points_maps.emplace(family, map.pairs ? std::optional(map) : std::nullopt).first;
    }
    return it->second ? &*it->second : nullptr;
  };
  for (const auto& r : rows) {
    const auto m = measured_of(r);
    if (const auto* why = std::get_if<std::string>(&m)) {
      ++report.skipped[*why];
      continue;
    }
    const auto& measured = std::get<Measured>(m);
    const auto& fit = fit_without(r.family);
    if (fit.points == 0) {
      ++report.skipped["no other family in the data to predict the family from"];
      continue;
    }
    DeploymentConfig config;
    config.weights = measured.format;
    auto traits = accuracy::row_traits(r, tokens);
    // As the planner: an importance matrix only where llama.cpp uses one.
    traits.imatrix = traits.imatrix && accuracy::imatrix_applies(measured.format);
    config.imatrix = traits.imatrix;
    const auto estimate = accuracy::estimate_accuracy(traits, config, fit, points_without(r.family));
    report.points.push_back({&r, measured.kind, measured.format, measured.value,
                             measured.kind == PrintedKind::perplexity ? estimate.ppl_delta_pct : estimate.points});
  }
  std::map<std::string, std::vector<const PrintedPoint*>> perplexity, points;
  for (const auto& p : report.points) {
    auto& groups = p.kind == PrintedKind::perplexity ? perplexity : points;
    groups["all"].push_back(&p);
    groups[p.kind == PrintedKind::perplexity ? std::string(info(p.format).name) : p.row->metric].push_back(&p);
    groups["family " + p.row->family].push_back(&p);
  }
  for (const auto& [g, ps] : perplexity) report.perplexity_by_format[g] = summarize(ps);
  for (const auto& [g, ps] : points) report.points_by_benchmark[g] = summarize(ps);
  return report;
}

}  // namespace trilemma::fidelity
