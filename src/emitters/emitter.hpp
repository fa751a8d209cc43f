// Emitters translate a plan document into a runtime's own configuration: a llama.cpp command
// line, an Ollama Modelfile, MLC LLM's mlc-chat-config.json fields, or trilemma's plan YAML/JSON.
// One table lists them (emitter_table.cpp); one file per emitter; nothing else switches on the
// format. Contract: an emitter never drops a plan choice silently. What its target cannot express
// goes into `not_expressed` and, as a comment or warning field, into the emitted text itself.
#pragma once
#include <array>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "solver/plan_document.hpp"
#include "types/backend.hpp"
#include "types/result.hpp"

namespace trilemma::emitters {

// A plan choice the target cannot express. `substitute` is what was emitted instead (a nearest
// equivalent) or "" when nothing was emitted for it.
struct NotExpressed {
  std::string choice;      // plan field: "kv_strategy", "weights", "speculative", ...
  std::string value;       // the plan's value: "sliding 2048+4"
  std::string reason;      // why the target cannot express it
  std::string substitute;  // what was emitted instead, or ""
};

// One output file. files[0] is the primary file, written to --out PATH; the others are written
// beside it to PATH + suffix (".args", ".env").
struct OutputFile {
  std::string role;    // "command", "arguments", "modelfile", "environment", "chat-config", "plan"
  std::string suffix;  // "" for the primary file
  std::string content;
};

struct Emission {
  std::vector<OutputFile> files;
  // What the emitter set, as the target spells it (flag, PARAMETER, env var, JSON field), in
  // emission order: the round-trip tests parse the files back and compare with these.
  std::vector<std::pair<std::string, std::string>> settings;
  std::vector<NotExpressed> not_expressed;
};

// What a target does with each KV strategy: one function per KvStrategy, in enum order,
// returning what the target cannot express, or nullopt when it has the strategy. `Context` is
// what else the emitter's answer depends on (MLC: the model's architecture).
template <class... Context>
using KvGapFn = std::optional<NotExpressed> (*)(const DeploymentConfig&, Context...);
template <class... Context>
using KvStrategyGaps = std::array<KvGapFn<Context...>, k_kv_strategy_count>;
template <class... Context>
struct KvGapRow {
  KvStrategy strategy;
  KvGapFn<Context...> gap;
};

// A strategy the target has no answer for: not expressed, the target's default cache instead.
template <class... Context>
std::optional<NotExpressed> no_kv_answer(const DeploymentConfig& c, Context...) {
  const KvStrategyInfo& row = info(c.kv_strategy);
  return NotExpressed{"kv_strategy", describe_kv_strategy(c),
                      "no spelling of the " + std::string(row.name) + " KV strategy for this target", "its default KV cache"};
}

// The table of the strategies a target answers (`answered`), every other one `no_kv_answer`: a
// new strategy is a row of types/deployment.cpp, and a target learns it by one row here.
template <class... Context>
constexpr KvStrategyGaps<Context...> kv_gap_table(std::initializer_list<KvGapRow<Context...>> answered) {
  KvStrategyGaps<Context...> table{};
  for (auto& gap : table) gap = no_kv_answer<Context...>;
  for (const auto& row : answered) table[static_cast<std::size_t>(row.strategy)] = row.gap;
  return table;
}

// How a target spells each backend: one row per Backend, in enum order, `spelling` nullopt
// where the target has no such backend (the plan's backend is then reported not expressed).
template <class T>
struct BackendRow {
  Backend backend;
  std::optional<T> spelling;
};
template <class T>
using BackendTable = std::array<BackendRow<T>, k_backend_count>;

// The table of the backends a target has (`spelled`), every other one nullopt: a new backend is
// one row of types/backend.cpp, and a target learns it by one row here.
template <class T>
constexpr BackendTable<T> backend_table(std::initializer_list<BackendRow<T>> spelled) {
  BackendTable<T> table{};
  for (std::size_t i = 0; i < k_backend_count; ++i) table[i].backend = static_cast<Backend>(i);
  for (const auto& row : spelled) table[static_cast<std::size_t>(row.backend)].spelling = row.spelling;
  return table;
}

// "NOT EXPRESSED kv_strategy=sliding 2048+4: reason (emitted instead: x)".
std::string describe(const NotExpressed& n);

using EmitFn = Result<Emission> (*)(const solver::PlanDocument& plan);

// Append new emitters at the end: names are accepted by `--emit` / `--format`.
struct EmitterInfo {
  std::string_view name;     // "llama.cpp": the one spelling on the command line
  std::string_view target;   // what the output is for
  std::string_view primary;  // conventional name of the primary file
  EmitFn emit;
};

std::span<const EmitterInfo> emitters();
const EmitterInfo* find_emitter(std::string_view name);
// "llama.cpp, ollama, mlc-llm, plan-json, plan-yaml" for help and error messages.
std::string emitter_names();

// The `emit --json` document (docs/emitters.md): format, plan summary, files, settings and
// what was not expressed. `paths` are the files as written ("" when printed).
nlohmann::json emission_to_json(const EmitterInfo& emitter, const solver::PlanDocument& plan, const Emission& emission,
                                const std::vector<std::string>& paths);

// Writes the primary file to `path` and the others to path + suffix, each atomically; when one
// write fails the files already written by this call are removed. Returns the paths written.
Result<std::vector<std::string>> write_emission(const Emission& emission, const std::string& path);

}  // namespace trilemma::emitters
