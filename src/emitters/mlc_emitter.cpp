// MLC LLM: the mlc-chat-config.json fields a plan decides (quantization, context_window_size,
// sliding_window_size, attention_sink_size, prefill_chunk_size), to merge into the file that
// `mlc_llm gen_config` writes. MLC's quantization codes are qAfB_id (A weight bits, B activation
// bits: docs/compilation/configure_quantization.rst); the KV cache takes the activation dtype.
// Warnings go in "trilemma_warnings": MLC keeps unknown keys of the chat config in kwargs.
#include <array>

#include "emitters/emit_functions.hpp"
#include "emitters/plan_facts.hpp"

namespace trilemma::emitters {
namespace {

struct MlcQuant {
  WeightFormat weights;
  std::string_view f16, f32;  // MLC codes with f16 / f32 activations; "" when none
  bool exact;                 // false: a nearest equivalent with another block layout
};
// Formats absent from this table have no MLC equivalent.
constexpr std::array k_quant = {
    MlcQuant{WeightFormat::f32, "", "q0f32", true},
    MlcQuant{WeightFormat::f16, "q0f16", "q0f32", true},
    MlcQuant{WeightFormat::bf16, "q0bf16", "q0f32", true},
    MlcQuant{WeightFormat::q4_0, "q4f16_1", "q4f32_1", false},
    MlcQuant{WeightFormat::q4_k_m, "q4f16_1", "q4f32_1", false},
    MlcQuant{WeightFormat::q3_k_m, "q3f16_1", "", false},
};

// gen_config copies sliding_window_size from the model config class, which only some model
// types have (mlc_llm/model/mistral, ministral3, gpt_oss); others ignore the field.
bool mlc_slides(std::string_view arch) { return arch == "mistral" || arch == "ministral3" || arch == "gpt_oss"; }

// MLC LLM's answer to each KV strategy (emitter.hpp, kv_gap_table); its cache is paged.
constexpr auto k_mlc_kv_gaps = kv_gap_table<std::string_view>({
    {KvStrategy::contiguous, [](const DeploymentConfig&, std::string_view) -> std::optional<NotExpressed> { return std::nullopt; }},
    {KvStrategy::paged, [](const DeploymentConfig&, std::string_view) -> std::optional<NotExpressed> { return std::nullopt; }},
    {KvStrategy::sliding, [](const DeploymentConfig& c, std::string_view arch) -> std::optional<NotExpressed> {
      if (mlc_slides(arch)) return std::nullopt;
      return NotExpressed{"kv_strategy", describe_kv_strategy(c),
                          "MLC LLM applies sliding_window_size only to mistral-type models, not " +
                              (arch.empty() ? std::string("this model") : std::string(arch)),
                          "a full context window"};
    }},
    {KvStrategy::offload, [](const DeploymentConfig&, std::string_view) -> std::optional<NotExpressed> {
      return NotExpressed{"kv_strategy", "offload", "MLC LLM's paged KV cache has no slower tier", "a resident paged cache"};
    }},
});

// MLC LLM's `mlc_llm compile --device` for each backend it targets; nullopt where it has none.
constexpr auto k_devices = backend_table<std::string_view>({
    {Backend::cpu, "cpu"},
    {Backend::metal, "metal"},
    {Backend::cuda, "cuda"},
    {Backend::vulkan, "vulkan"},
    {Backend::opencl, "opencl"},
});

}  // namespace

Result<Emission> emit_mlc_llm(const solver::PlanDocument& plan) {
  const PlanFacts f = plan_facts(plan);
  const auto& c = f.config;
  const std::string backend_name(info(c.backend).name);
  Emission e;
  nlohmann::json j;
  j["trilemma_note"] = header_lines(f, "MLC LLM");
  j["trilemma_note"].push_back("merge these fields into the mlc-chat-config.json that `mlc_llm gen_config` writes");
  const std::string wname(info(c.weights).name);

  const MlcQuant* q = nullptr;
  for (const auto& row : k_quant)
    if (row.weights == c.weights) q = &row;
  // f32 activations (and so an f32 KV cache) only with f32 weights: q0f32 for f16 weights
  // would store every weight in f32, twice the memory the plan budgets.
  const bool want_f32 = c.weights == WeightFormat::f32;
  std::string code;
  if (q) code = std::string(want_f32 && !q->f32.empty() ? q->f32 : (q->f16.empty() ? q->f32 : q->f16));
  if (!q) {
    if (!info(c.weights).llama_cpp.empty())
      e.not_expressed.push_back({"weights", wname, "MLC LLM has no quantization equivalent to " + wname, ""});
  } else if (!q->exact) {
    e.not_expressed.push_back({"weights", wname, "MLC LLM has no " + wname + "; its nearest code uses another block layout, so memory and accuracy differ from the plan", code});
  }
  if (!code.empty()) e.settings.emplace_back("quantization", code);
  common_not_expressed(f, "MLC LLM", e.not_expressed);

  const std::string act = code.empty() ? "f16" : (code.find("f32") != std::string::npos ? "f32" : "f16");
  const std::string kv(info(c.kv_type).name);
  if (kv != act)
    e.not_expressed.push_back({"kv_type", kv,
                               "MLC LLM stores the KV cache in the activation dtype (" + act + ")" +
                                   (kv == "f32" && act != "f32" ? "; an f32 code would also store the weights in f32" : ""),
                               act});

  if (auto gap = k_mlc_kv_gaps[static_cast<std::size_t>(c.kv_strategy)](c, f.architecture)) e.not_expressed.push_back(std::move(*gap));
  if (c.kv_strategy == KvStrategy::sliding && mlc_slides(f.architecture)) {
    e.settings.emplace_back("context_window_size", "-1");
    e.settings.emplace_back("sliding_window_size", std::to_string(c.kv_params.sliding.window));
    e.settings.emplace_back("attention_sink_size", std::to_string(c.kv_params.sliding.sinks));
  } else {
    e.settings.emplace_back("context_window_size", std::to_string(c.context));
    e.settings.emplace_back("sliding_window_size", "-1");
    e.settings.emplace_back("attention_sink_size", "0");
  }
  e.settings.emplace_back("prefill_chunk_size", std::to_string(f.batch));
  if (c.speculative.has_draft_weights())
    e.not_expressed.push_back({"speculative", std::string(draft_kind_name(c.speculative.kind)) + " g" + std::to_string(c.speculative.draft_len),
                               "mlc-chat-config.json has no speculative fields; serve with --speculative-mode small_draft "
                               "--additional-models " + f.draft_file + " and spec_draft_length " + std::to_string(c.speculative.draft_len),
                               ""});
  if (c.threads && c.backend == Backend::cpu)
    e.not_expressed.push_back({"threads", std::to_string(c.threads), "mlc-chat-config.json has no thread count (set TVM_NUM_THREADS)", ""});
  if (const auto& device = k_devices[std::size_t(c.backend)].spelling; !device)
    e.not_expressed.push_back({"backend", backend_name, "MLC LLM has no " + backend_name + " target", ""});
  else if (c.backend != Backend::cpu)  // the CPU is the default target: no compile note
    j["trilemma_note"].push_back("compile with: mlc_llm compile ... --device " + std::string(*device));

  for (const auto& [k, v] : e.settings) {
    if (k == "quantization") j[k] = v;
    else j[k] = std::stoll(v);
  }
  j["trilemma_warnings"] = nlohmann::json::array();
  for (const auto& n : e.not_expressed) j["trilemma_warnings"].push_back(describe(n));
  e.files.push_back({"chat-config", "", j.dump(2) + "\n"});
  return e;
}

}  // namespace trilemma::emitters
