// `trilemma completion bash|zsh|fish`: shell completion generated from the command tree, so a
// new command or flag completes without editing a script.
#pragma once
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "cli/commands.hpp"

namespace trilemma::cli {

// The completion script for `shell` (bash, zsh or fish) of `app`'s tree; nullopt for another shell.
std::optional<std::string> completion_script(const CLI::App& app, const std::string& shell);

void add_completion_command(CLI::App& app, Handler& handler);

}  // namespace trilemma::cli
