// `trilemma emit --plan plan.json --format FORMAT [--out PATH] [--json]`: translate a plan
// document into a runtime's configuration (docs/emitters.md).
#include <iostream>

#include "cli/json_output.hpp"
#include "cli/log.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/standard_streams.hpp"
#include "emitters/emitter.hpp"
#include "io/atomic_write.hpp"

namespace trilemma::cli {
namespace {

struct EmitFlags {
  std::string plan, format, out;
  bool as_json = false;
};

int run_emit(const EmitFlags& f) {
  const auto* emitter = emitters::find_emitter(f.format);
  if (!emitter)
    return report_error(make_error(ErrorKind::usage, "--format", "",
                                   "unknown format '" + f.format + "' (expected one of: " + emitters::emitter_names() + ")"));
  auto text = io::read_text_file(f.plan);
  if (!text.ok()) return report_error(text.error());
  auto plan = solver::parse_plan_document(*text, f.plan);
  if (!plan.ok()) return report_error(plan.error());
  auto emission = emitter->emit(*plan);
  if (!emission.ok()) return report_error(emission.error());
  std::vector<std::string> paths;
  if (!f.out.empty()) {
    auto written = emitters::write_emission(*emission, f.out);
    if (!written.ok()) return report_error(written.error());
    paths = *written;
  }
  if (f.as_json) {
    report_stream({f.out}) << json_text(emitters::emission_to_json(*emitter, *plan, *emission, paths)) << "\n";
    return k_exit_ok;
  }
  if (f.out.empty()) {
    for (std::size_t i = 0; i < emission->files.size(); ++i) {
      const auto& file = emission->files[i];
      if (i > 0) std::cout << "\n# ==> " << file.role << " (--out PATH" << file.suffix << ") <==\n";
      std::cout << file.content;
    }
  } else {
    // What was written is a note on stderr (silent under -q), as every command's "wrote".
    for (std::size_t i = 0; i < paths.size() && !io::is_standard_stream(f.out); ++i)
      spdlog::info("wrote {} ({})", paths[i], emission->files[i].role);
  }
  for (const auto& n : emission->not_expressed) warn("{}", emitters::describe(n));
  return k_exit_ok;
}

}  // namespace

void add_emit_command(CLI::App& app, Handler& handler) {
  static EmitFlags f;
  auto* cmd = app.add_subcommand("emit", "Translate a plan document into llama.cpp, Ollama, MLC LLM or plan YAML/JSON");
  cmd->add_option("--plan,-p", f.plan, std::string("plan document written by `plan --json` / `plan --out`") + k_stdin_help)->required();
  cmd->add_option("--format,-f", f.format, "target: " + emitters::emitter_names())->required();
  cmd->add_option("--out,-o", f.out, std::string("write the primary file here, companions beside it (PATH.args, PATH.env)") + k_stdout_help);
  cmd->add_flag("--json", f.as_json, "print files, settings and what the target cannot express as JSON");
  cmd->callback([&] { handler = [] { return run_emit(f); }; });
}

}  // namespace trilemma::cli
