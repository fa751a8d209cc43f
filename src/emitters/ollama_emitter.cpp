// Ollama: a Modelfile (FROM + PARAMETER lines, docs/modelfile.md) and an environment file with
// the server-wide settings Ollama reads for the KV cache: OLLAMA_KV_CACHE_TYPE (f16, q8_0,
// q4_0) and OLLAMA_FLASH_ATTENTION, which a quantized KV cache requires (docs/faq.md).
#include <filesystem>

#include "emitters/emit_functions.hpp"
#include "emitters/plan_facts.hpp"

namespace trilemma::emitters {
namespace {

// Ollama's answer to each KV strategy (emitter.hpp, kv_gap_table).
constexpr auto k_ollama_kv_gaps = kv_gap_table<>({
    {KvStrategy::contiguous, [](const DeploymentConfig&) -> std::optional<NotExpressed> { return std::nullopt; }},
    {KvStrategy::paged, [](const DeploymentConfig&) -> std::optional<NotExpressed> {
      return NotExpressed{"kv_strategy", "paged", "Ollama sizes its KV cache for num_ctx up front", "a contiguous cache of num_ctx tokens"};
    }},
    {KvStrategy::sliding, [](const DeploymentConfig& c) -> std::optional<NotExpressed> {
      return NotExpressed{"kv_strategy", describe_kv_strategy(c),
                          "Ollama has no imposed sliding-window KV cache", "a full cache of num_ctx tokens"};
    }},
    {KvStrategy::offload, [](const DeploymentConfig&) -> std::optional<NotExpressed> {
      return NotExpressed{"kv_strategy", "offload", "Ollama cannot keep a share of the KV cache in a slower tier",
                          "a resident cache of num_ctx tokens"};
    }},
});

// Whether Ollama offloads layers to each backend (num_gpu): its GPU runners; nullopt where it
// has no such backend and the plan runs on the CPU instead.
constexpr auto k_offloads = backend_table<bool>({
    {Backend::cpu, false},
    {Backend::metal, true},
    {Backend::cuda, true},
    {Backend::vulkan, true},
});

// A FROM value as Ollama's parser reads it back (parser.go: the rest of the line, trimmed, one
// pair of enclosing quotes removed): a value that starts with a quote or a space, or ends with
// one, goes inside triple quotes, which unquote strips whatever the value holds.
std::string modelfile_value(const std::string& v) {
  const bool plain = !v.empty() && v.front() != '"' && v.front() != ' ' && v.front() != '\t' && v.back() != ' ' && v.back() != '\t';
  return plain ? v : "\"\"\"" + v + "\"\"\"";
}

}  // namespace

Result<Emission> emit_ollama(const solver::PlanDocument& plan) {
  const PlanFacts f = plan_facts(plan);
  const auto& c = f.config;
  const std::string backend_name(info(c.backend).name);
  Emission e;
  std::vector<std::string> notes;
  auto set = [&](const std::string& name, const std::string& value) { e.settings.emplace_back(name, value); };

  // Ollama resolves a relative FROM against the Modelfile's directory (parser.go expandPath),
  // not the directory the plan was made in: a bare derived name means "beside the Modelfile",
  // a path the plan names is made absolute.
  const bool bare = f.model_file.find('/') == std::string::npos;
  std::string from = bare ? "./" + f.model_file : f.model_file;
  if (!bare && f.model_file.front() != '/' && f.model_file.front() != '~') {
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(f.model_file, ec);
    if (!ec) {
      from = absolute.lexically_normal().string();
      notes.push_back("FROM: absolute, because Ollama reads a relative FROM against the Modelfile's directory");
    }
  }
  set("FROM", from);
  set("num_ctx", std::to_string(c.context));
  if (c.threads) set("num_thread", std::to_string(c.threads));
  set("num_predict", std::to_string(f.num_predict));
  notes.push_back("num_predict: the context left after the plan's " + std::to_string(c.prompt) + "-token prompt");
  const std::optional<bool> offloads = k_offloads[std::size_t(c.backend)].spelling;
  const bool ollama_gpu = offloads.value_or(false);
  if (!offloads)
    e.not_expressed.push_back({"backend", backend_name, "Ollama has no " + backend_name + " backend", "cpu (num_gpu 0)"});
  set("num_gpu", ollama_gpu ? (f.layers ? std::to_string(f.layers + 1) : "999") : "0");
  notes.push_back(ollama_gpu ? "num_gpu: every layer on the " + backend_name + " backend" : "num_gpu 0: the plan runs on the CPU");
  if (f.no_mmap) {
    set("use_mmap", "false");
    notes.push_back("use_mmap false: the weights live in VRAM on a discrete GPU; a host mapping would only add resident memory");
  }

  std::string kv(info(c.kv_type).name);
  if (c.kv_type == TensorType::f32) {
    e.not_expressed.push_back({"kv_type", "f32", "Ollama's KV cache types are f16, q8_0 and q4_0", "f16"});
    kv = "f16";
  }
  set("OLLAMA_KV_CACHE_TYPE", kv);
  if (kv != "f16") {
    set("OLLAMA_FLASH_ATTENTION", "1");
    notes.push_back("OLLAMA_FLASH_ATTENTION=1: Ollama quantizes the KV cache only with flash attention on");
  }

  common_not_expressed(f, "Ollama", e.not_expressed);
  if (c.speculative.has_draft_weights())
    e.not_expressed.push_back({"speculative", std::string(draft_kind_name(c.speculative.kind)) + " g" +
                                                  std::to_string(c.speculative.draft_len),
                               "Ollama has no speculative decoding", "plain decoding"});
  if (auto gap = k_ollama_kv_gaps[static_cast<std::size_t>(c.kv_strategy)](c)) e.not_expressed.push_back(std::move(*gap));
  if (f.mlock)
    e.not_expressed.push_back({"memory", "mlock", "Ollama dropped use_mlock (a deprecated parameter: parser.go warns and ignores it)", ""});

  std::string modelfile, env;
  for (const auto& h : header_lines(f, "Ollama")) modelfile += "# " + h + "\n", env += "# " + h + "\n";
  for (const auto& n : notes) modelfile += "# " + n + "\n";
  env += "# server-wide: these apply to every model this Ollama server runs (systemd EnvironmentFile or docker --env-file)\n";
  for (const auto& n : e.not_expressed) modelfile += "# " + describe(n) + "\n";
  for (const auto& [name, value] : e.settings) {
    if (name == "FROM") modelfile += "FROM " + modelfile_value(value) + "\n";
    else if (name.starts_with("OLLAMA_")) env += name + "=" + value + "\n";
    else modelfile += "PARAMETER " + name + " " + value + "\n";
  }
  e.files.push_back({"modelfile", "", modelfile});
  e.files.push_back({"environment", ".env", env});
  return e;
}

}  // namespace trilemma::emitters
