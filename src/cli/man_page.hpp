// `trilemma completion man`: the man page (man 1 trilemma) generated from the command tree, as
// the shell completions are, so every command and option is documented where `man` looks
// without a hand-kept copy drifting from --help.
#pragma once
#include <CLI/CLI.hpp>

#include <string>

namespace trilemma::cli {

// roff (man(7) macros) for `app`: name, synopsis, one section per command with its options,
// the exit codes, and where the longer documentation is.
std::string man_page(const CLI::App& app);

}  // namespace trilemma::cli
