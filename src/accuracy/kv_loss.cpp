#include "accuracy/kv_loss.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "accuracy/loss_fit.hpp"
#include "types/deployment.hpp"

namespace trilemma::accuracy {
namespace {

// Below these a published figure is noise (a q8_0 cache measures -0.006% on one model): the
// range's low end stops there.
constexpr double k_floor_ppl_pct = 0.001;
constexpr double k_floor_kld = 1e-6;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

bool contains(const std::string& text, std::string_view what) { return text.find(what) != std::string::npos; }

// The cache type a row names for K or V: f16 when empty (not part of the measurement).
std::optional<TensorType> cache_type(const std::string& name) {
  if (name.empty()) return TensorType::f16;
  const auto t = tensor_type_from_name(name);
  if (!t || info(*t).gguf_id == k_no_gguf_id) return std::nullopt;
  return t;
}

// Rotated caches (a Hadamard transform before quantizing) are marked in the row's id; the notes
// also mention rotation where a plain row compares against it.
bool rotated(const measurements::LossRow& r) {
  const std::string id = lower(r.id);
  return contains(id, "hadamard") || contains(id, "rot");
}

// One measurement (a row, or a KLD row and a perplexity row of the same run).
struct Measurement {
  const measurements::LossRow* row = nullptr;
  TensorType k = TensorType::f16, v = TensorType::f16;
  std::optional<double> kld, ppl_pct;
};

double geometric_mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / double(v.size()));
}

// `mid` with the 10th and 90th percentiles of `v` (interpolated), held around the mid.
Range spread(std::vector<double> v, double mid) {
  std::sort(v.begin(), v.end());
  auto quantile = [&](double q) {
    const double at = q * double(v.size() - 1);
    const auto i = static_cast<std::size_t>(at);
    return i + 1 < v.size() ? v[i] + (at - double(i)) * (v[i + 1] - v[i]) : v.back();
  };
  return {std::min(quantile(0.1), mid), mid, std::max(quantile(0.9), mid)};
}

}  // namespace

std::optional<std::string> kv_row_unusable(const measurements::LossRow& r) {
  if (r.kv_k.empty() && r.kv_v.empty()) return "not a KV-cache row";
  if (!cache_type(r.kv_k) || !cache_type(r.kv_v)) return "KV formats that are not llama.cpp cache types (MLX bits, KIVI)";
  const std::string notes = lower(r.notes);
  if (contains(notes, "latent") || contains(notes, "hybrid"))
    return "caches the KV model does not cover (MLA latent, hybrid linear attention)";
  if (r.metric != "kld_mean" && r.metric != "ppl_delta_pct" && !(r.metric == "ppl" && r.baseline_value && *r.baseline_value > 0))
    return "KV rows with benchmark scores (not mapped to KLD)";
  const bool full_weights = r.format.empty() || r.format == r.base_precision || r.format == "f16" || r.format == "bf16" ||
                            r.format == "f32";
  if (!full_weights && !contains(notes, "baseline = same"))
    return "weights and KV quantized together against the full model (the KV share is not isolated)";
  return std::nullopt;
}

KvLossTable kv_loss_table(const std::vector<measurements::LossRow>& rows, const std::vector<TensorType>& types,
                          double knee) {
  KvLossTable table;
  std::map<std::string, Measurement> runs;  // one run may publish a KLD row and a perplexity row
  for (const auto& r : rows) {
    if (r.kv_k.empty() && r.kv_v.empty()) continue;
    if (const auto why = kv_row_unusable(r)) {
      ++table.skipped[*why];
      continue;
    }
    auto& m = runs[r.model + "|" + r.format + "|" + r.kv_k + "|" + r.kv_v + "|" + r.source_url +
                   (rotated(r) ? "|rotated" : "")];
    m.row = &r, m.k = *cache_type(r.kv_k), m.v = *cache_type(r.kv_v);
    if (r.metric == "kld_mean") m.kld = r.value;
    else m.ppl_pct = r.metric == "ppl" ? (r.value / *r.baseline_value - 1) * 100 : r.value;
  }
  for (const TensorType type : types) {
    KvLoss loss;
    loss.type = type;
    std::vector<double> klds, mid_klds, mid_ppls, both_klds, both_ppls;
    for (const auto& [key, m] : runs) {
      const bool k_in = m.k == type || m.k == TensorType::f16, v_in = m.v == type || m.v == TensorType::f16;
      if (!k_in || !v_in || (m.k != type && m.v != type)) continue;
      const double ppl = std::max(m.ppl_pct ? *m.ppl_pct : ppl_pct_from_kld(*m.kld, knee), k_floor_ppl_pct);
      const double kld = std::max(m.kld ? *m.kld : kld_from_ppl_pct(ppl, knee), k_floor_kld);
      klds.push_back(kld);
      if (m.k == type && m.v == type) both_klds.push_back(kld), both_ppls.push_back(ppl);
      if (m.k == type && m.v == type && !rotated(*m.row)) {
        mid_klds.push_back(kld), mid_ppls.push_back(ppl);
        loss.mid_models.push_back(m.row->model);
      }
    }
    if (mid_klds.empty()) continue;
    loss.measurements = klds.size();
    loss.both_measurements = both_klds.size();
    // The range is the spread of the caches quantized as a plan quantizes them (K and V both of
    // this type, rotated or not), 10th to 90th percentile around the mid: not the extremes of
    // every row naming the type, whose half-quantized caches spanned 0.9-254% for q4_0.
    loss.kld = spread(both_klds, geometric_mean(mid_klds));
    loss.ppl_delta_pct = spread(both_ppls, geometric_mean(mid_ppls));
    table.types.push_back(std::move(loss));
  }
  return table;
}

std::vector<TensorType> quantized_kv_formats() {
  std::vector<TensorType> out;
  for (const TensorType t : kv_formats())
    if (t != TensorType::f32 && t != TensorType::f16) out.push_back(t);
  return out;
}

const KvLoss* builtin_kv_loss(TensorType kv_type) {
  static const KvLossTable table = [] {
    const LossFit* fit = builtin_loss_fit();
    return fit ? kv_loss_table(builtin_loss_rows(), quantized_kv_formats(), fit->knee) : KvLossTable{};
  }();
  for (const auto& t : table.types)
    if (t.type == kv_type) return &t;
  return nullptr;
}

}  // namespace trilemma::accuracy
