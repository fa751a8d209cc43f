// Names a misspelt command or option and suggests the nearest one. CLI11 reports a misspelt
// required option as "--model is required" and a misspelt command as "A subcommand is
// required"; these walk the command line against the command tree to say what was wrong.
#pragma once
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace trilemma::cli {

// Edit distance (insertions, deletions, substitutions; a swap of neighbours counts one).
std::size_t edit_distance(const std::string& a, const std::string& b);

// The candidate nearest to `word` when it is close enough to be a typo of it.
std::optional<std::string> nearest(const std::string& word, const std::vector<std::string>& candidates);

// "unknown command 'plna' (did you mean 'plan'?)" or "unknown option '--modle' for 'plan' (did
// you mean '--model'?)" for the first word of `args` that `app`'s tree does not know; nullopt
// when every word is known (the parse error is then about something else).
std::optional<std::string> unknown_word(CLI::App& app, const std::vector<std::string>& args);

}  // namespace trilemma::cli
