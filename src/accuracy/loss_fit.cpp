#include "accuracy/loss_fit.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <set>

namespace trilemma::accuracy {
namespace {

// Llama-3-8B (8.03B parameters) file sizes of llama.cpp's perplexity scoreboard (PR #6936,
// tools/perplexity/README.md "LLaMA 3 8b Scoreboard"), as bits per weight: 8 x GiB x 2^30 / 8.03e9.
struct ReferenceBits {
  std::string_view format;
  double gib;
};
constexpr auto k_reference_bits = std::to_array<ReferenceBits>({
    {"q8_0", 7.96},   {"q6_k", 6.14},   {"q5_k_m", 5.33}, {"q5_k_s", 5.21},  {"q5_1", 5.65},   {"q5_0", 5.21},
    {"q4_k_m", 4.58}, {"q4_k_s", 4.37}, {"iq4_nl", 4.35}, {"iq4_xs", 4.14},  {"q4_1", 4.78},   {"q4_0", 4.34},
    {"q3_k_l", 4.03}, {"q3_k_m", 3.74}, {"iq3_m", 3.53},  {"iq3_s", 3.42},   {"iq3_xs", 3.28}, {"iq3_xxs", 3.05},
    {"q3_k_s", 3.41}, {"iq2_m", 2.74},  {"q2_k", 2.96},   {"q2_k_s", 2.96},  {"iq2_s", 2.56},  {"iq2_xs", 2.43},
    {"iq2_xxs", 2.24}, {"iq1_m", 2.01}, {"iq1_s", 1.88},
});
constexpr double k_llama3_8b_params = 8.03e9;

constexpr double k_reference_params = 8e9;
constexpr double k_reference_tokens = 15e12;  // Llama-3-8B


// The knee of the KLD -> perplexity map is searched on a log grid from 1e-4 to 0.03 nats.
constexpr double k_knee_min = 1e-4, k_knee_max = 0.03;
constexpr int k_knee_steps = 40;
constexpr double k_ridge = 1e-3;
// The pull of a format's own level toward its family's line, in units of one row of weight 1.
constexpr double k_format_ridge = 0.3;
// "Points" are MMLU points throughout (the cap at chance, the profiles' budgets); easier
// benchmarks (commonsense QA averages) lose a third of that at the same perplexity increase.
constexpr std::string_view k_points_benchmark = "mmlu";
constexpr double k_family_weight_power = 0.5;
// The robust fit's threshold, in ln units: residuals up to 1.35x weigh as in least squares (the
// spread between two sources measuring one model at one format), larger ones less. 0.2-0.5 hold
// out alike (docs/fidelity.md); iterations: the weights settle within a few.
constexpr double k_huber_log_error = 0.3;
constexpr int k_huber_iterations = 20;
// Fewest held-out errors of one metric that set that metric's own range: ten points put the
// 10th and 90th percentiles on the second-lowest and the highest-but-one error.
constexpr std::size_t k_min_metric_errors = 10;  // keeps formats seen once from running away; small beside the data

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * double(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

struct WeightedError {
  double log_error = 0, weight = 1;
};

// The q-quantile of weighted values: the first value (in order) whose cumulative weight reaches
// q of the total.
double weighted_quantile(std::vector<WeightedError> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.log_error < b.log_error; });
  double total = 0;
  for (const auto& e : v) total += e.weight;
  double sum = 0;
  for (const auto& e : v)
    if ((sum += e.weight) >= q * total * (1 - 1e-12)) return e.log_error;
  return v.back().log_error;
}

// Solves (X'X + diag(ridge)) w = X'y by Gaussian elimination with partial pivoting.
std::vector<double> least_squares(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                                  const std::vector<double>& ridge) {
  const std::size_t k = ridge.size();  // columns: with no rows at all, the ridge alone (all zero)
  std::vector<std::vector<double>> a(k, std::vector<double>(k + 1, 0.0));
  for (std::size_t r = 0; r < x.size(); ++r)
    for (std::size_t i = 0; i < k; ++i) {
      if (x[r][i] == 0) continue;
      for (std::size_t j = 0; j < k; ++j) a[i][j] += x[r][i] * x[r][j];
      a[i][k] += x[r][i] * y[r];
    }
  for (std::size_t i = 0; i < k; ++i) a[i][i] += ridge[i];
  for (std::size_t c = 0; c < k; ++c) {
    std::size_t p = c;
    for (std::size_t r = c + 1; r < k; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
    std::swap(a[c], a[p]);
    for (std::size_t r = 0; r < k; ++r) {
      if (r == c || a[r][c] == 0) continue;
      const double f = a[r][c] / a[c][c];
      for (std::size_t j = c; j <= k; ++j) a[r][j] -= f * a[c][j];
    }
  }
  std::vector<double> w(k);
  for (std::size_t i = 0; i < k; ++i) w[i] = a[i][k] / a[i][i];
  return w;
}

// Least squares with row weights, made robust by iteratively reweighting (Huber): a row whose
// residual exceeds k_huber_log_error counts in proportion to k_huber_log_error / |residual|, so a
// family's outlying rows (Qwen3 at 3-4x below every other family, Mixtral's Q2_K at 5x above)
// shift the shared constants by a bounded amount instead of by the square of their miss.
std::vector<double> robust_least_squares(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                                         const std::vector<double>& weight, const std::vector<double>& ridge) {
  std::vector<std::vector<double>> xw = x;
  std::vector<double> yw = y, huber(y.size(), 1.0), w;
  for (int iteration = 0; iteration <= k_huber_iterations; ++iteration) {
    for (std::size_t r = 0; r < x.size(); ++r) {
      const double s = std::sqrt(weight[r] * huber[r]);
      for (std::size_t i = 0; i < x[r].size(); ++i) xw[r][i] = x[r][i] * s;
      yw[r] = y[r] * s;
    }
    w = least_squares(xw, yw, ridge);
    for (std::size_t r = 0; r < x.size(); ++r) {
      double fitted = 0;
      for (std::size_t i = 0; i < w.size(); ++i) fitted += x[r][i] * w[i];
      const double residual = std::fabs(y[r] - fitted);
      huber[r] = residual > k_huber_log_error ? k_huber_log_error / residual : 1.0;
    }
  }
  return w;
}

double tokens_of(const LossFit& fit, const LossTraits& t) { return t.training_tokens.value_or(fit.default_tokens); }

// Every term but the format's constant.
double trait_terms(const LossFit& fit, const LossTraits& t) {
  return fit.a_size * std::log(t.effective_params / k_reference_params) +
         fit.a_tokens * std::log(tokens_of(fit, t) / k_reference_tokens) + fit.a_bits * t.bits_delta +
         (t.imatrix ? fit.a_imatrix : 0.0) + fit.a_moe * std::log(t.experts_ratio);
}

double predicted(const LossFit& fit, const LossObservation& o) {
  const double kld = *predict_kld(fit, o.format, o.traits);
  return o.metric == LossMetric::kld ? kld : ppl_pct_from_kld(kld, fit.knee);
}

// One least-squares fit at a fixed knee. A format's constant is pooled toward its family's
// line in bits, c[format] = family[format] + a_bits * bits + delta[format], with delta held to
// zero by a ridge: a format measured on a few models keeps most of its own level, one measured
// once leans on the line, and one never measured in the training data gets the line alone.
void fit_at(const std::vector<const LossObservation*>& train, double knee, LossFit& fit) {
  std::vector<std::string> formats;
  for (const auto* o : train) formats.push_back(o->format);
  std::sort(formats.begin(), formats.end());
  formats.erase(std::unique(formats.begin(), formats.end()), formats.end());
  const std::size_t nf = formats.size();
  std::vector<double> tokens;
  for (const auto* o : train)
    if (o->traits.training_tokens) tokens.push_back(std::log(*o->traits.training_tokens));
  fit.default_tokens = tokens.empty() ? k_reference_tokens : std::exp(quantile(tokens, 0.5));

  // Columns: delta[format] (nf), format-family levels (k_format_families), bits, size, tokens,
  // imatrix, experts.
  const std::size_t c_family = nf, c_bits = nf + k_format_families, c_size = c_bits + 1, c_tokens = c_size + 1,
                    c_imatrix = c_tokens + 1, c_moe = c_imatrix + 1, columns = c_moe + 1;
  std::vector<double> ridge(columns, k_ridge);
  for (std::size_t i = 0; i < nf; ++i) ridge[i] = k_format_ridge;
  std::vector<std::vector<double>> x;  // unweighted design rows
  std::vector<double> y, family_weight;
  std::map<std::string, double> per_family;
  for (const auto* o : train) per_family[o->family] += 1;
  for (const auto* o : train) {
    std::vector<double> row(columns, 0.0);
    row[std::size_t(std::lower_bound(formats.begin(), formats.end(), o->format) - formats.begin())] = 1;
    row[c_family + format_family(o->format)] = 1;
    row[c_bits] = *reference_bits(o->format) + o->traits.bits_delta;
    row[c_size] = std::log(o->traits.effective_params / k_reference_params);
    row[c_tokens] = std::log(tokens_of(fit, o->traits) / k_reference_tokens);
    row[c_imatrix] = o->traits.imatrix ? 1 : 0;
    row[c_moe] = std::log(o->traits.experts_ratio);
    x.push_back(std::move(row));
    const double kld = o->metric == LossMetric::kld ? o->measured : kld_from_ppl_pct(o->measured, knee);
    y.push_back(std::log(kld));
    // Row weight 1/sqrt(rows of the family): a family counts by the square root of its rows, so
    // Llama-3-8B's scoreboard (a third of the data) does not set every constant alone. Weights
    // 1 and 1/rows were tried too (docs/estimates.md); this one held out best.
    family_weight.push_back(std::pow(per_family[o->family], -k_family_weight_power));
  }
  const auto w = robust_least_squares(x, y, family_weight, ridge);
  fit.a_bits = w[c_bits];
  for (std::size_t f = 0; f < k_format_families; ++f) fit.family_ln_kld[f] = w[c_family + f];
  fit.format_ln_kld.clear();
  for (std::size_t i = 0; i < nf; ++i)
    fit.format_ln_kld[formats[i]] = w[i] + w[c_family + format_family(formats[i])] + fit.a_bits * *reference_bits(formats[i]);
  fit.a_size = w[c_size], fit.a_tokens = w[c_tokens], fit.a_imatrix = w[c_imatrix], fit.a_moe = w[c_moe];
  fit.knee = knee;
}

// The knee that best maps measured KLDs to the perplexity increases measured with them (the
// same model, format, recipe and source publishing both), or the grid's middle without pairs.
double fit_knee(const std::vector<const LossObservation*>& train) {
  std::map<std::string, std::pair<const LossObservation*, const LossObservation*>> pairs;  // kld, ppl
  for (const auto* o : train) {
    if (!o->row) continue;
    const auto& r = *o->row;
    const std::string key = r.model + "|" + r.format + "|" + (r.imatrix ? (*r.imatrix ? "y" : "n") : "?") + "|" + r.source_url;
    (o->metric == LossMetric::kld ? pairs[key].first : pairs[key].second) = o;
  }
  double best = std::sqrt(k_knee_min * k_knee_max), best_sse = INFINITY;
  for (int i = 0; i <= k_knee_steps; ++i) {
    const double knee = k_knee_min * std::pow(k_knee_max / k_knee_min, double(i) / k_knee_steps);
    double sse = 0;
    std::size_t n = 0;
    for (const auto& [key, p] : pairs)
      if (p.first && p.second) sse += std::pow(std::log(ppl_pct_from_kld(p.first->measured, knee) / p.second->measured), 2), ++n;
    if (n > 0 && sse < best_sse) best_sse = sse, best = knee;
  }
  return best;
}

LossFit fit_points(const std::vector<const LossObservation*>& train) {
  LossFit fit;
  fit_at(train, fit_knee(train), fit);
  fit.points = train.size();
  std::set<std::string> families;
  for (const auto* o : train) families.insert(o->family);
  fit.families.assign(families.begin(), families.end());
  return fit;
}

}  // namespace

bool is_qat(const measurements::LossRow& r) {
  std::string m = r.model;
  std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return m.find("-qat-") != std::string::npos || r.notes.find("quantization-aware") != std::string::npos;
}

LossTraits row_traits(const measurements::LossRow& r, const std::vector<measurements::TrainingTokens>& tokens) {
  LossTraits t;
  if (!r.params_b) return t;
  const double total = *r.params_b * 1e9;
  t.effective_params = r.active_params_b ? std::sqrt(total * *r.active_params_b * 1e9) : total;
  if (r.active_params_b) t.experts_ratio = *r.params_b / *r.active_params_b;
  if (const auto d = measurements::training_tokens_of(tokens, r.family, *r.params_b))
    t.training_tokens = d->tokens, t.tokens_imputed = d->imputed;
  // Published file sizes (bpw) are not used: they mix in the embedding and classifier, whose
  // share varies with the vocabulary; the fallback term is the blocks' bits (prepared.cpp).
  // Unpublished: i-quants are made with an importance matrix (llama-quantize refuses the 1-2 bit
  // ones without it, and the authors of these rows use one throughout); other formats are not.
  t.imatrix = r.imatrix.value_or(format_family(r.format) == 2);
  return t;
}

std::optional<double> reference_bits(std::string_view format) {
  for (const auto& r : k_reference_bits)
    if (r.format == format) return 8.0 * r.gib * 1073741824.0 / k_llama3_8b_params;
  return std::nullopt;
}

double ppl_pct_from_kld(double kld, double knee) { return std::expm1(kld * kld / (kld + knee)) * 100; }

double kld_from_ppl_pct(double ppl_pct, double knee) {
  const double d = std::log1p(ppl_pct / 100);  // the inverse of d = k^2 / (k + knee)
  return (d + std::sqrt(d * d + 4 * knee * d)) / 2;
}

LossObservations loss_observations(const std::vector<measurements::LossRow>& rows,
                                   const std::vector<measurements::TrainingTokens>& tokens) {
  LossObservations out;
  for (const auto& r : rows) {
    auto skip = [&](const std::string& why) { ++out.skipped[why]; };
    if (r.metric != "kld_mean" && r.metric != "ppl_delta_pct" && r.metric != "ppl") {
      skip("benchmark scores (" + std::string(r.metric == "top1_pct" ? "top-1 agreement" : "mmlu, openllm, ...") +
           "): not mapped to KLD yet");
      continue;
    }
    if (!r.kv_k.empty() || !r.kv_v.empty()) {
      skip("KV-cache rows: the KV term's table, not the weights' fit (--fit lists it)");
      continue;
    }
    if (r.format == r.base_precision || r.format.empty()) {
      skip("the baseline itself");
      continue;
    }
    if (!reference_bits(r.format)) {
      skip("formats that are not llama.cpp quantization types (GPTQ, AWQ, RTN, MLX, ...)");
      continue;
    }
    if (is_qat(r)) {
      skip("quantization-aware-trained checkpoints (not post-training quantization)");
      continue;
    }
    if (!r.params_b) {
      skip("parameter count not published");
      continue;
    }
    LossObservation o;
    o.row = &r;
    o.family = r.family;
    o.format = r.format;
    if (r.metric == "kld_mean") o.metric = LossMetric::kld, o.measured = r.value;
    else o.metric = LossMetric::ppl_delta_pct, o.measured = r.metric == "ppl" ? (r.value / *r.baseline_value - 1) * 100 : r.value;
    if (!(o.measured >= (o.metric == LossMetric::kld ? k_min_kld : k_min_ppl_delta_pct))) {
      skip("loss below what the figure resolves (KLD < 1e-4, perplexity increase < 0.05%)");
      continue;
    }
    o.traits = row_traits(r, tokens);
    out.points.push_back(std::move(o));
  }
  return out;
}

LossFit fit_loss(const std::vector<LossObservation>& observations, std::string_view hold_out, bool with_ranges) {
  std::vector<const LossObservation*> train;
  std::set<std::string> families;
  for (const auto& o : observations)
    if (o.family != hold_out) train.push_back(&o), families.insert(o.family);
  LossFit fit = fit_points(train);
  if (!with_ranges) return fit;
  // Held-out errors of each remaining family under a fit without it: what a new family meets.
  // Each error weighs 1/sqrt(rows of its family and metric), as in the fit: Llama-3-8B's 35 KLD
  // rows, held out well, would otherwise set the percentiles alone and the range would hold
  // 72% of held-out perplexity measurements instead of 80% (docs/fidelity.md).
  std::vector<WeightedError> errors;
  std::array<std::vector<WeightedError>, k_loss_metric_count> metric_errors;
  std::array<std::set<std::string>, k_loss_metric_count> metric_families;
  for (const auto& family : families) {
    std::vector<const LossObservation*> inner, held;
    for (const auto* o : train) (o->family != family ? inner : held).push_back(o);
    if (inner.empty()) continue;  // one family: nothing to hold it out against
    const LossFit f = fit_points(inner);
    std::array<double, k_loss_metric_count> rows{};
    for (const auto* o : held) rows[std::size_t(o->metric)] += 1;
    for (const auto* o : held) {
      const WeightedError e{std::log(o->measured / predicted(f, *o)),
                            std::pow(rows[std::size_t(o->metric)], -k_family_weight_power)};
      errors.push_back(e);
      metric_errors[std::size_t(o->metric)].push_back(e);
      metric_families[std::size_t(o->metric)].insert(family);
    }
  }
  const auto percentiles = [](const std::vector<WeightedError>& e) {
    return Range{std::exp(weighted_quantile(e, 0.1)), std::exp(weighted_quantile(e, 0.5)),
                 std::exp(weighted_quantile(e, 0.9))};
  };
  fit.error = percentiles(errors);
  for (std::size_t m = 0; m < metric_errors.size(); ++m)
    fit.metric_error[m] = metric_errors[m].size() >= k_min_metric_errors && metric_families[m].size() >= 2
                              ? percentiles(metric_errors[m])
                              : fit.error;
  std::map<std::string, std::vector<double>> by_model;
  for (const auto* o : train)
    if (o->row) by_model[o->row->model].push_back(std::log(o->measured / predicted(fit, *o)));
  std::vector<double> differences;
  for (const auto& [model, residuals] : by_model)
    for (std::size_t i = 0; i < residuals.size(); ++i)
      for (std::size_t j = 0; j < residuals.size(); ++j)
        if (i != j) differences.push_back(residuals[i] - residuals[j]);
  if (!differences.empty())
    fit.within_model_error = {std::exp(quantile(differences, 0.1)), std::exp(quantile(differences, 0.5)),
                              std::exp(quantile(differences, 0.9))};
  return fit;
}

std::optional<double> predict_kld(const LossFit& fit, std::string_view format, const LossTraits& traits) {
  if (const auto c = fit.format_ln_kld.find(format); c != fit.format_ln_kld.end())
    return std::exp(c->second + trait_terms(fit, traits));
  const auto bits = reference_bits(format);
  if (!bits || fit.points == 0) return std::nullopt;
  return std::exp(fit.family_ln_kld[format_family(format)] + fit.a_bits * *bits + trait_terms(fit, traits));
}

std::size_t format_family(std::string_view format) {
  if (format.starts_with("iq")) return 2;
  if (format.find("_k") != std::string_view::npos) return 1;
  return 0;
}

double trait_factor(const LossFit& fit, const LossTraits& traits) {
  return std::exp(trait_terms(fit, traits));
}

PointsMap fit_points_map(const std::vector<measurements::LossRow>& rows) {
  auto key = [](const measurements::LossRow& r) {
    std::string m = r.model;
    for (auto& c : m) c = c == ' ' ? '-' : char(std::tolower(static_cast<unsigned char>(c)));
    return m + "|" + r.format + "|" + r.source_url;
  };
  std::map<std::string, const measurements::LossRow*> ppl, score;
  for (const auto& r : rows) {
    if (!r.kv_k.empty() || !r.kv_v.empty() || !r.baseline_value) continue;
    if (r.metric == "ppl") ppl[key(r)] = &r;
    else if (r.metric == k_points_benchmark) score[key(r)] = &r;
  }
  double sxy = 0, sxx = 0;
  std::vector<double> slopes;
  for (const auto& [k, p] : ppl) {
    const auto s = score.find(k);
    if (s == score.end() || !(*p->baseline_value > 0)) continue;
    const double pct = (p->value / *p->baseline_value - 1) * 100;
    if (pct < 1 || pct > 50) continue;
    const double drop = *s->second->baseline_value - s->second->value;
    sxy += pct * drop, sxx += pct * pct;
    slopes.push_back(drop / pct);
  }
  PointsMap m;
  m.pairs = slopes.size();
  if (slopes.empty()) return m;
  m.per_ppl_pct = {std::max(0.0, quantile(slopes, 0.1)), sxy / sxx, quantile(slopes, 0.9)};
  return m;
}

const std::vector<measurements::TrainingTokens>& builtin_training_tokens() {
  static const std::vector<measurements::TrainingTokens> table = [] {
    auto t = measurements::load_training_tokens();
    return t.ok() ? *t : std::vector<measurements::TrainingTokens>{};
  }();
  return table;
}

namespace {

// Both fits of the built-in data, from one read of loss.csv.
struct BuiltinFits {
  std::vector<measurements::LossRow> rows;
  std::optional<LossFit> fit;
  std::optional<PointsMap> points;
  std::string error;
};

const BuiltinFits& builtin_fits() {
  static const BuiltinFits built = [] {
    BuiltinFits b;
    auto rows = measurements::load_loss_rows();
    if (!rows.ok()) {
      b.error = rows.error().message;
      return b;
    }
    b.rows = std::move(*rows);
    b.fit = fit_loss(loss_observations(b.rows, builtin_training_tokens()).points);
    if (auto m = fit_points_map(b.rows); m.pairs > 0) b.points = m;
    return b;
  }();
  return built;
}

}  // namespace

const LossFit* builtin_loss_fit(std::string* error) {
  const auto& built = builtin_fits();
  if (!built.fit && error) *error = built.error;
  return built.fit ? &*built.fit : nullptr;
}

const std::vector<measurements::LossRow>& builtin_loss_rows() { return builtin_fits().rows; }

const PointsMap* builtin_points_map() {
  const auto& built = builtin_fits();
  return built.points ? &*built.points : nullptr;
}

}  // namespace trilemma::accuracy
