#include "calibration/observations.hpp"

#include <algorithm>

namespace trilemma::calibration {
namespace {

// Published names of formats trilemma costs as one of its own (same bits per weight and the
// same arithmetic path); anything else is left out rather than approximated. Group-wise NPU
// formats (RKLLM w8a8_g128, w4a16_g128) are not aliases: their prefill runs up to 3.5x slower
// than the per-channel format of the same bits (Rockchip's own tables).
struct AliasRow {
  const char* published;
  WeightFormat format;
  const char* note;
};
constexpr AliasRow k_aliases[] = {
    {"int4-per-channel", WeightFormat::w4a16, "per-channel int4 weights"},
    {"int4", WeightFormat::w4a16, "int4 weights"},
    {"8da4w", WeightFormat::q4_0,
     "ExecuTorch 8da4w: int4 weights in groups of 32 with a scale and int8 dynamic activations, the bytes and integer path of Q4_0"},
    {"mlx-4bit", WeightFormat::q4_0, "MLX 4-bit: groups of 64 with an f16 scale and bias, 4.5 bits per weight like Q4_0"},
    {"mlx-8bit", WeightFormat::q8_0, "MLX 8-bit: 8.5 bits per weight like Q8_0"},
    {"mlx-6bit", WeightFormat::q6_k, "MLX 6-bit: 6.5 bits per weight (Q6_K 6.56)"},
    {"q4f16_1", WeightFormat::q4_0, "MLC q4f16_1: 4-bit groups of 32 with an f16 scale, 4.5 bits per weight like Q4_0"},
    {"dynamic_int8", WeightFormat::q8_0, "int8 weights with int8 dynamic activations, the integer path of Q8_0"},
};

// llama.cpp's thread count when a run does not state one: cpu_get_num_math() (common.cpp) is
// the physical cores, except on x86 Linux hybrids, where efficiency cores are left out
// ("efficiency cores harm lockstep threading").
std::uint32_t llama_cpp_default_threads(const devices::Device& d) {
  bool hybrid = false;
  std::uint32_t big = 0;
  for (const auto& c : d.clusters) {
    if (c.kind == "efficiency") hybrid = true;
    else big += c.cores;
  }
  return d.isa == "x86-64" && hybrid && big > 0 ? big : d.total_cores();
}

}  // namespace

std::optional<FormatAlias> weight_format_alias(const std::string& published) {
  if (auto f = weight_format_from_name(published)) return FormatAlias{*f, ""};
  for (const auto& a : k_aliases)
    if (published == a.published) return FormatAlias{a.format, a.note};
  return std::nullopt;
}

ObservationSet::ObservationSet(const std::vector<measurements::SpeedRow>& rows,
                               const std::vector<devices::Device>& devices, const std::vector<models::Model>& models) {
  for (const auto& d : devices) m_devices[d.id] = &d;
  for (const auto& m : models) m_models[m.id] = &m;
  std::map<std::string, solver::PreparedDevice> prepared_devices;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    auto skip = [&](const std::string& reason) {
      m_skipped.push_back(r.where() + ": " + reason);
      m_reasons.push_back(reason.substr(0, reason.find(" '")));
    };
    const auto dev = m_devices.find(r.device);
    if (dev == m_devices.end()) { skip("unknown device '" + r.device + "'"); continue; }
    const auto model = m_models.find(r.model);
    if (model == m_models.end()) { skip("unknown model '" + r.model + "'"); continue; }
    const auto alias = weight_format_alias(r.weights);
    if (!alias) { skip("weight format not costed '" + r.weights + "'"); continue; }
    const auto backend = backend_from_name(r.backend);
    if (!backend) { skip("unknown backend '" + r.backend + "'"); continue; }
    const auto& device = *dev->second;
    if (!device.has_backend(*backend)) { skip("device does not list backend '" + r.backend + "'"); continue; }
    auto pd_it = prepared_devices.find(device.id);
    if (pd_it == prepared_devices.end()) {
      auto pd = solver::PreparedDevice::prepare(device);
      if (!pd.ok()) { skip("device tables '" + pd.error().to_string() + "'"); continue; }
      pd_it = prepared_devices.emplace(device.id, std::move(*pd)).first;
    }
    if (!pd_it->second.efficiency(*backend, alias->format)) {
      skip("no compute path with a peak for '" + r.backend + " " + std::string(info(alias->format).name) + "'");
      continue;
    }
    if (!m_prepared_by_id.count(r.model)) {
      m_prepared.push_back(solver::PreparedModel::prepare(*model->second));
      m_prepared_by_id[r.model] = &m_prepared.back();
    }
    const auto* pm = m_prepared_by_id[r.model];
    const std::uint32_t trained = model->second->shape.context;

    DeploymentConfig base;
    base.weights = alias->format;
    base.backend = *backend;
    base.threads = r.threads.value_or(0);
    if (!r.threads && *backend == Backend::cpu && r.engine == "llama.cpp") base.threads = llama_cpp_default_threads(device);
    if (!r.engine.empty() && r.engine != info(*backend).engine) base.runtime = r.engine;
    const auto kv = tensor_type_from_name(r.kv_type);
    base.kv_type = kv && is_kv_format(*kv) ? *kv : TensorType::f16;
    const std::uint32_t depth = r.depth.value_or(0);
    auto add = [&](Figure figure, DeploymentConfig c, auto&& set) {
      if (c.context == 0 || c.context > trained) {
        skip("context beyond the model's trained context '" + std::to_string(c.context) + "'");
        return;
      }
      RowObservation o;
      o.observation.model = pm;
      o.observation.config = c;
      o.observation.label = r.id;
      set(o.observation);
      o.figure = figure;
      o.row = i;
      o.device = device.id;
      o.source = r.source_url;
      o.runtime = r.engine.empty() ? std::string(info(*backend).engine) : r.engine;
      m_observations.push_back(std::move(o));
    };
    if (r.exclude_decode && r.decode_tok_s) skip("excluded in the dataset ''");
    if (r.exclude_prefill && (r.ttft_ms || r.prefill_tok_s)) skip("excluded in the dataset ''");
    if (r.exclude_memory && r.peak_memory_mib) skip("excluded in the dataset ''");
    if (r.decode_tok_s && !r.exclude_decode) {
      DeploymentConfig c = base;
      c.prompt = 1;
      c.context = depth + r.gen_tokens.value_or(128);
      add(Figure::decode, c, [&](Observation& o) { o.decode_tok_s = *r.decode_tok_s; });
    }
    const bool prefill_figure = (r.ttft_ms || r.prefill_tok_s) && !r.exclude_prefill;
    if (prefill_figure && !r.prompt_tokens) skip("prefill without a prompt length ''");
    else if (prefill_figure) {
      DeploymentConfig c = base;
      c.prompt = *r.prompt_tokens;
      c.prompt_depth = depth;
      c.context = depth + c.prompt;
      // A published prefill rate is the prompt's processing alone; a TTFT may add request or
      // sampling time, or be rounded (ExecuTorch's 0.1 s): the rate wins when both are given.
      const double ttft = r.prefill_tok_s ? c.prompt / *r.prefill_tok_s * 1000.0 : *r.ttft_ms;
      add(Figure::prefill, c, [&](Observation& o) { o.ttft_ms = ttft; });
    }
    if (r.peak_memory_mib && !r.exclude_memory) {
      const std::uint32_t tokens = depth + r.prompt_tokens.value_or(0) + r.gen_tokens.value_or(0);
      if (tokens == 0) skip("memory without prompt or generation lengths ''");
      else {
        DeploymentConfig c = base;
        c.prompt = std::max(1u, r.prompt_tokens.value_or(1));
        c.context = tokens;
        add(Figure::memory, c, [&](Observation& o) { o.peak_memory_bytes = *r.peak_memory_mib * 1048576.0; });
      }
    }
  }
}

std::vector<std::string> ObservationSet::device_ids() const {
  std::vector<std::string> out;
  for (const auto& o : m_observations)
    if (std::find(out.begin(), out.end(), o.device) == out.end()) out.push_back(o.device);
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, int> ObservationSet::skipped_by_reason() const {
  std::map<std::string, int> out;
  for (const auto& r : m_reasons) ++out[r];
  return out;
}

}  // namespace trilemma::calibration
