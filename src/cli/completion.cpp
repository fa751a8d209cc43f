#include "cli/completion.hpp"

#include <algorithm>
#include <iostream>
#include <sstream>

#include "cli/engine_weights.hpp"
#include "cli/exit_codes.hpp"
#include "cli/man_page.hpp"
#include "devices/device_db.hpp"
#include "emitters/emitter.hpp"
#include "models/catalog.hpp"
#include "solver/profile.hpp"
#include "types/backend.hpp"
#include "types/deployment.hpp"
#include "types/weight_format.hpp"

namespace trilemma::cli {
namespace {

// One command of the tree: its path of names ("devices show"), its commands and option spellings.
struct Node {
  std::string path;
  std::vector<std::string> commands;
  std::vector<std::string> long_options, short_options;  // without dashes
  std::vector<std::pair<std::vector<std::string>, std::string>> values;  // an option's spellings, its values
};

std::vector<std::pair<std::vector<std::string>, std::string>> valued_options(const CLI::App& app, const std::string& path);

void collect(const CLI::App& app, const std::string& path, std::vector<Node>& out) {
  Node n{path, {}, {}, {}, valued_options(app, path)};
  for (const auto* o : app.get_options()) {
    for (const auto& l : o->get_lnames()) n.long_options.push_back(l);
    for (const auto& s : o->get_snames()) n.short_options.push_back(s);
  }
  const auto subs = app.get_subcommands([](const CLI::App*) { return true; });
  for (const auto* sub : subs) n.commands.push_back(sub->get_name());
  out.push_back(n);
  for (const auto* sub : subs) collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
}

// "a, b, c" (the tables' help lists) as "a b c".
std::string listed(const std::string& names) {
  std::string out;
  std::istringstream in(names);
  for (std::string w; std::getline(in, w, ',');) {
    const auto b = w.find_first_not_of(' ');
    if (b != std::string::npos) out += (out.empty() ? "" : " ") + w.substr(b);
  }
  return out;
}

template <class T>
std::string ids_of(const Result<std::vector<T>>& rows) {
  std::string out;
  if (rows.ok())
    for (const auto& r : *rows) out += (out.empty() ? "" : " ") + r.id;
  return out;
}

std::string device_ids() { return "host " + ids_of(devices::builtin_devices()); }
std::string model_ids() { return ids_of(models::builtin_models()); }
std::string scenario_ids() { return ids_of(solver::builtin_profiles()); }
std::string emitter_ids() { return listed(emitters::emitter_names()); }
std::string weight_ids() { return listed(weight_format_names()); }
std::string engine_weight_ids() { return listed(engine_weight_names()); }
std::string kv_ids() { return listed(kv_format_names()); }
std::string kv_strategy_ids() { return listed(kv_strategy_names()); }
std::string backend_ids() { return listed(backend_names()); }

// The values an option takes, from the tables the commands read them from (issue 50). A row
// holds for the commands named (their paths), or for every command with the option. Values
// that may also be a file (a device YAML, a .gguf) fall back to file names in the script.
struct OptionValues {
  std::string_view option;  // long name, without dashes
  std::vector<std::string_view> commands;
  std::string (*values)();
};

const std::vector<OptionValues>& option_values() {
  static const std::vector<OptionValues> rows = {
      {"device", {}, device_ids},
      {"model", {}, model_ids},
      {"draft-model", {}, model_ids},
      {"scenario", {}, scenario_ids},
      {"format", {"emit"}, emitter_ids},
      {"emit", {"plan"}, emitter_ids},
      {"weights", {"plan"}, weight_ids},
      {"weights", {"run", "eval", "verify"}, engine_weight_ids},
      {"kv", {}, kv_ids},
      {"kv-strategy", {}, kv_strategy_ids},
      {"backend", {}, backend_ids},
  };
  return rows;
}

// This node's options with values: each spelling ("--device", "-d") and the value list.
std::vector<std::pair<std::vector<std::string>, std::string>> valued_options(const CLI::App& app, const std::string& path) {
  std::vector<std::pair<std::vector<std::string>, std::string>> out;
  for (const auto* o : app.get_options()) {
    for (const auto& row : option_values()) {
      const auto& names = o->get_lnames();
      if (std::find(names.begin(), names.end(), row.option) == names.end()) continue;
      if (!row.commands.empty() && std::find(row.commands.begin(), row.commands.end(), path) == row.commands.end()) continue;
      std::vector<std::string> spellings;
      for (const auto& l : names) spellings.push_back("--" + l);
      for (const auto& sn : o->get_snames()) spellings.push_back("-" + sn);
      out.emplace_back(std::move(spellings), row.values());
      break;
    }
  }
  return out;
}

std::string words(const Node& n) {
  std::string s;
  for (const auto& c : n.commands) s += (s.empty() ? "" : " ") + c;
  for (const auto& l : n.long_options) s += (s.empty() ? "--" : " --") + l;
  for (const auto& o : n.short_options) s += (s.empty() ? "-" : " -") + o;
  return s;
}

std::string bash(const std::vector<Node>& nodes) {
  std::string s =
      "# bash completion for trilemma, generated from its command tree: `trilemma completion bash`\n"
      "# (source it, or put it in /etc/bash_completion.d/trilemma)\n"
      "_trilemma() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" path=\"\" next i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    next=\"${path:+$path }${COMP_WORDS[i]}\"\n"
      "    case \"$next\" in\n";
  std::string known;
  for (const auto& n : nodes)
    if (!n.path.empty()) known += (known.empty() ? "      \"" : "|\"") + n.path + "\"";
  s += known + ") path=\"$next\" ;;\n    esac\n  done\n";
  // An option's value: ids and names from the tables, then file names (a device YAML, a .gguf).
  s += "  local prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n  case \"$path $prev\" in\n";
  for (const auto& n : nodes)
    for (const auto& [spellings, values] : n.values) {
      std::string pattern;
      for (const auto& sp : spellings) pattern += (pattern.empty() ? "    \"" : "|\"") + n.path + " " + sp + "\"";
      s += pattern + ")\n      COMPREPLY=($(compgen -W \"" + values + "\" -- \"$cur\"))\n" +
           "      [ ${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -f -- \"$cur\"))\n      return 0 ;;\n";
    }
  s += "  esac\n  local opts\n  case \"$path\" in\n";
  for (const auto& n : nodes) s += "    \"" + n.path + "\") opts=\"" + words(n) + "\" ;;\n";
  s += "  esac\n"
       "  COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
       "  # Values of options (files, ids) complete as file names.\n"
       "  [ ${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -f -- \"$cur\"))\n"
       "  return 0\n"
       "}\n"
       "complete -o filenames -F _trilemma trilemma\n";
  return s;
}

std::string fish(const std::vector<Node>& nodes) {
  std::string s = "# fish completion for trilemma, generated from its command tree: `trilemma completion fish`\n"
                  "# (save as ~/.config/fish/completions/trilemma.fish)\n";
  for (const auto& n : nodes) {
    // The condition: at the top level, no command yet; below, the last command of the path seen.
    const auto last = n.path.substr(n.path.rfind(' ') == std::string::npos ? 0 : n.path.rfind(' ') + 1);
    const std::string cond = n.path.empty() ? "__fish_use_subcommand" : "__fish_seen_subcommand_from " + last;
    for (const auto& c : n.commands) s += "complete -c trilemma -n '" + cond + "' -f -a " + c + "\n";
    for (const auto& l : n.long_options) s += "complete -c trilemma -n '" + cond + "' -l " + l + "\n";
    for (const auto& o : n.short_options) s += "complete -c trilemma -n '" + cond + "' -s " + o + "\n";
    for (const auto& [spellings, values] : n.values)
      if (spellings.front().rfind("--", 0) == 0)
        s += "complete -c trilemma -n '" + cond + "' -l " + spellings.front().substr(2) + " -r -a '" + values + "'\n";
  }
  return s;
}

}  // namespace

std::optional<std::string> completion_script(const CLI::App& app, const std::string& shell) {
  std::vector<Node> nodes;
  collect(app, "", nodes);
  if (shell == "bash") return bash(nodes);
  // zsh runs bash completions through bashcompinit.
  if (shell == "zsh")
    return "# zsh completion for trilemma: `trilemma completion zsh` (bash's, through bashcompinit)\n"
           "autoload -U +X bashcompinit && bashcompinit\n" + bash(nodes);
  if (shell == "fish") return fish(nodes);
  if (shell == "man") return man_page(app);
  return std::nullopt;
}

void add_completion_command(CLI::App& app, Handler& handler) {
  static std::string shell;
  auto* cmd = app.add_subcommand("completion", "Print a shell completion script (bash, zsh or fish), or the man page (man)");
  cmd->add_option("shell", shell, "bash, zsh or fish; man: the man page in roff (`man -l <(trilemma completion man)`)")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish", "man"}));
  cmd->callback([&app, &handler] {
    handler = [&app] {
      std::cout << *completion_script(app, shell);
      return k_exit_ok;
    };
  });
}

}  // namespace trilemma::cli
