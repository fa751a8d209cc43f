#include "solver/prepared.hpp"

#include <cmath>

#include "accuracy/accuracy_model.hpp"
#include "devices/device_db.hpp"
#include "models/catalog.hpp"
#include "types/deployment.hpp"
#include "types/number_text.hpp"

namespace trilemma::solver {
namespace {

// The loss model's bits slope (0 when its data do not load: plain averages).
double bits_slope() {
  const auto* fit = accuracy::builtin_loss_fit();
  return fit ? fit->a_bits : 0.0;
}

std::array<double, k_weight_formats> loss_bits_of(const ModelShape& shape) {
  std::array<double, k_weight_formats> b{};
  for (const auto& row : weight_formats())
    b[static_cast<std::size_t>(row.format)] = memory::loss_weighted_block_bits(shape, row.format, bits_slope());
  return b;
}

// The same for Llama-3-8B, the model the loss constants are quoted for, by the same tensor walk
// (0: not in the catalog).
const std::array<double, k_weight_formats>& llama3_8b_bits() {
  static const std::array<double, k_weight_formats> bits = [] {
    auto models = models::builtin_models();
    if (models.ok())
      for (const auto& m : *models)
        if (m.id == "llama-3-8b") return loss_bits_of(m.shape);
    return std::array<double, k_weight_formats>{};
  }();
  return bits;
}
}  // namespace

PreparedModel PreparedModel::prepare(const models::Model& m) {
  PreparedModel p;
  p.model = &m;
  for (const auto& row : weight_formats())
    p.weights[static_cast<std::size_t>(row.format)] = memory::weight_bytes(m.shape, row.format);
  if (!m.stored_tensors.empty()) {
    memory::WeightBytes w;
    double elems = 0;
    for (const auto& t : m.stored_tensors) {
      w.total += double(t.bytes);
      elems += double(t.elems);
      const bool experts = t.name.find("_exps") != std::string::npos && m.shape.is_moe();
      // A decoded token reads one row of an untied embedding table, as the planned bytes count it.
      const bool lookup = t.name == "token_embd.weight" && !m.shape.tied_embeddings && m.shape.vocab > 0;
      w.per_token += experts  ? double(t.bytes) * (m.shape.moe.experts_per_token + m.shape.moe.shared_experts) /
                                    double(m.shape.moe.experts)
                     : lookup ? double(t.bytes) / m.shape.vocab
                              : double(t.bytes);
    }
    w.bits_per_weight = elems > 0 ? 8.0 * w.total / elems : 0;
    p.stored = w;
  }
  p.active_params = count_parameters(m.shape).active_per_token;
  p.traits.effective_params = accuracy::effective_params(m.shape);
  if (const auto c = count_parameters(m.shape); m.shape.is_moe() && c.active_per_token > 0)
    p.traits.experts_ratio = c.total() / c.active_per_token;
  p.loss_bits = loss_bits_of(m.shape);
  p.family = m.family;
  const double total = m.published_total.value_or(count_parameters(m.shape).total());
  if (const auto t = measurements::training_tokens_of(accuracy::builtin_training_tokens(), m.family, total / 1e9))
    p.traits.training_tokens = t->tokens, p.traits.tokens_imputed = t->imputed;
  // Measured KLDs calibrate the model: the geometric mean of measured / predicted.
  double log_ratio = 0;
  std::size_t n = 0;
  for (const auto& measured : m.measured_loss) {
    DeploymentConfig c;
    c.weights = measured.weights;
    c.kv_type = TensorType::f16;
    auto traits = p.loss_traits(measured.weights);
    traits.imatrix = measured.imatrix;
    const double predicted = accuracy::estimate_accuracy(traits, c, nullptr).kld.mid;
    if (predicted > 0) log_ratio += std::log(measured.kld / predicted), ++n;
  }
  if (n > 0) p.traits.calibration = std::exp(log_ratio / double(n));
  return p;
}

accuracy::LossTraits PreparedModel::loss_traits(WeightFormat f) const {
  accuracy::LossTraits t = traits;
  const double reference = llama3_8b_bits()[static_cast<std::size_t>(f)];
  // The planned recipe's block bits (a GGUF file's stored bytes carry no per-role split).
  const double bits = loss_bits[static_cast<std::size_t>(f)];
  if (reference > 0 && bits > 0 && !info(f).llama_cpp.empty()) t.bits_delta = bits - reference;
  return t;
}

const memory::WeightBytes& PreparedModel::bytes(WeightFormat f) const {
  // A GGUF file's real bytes stand for the format its bulk tensors are stored in.
  if (stored && model && info(f).bulk == tensor_type_from_name(model->stored_format)) return *stored;
  return weights[static_cast<std::size_t>(f)];
}

Result<PreparedDevice> PreparedDevice::prepare(const devices::Device& d) {
  TRILEMMA_TRY(tables, roofline::derating_tables());
  return prepare(d, *tables);
}

Result<PreparedDevice> PreparedDevice::prepare(const devices::Device& d, const roofline::DeratingTables& tables,
                                               Purpose purpose, const Scope* scope) {
  const bool with_basis = purpose == Purpose::plans;
  TRILEMMA_TRY(classes, devices::class_table());
  (void)classes;  // usable_memory_gib reads it; loading it here surfaces a broken table as an error
  TRILEMMA_TRY(power_tables, power::power_tables());
  PreparedDevice p;
  p.device = &d;
  p.tables = &tables;
  p.usable_bytes = devices::usable_memory_gib(d) * k_gib;
  p.offload = roofline::offload_tier(tables, d);
  for (const auto& b : backends()) {
    if (!d.has_backend(b.backend)) continue;
    const auto bi = static_cast<std::size_t>(b.backend);
    if (scope && !scope->backends.test(bi)) continue;
    if (with_basis) p.m_power[bi] = power::power_draw(d, b.backend, *power_tables, &p.m_power_gap[bi]);
    for (const auto& w : weight_formats())
      if (!scope || scope->formats.test(static_cast<std::size_t>(w.format)))
        if (auto e = roofline::efficiency(tables, d, b.backend, w.format, with_basis)) {
          p.m_efficiency_at[bi][static_cast<std::size_t>(w.format)] = static_cast<std::int16_t>(p.m_efficiencies.size());
          p.m_efficiencies.push_back(std::move(*e));
        }
    for (auto kv : kv_formats())
      for (std::size_t phase = 0; phase < k_attention_phases; ++phase)
        p.m_attention[bi][kv_format_index(kv)][phase] =
            roofline::attention_fraction(tables, d, b.backend, kv, static_cast<roofline::AttentionPhase>(phase));
  }
  return p;
}

const roofline::Efficiency* PreparedDevice::efficiency(Backend backend, WeightFormat weights) const {
  const auto at = m_efficiency_at[static_cast<std::size_t>(backend)][static_cast<std::size_t>(weights)];
  return at < 0 ? nullptr : &m_efficiencies[static_cast<std::size_t>(at)];
}

const power::PowerDraw* PreparedDevice::power(Backend backend) const {
  const auto& p = m_power[static_cast<std::size_t>(backend)];
  return p ? &*p : nullptr;
}

const std::string& PreparedDevice::power_gap(Backend backend) const { return m_power_gap[static_cast<std::size_t>(backend)]; }

Range PreparedDevice::attention_fraction(Backend backend, TensorType kv, roofline::AttentionPhase phase) const {
  return m_attention[static_cast<std::size_t>(backend)][kv_format_index(kv)][static_cast<std::size_t>(phase)];
}

}  // namespace trilemma::solver
