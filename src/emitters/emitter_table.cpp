// The one table of emitters. Adding a target is a row here plus its file.
#include <array>
#include <filesystem>

#include "io/atomic_write.hpp"

#include "emitters/emit_functions.hpp"

namespace trilemma::emitters {
namespace {

constexpr std::array k_emitters = {
    EmitterInfo{"llama.cpp", "llama-server / llama-cli command line and argument file", "llama-server.sh", emit_llama_cpp},
    EmitterInfo{"ollama", "Ollama Modelfile and server environment", "Modelfile", emit_ollama},
    EmitterInfo{"mlc-llm", "MLC LLM mlc-chat-config.json fields", "mlc-chat-config.json", emit_mlc_llm},
    EmitterInfo{"plan-json", "trilemma plan document, JSON", "plan.json", emit_plan_json},
    EmitterInfo{"plan-yaml", "trilemma plan document, YAML", "plan.yaml", emit_plan_yaml},
};

}  // namespace

std::span<const EmitterInfo> emitters() { return k_emitters; }

const EmitterInfo* find_emitter(std::string_view name) {
  for (const auto& e : k_emitters)
    if (e.name == name) return &e;
  return nullptr;
}

std::string emitter_names() {
  std::string s;
  for (const auto& e : k_emitters) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

nlohmann::json emission_to_json(const EmitterInfo& emitter, const solver::PlanDocument& plan, const Emission& emission,
                                const std::vector<std::string>& paths) {
  nlohmann::json j;
  j["schema"] = "trilemma.emit";
  j["schema_version"] = 1;
  j["format"] = emitter.name;
  j["target"] = emitter.target;
  j["plan"] = {{"model", plan.model}, {"device", plan.device}, {"scenario", plan.scenario},
               {"summary", describe(plan.config)}};
  j["files"] = nlohmann::json::array();
  for (std::size_t i = 0; i < emission.files.size(); ++i)
    j["files"].push_back({{"role", emission.files[i].role},
                          {"path", i < paths.size() ? paths[i] : ""},
                          {"content", emission.files[i].content}});
  j["settings"] = nlohmann::json::array();
  for (const auto& [k, v] : emission.settings) j["settings"].push_back({{"name", k}, {"value", v}});
  j["not_expressed"] = nlohmann::json::array();
  for (const auto& n : emission.not_expressed)
    j["not_expressed"].push_back({{"choice", n.choice}, {"value", n.value}, {"reason", n.reason}, {"substitute", n.substitute}});
  return j;
}

Result<std::vector<std::string>> write_emission(const Emission& emission, const std::string& path) {
  // Standard output holds one file: companions would be written as "-.args" beside nothing.
  if (io::is_standard_stream(path) && emission.files.size() > 1)
    return make_error(ErrorKind::usage, "--out", "",
                      "this target writes " + std::to_string(emission.files.size()) +
                          " files (a primary and its companions): give --out a path, or leave --out out to print them");
  std::vector<std::string> written;
  std::vector<std::pair<std::filesystem::path, std::string_view>> files;
  for (const auto& file : emission.files) {
    written.push_back(path + file.suffix);
    files.emplace_back(written.back(), file.content);
  }
  // All or none: a companion file that cannot be written leaves every target as it was.
  if (auto w = io::write_files_atomically(files); !w.ok()) return w.error();
  return written;
}

}  // namespace trilemma::emitters
