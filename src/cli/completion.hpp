// `trilemma completion bash|zsh|fish|man`: shell completion (and the man page, cli/man_page)
// generated from the command tree, so a new command or flag completes without editing a script.
#pragma once
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "cli/commands.hpp"

namespace trilemma::cli {

// The completion script for `shell` (bash, zsh or fish) of `app`'s tree, or its man page for
// "man"; nullopt for another name.
std::optional<std::string> completion_script(const CLI::App& app, const std::string& shell);

void add_completion_command(CLI::App& app, Handler& handler);

}  // namespace trilemma::cli
