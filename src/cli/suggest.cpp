#include "cli/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace trilemma::cli {
namespace {

std::vector<std::string> command_names(CLI::App& app) {
  std::vector<std::string> out;
  for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    out.push_back(sub->get_name());
    for (const auto& a : sub->get_aliases()) out.push_back(a);
  }
  return out;
}

// "--name" and "-n" spellings of the options of `app` and of the commands above it (options
// such as --help are inherited).
std::vector<std::string> option_names(const std::vector<CLI::App*>& chain) {
  std::vector<std::string> out;
  for (auto* app : chain)
    for (const auto* o : app->get_options()) {
      for (const auto& l : o->get_lnames()) out.push_back("--" + l);
      for (const auto& s : o->get_snames()) out.push_back("-" + s);
    }
  return out;
}

std::string with_suggestion(std::string message, const std::string& word, const std::vector<std::string>& candidates) {
  if (auto near = nearest(word, candidates)) message += " (did you mean '" + *near + "'?)";
  return message;
}

}  // namespace

std::size_t edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment distance over three rows.
  std::vector<std::size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    prev2 = prev;
    prev = cur;
  }
  return prev[b.size()];
}

std::optional<std::string> nearest(const std::string& word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_d = 0;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (!best || d < best_d) best = c, best_d = d;
  }
  // A typo is a small share of the word: one edit in short words, a third of longer ones.
  if (!best || best_d == 0 || best_d > std::max<std::size_t>(1, word.size() / 3)) return std::nullopt;
  return best;
}

std::optional<std::string> unknown_word(CLI::App& app, const std::vector<std::string>& args) {
  std::vector<CLI::App*> chain = {&app};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") break;  // positional values only from here
    CLI::App* here = chain.back();
    const std::string where = chain.size() > 1 ? " for '" + here->get_name() + "'" : "";
    if (word.size() > 1 && word[0] == '-' && !std::isdigit(static_cast<unsigned char>(word[1])) && word[1] != '.') {
      const std::string name = word.substr(0, word.find('='));
      const CLI::Option* known = nullptr;
      for (auto* a : chain)
        for (const auto* o : a->get_options())
          if (o->check_name(name)) known = o;
      if (known) {
        // Skip the option's value when it is a separate word.
        if (known->get_type_size_max() > 0 && name == word && i + 1 < args.size()) ++i;
        continue;
      }
      if (name.size() > 2 && name[1] != '-') continue;  // -abc: stacked short flags, CLI11 reports those
      return with_suggestion("unknown option '" + name + "'" + where, name, option_names(chain));
    }
    // A word that is not an option: a command of this level, or a positional value.
    const auto commands = command_names(*here);
    if (std::find(commands.begin(), commands.end(), word) != commands.end()) {
      chain.push_back(here->get_subcommand(word));
      continue;
    }
    if (!commands.empty() && here->get_options([](const CLI::Option* o) { return o->get_positional(); }).empty())
      return with_suggestion("unknown command '" + word + "'" + where, word, commands);
  }
  return std::nullopt;
}

}  // namespace trilemma::cli
