#include "cli/completion.hpp"

#include <iostream>

#include "cli/exit_codes.hpp"

namespace trilemma::cli {
namespace {

// One command of the tree: its path of names ("devices show"), its commands and option spellings.
struct Node {
  std::string path;
  std::vector<std::string> commands;
  std::vector<std::string> long_options, short_options;  // without dashes
};

void collect(const CLI::App& app, const std::string& path, std::vector<Node>& out) {
  Node n{path, {}, {}, {}};
  for (const auto* o : app.get_options()) {
    for (const auto& l : o->get_lnames()) n.long_options.push_back(l);
    for (const auto& s : o->get_snames()) n.short_options.push_back(s);
  }
  const auto subs = app.get_subcommands([](const CLI::App*) { return true; });
  for (const auto* sub : subs) n.commands.push_back(sub->get_name());
  out.push_back(n);
  for (const auto* sub : subs) collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
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
  s += known + ") path=\"$next\" ;;\n    esac\n  done\n  local opts\n  case \"$path\" in\n";
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
  return std::nullopt;
}

void add_completion_command(CLI::App& app, Handler& handler) {
  static std::string shell;
  auto* cmd = app.add_subcommand("completion", "Print a shell completion script (bash, zsh or fish)");
  cmd->add_option("shell", shell, "bash, zsh or fish")->required()->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->callback([&app, &handler] {
    handler = [&app] {
      std::cout << *completion_script(app, shell);
      return k_exit_ok;
    };
  });
}

}  // namespace trilemma::cli
