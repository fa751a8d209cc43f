// Strict readers of what the emitters write, shared by the emitter tests and the emit fuzz target:
// each returns what the target would see (the words a POSIX shell passes, the Modelfile's
// commands) or nullopt where the text holds something the target would read otherwise (an
// unquoted shell metacharacter, a control character, a line that is no command). The round trip
// is the oracle: parsing the files back must give exactly the emitter's settings.
#pragma once
#include <cctype>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trilemma::testing {

using Settings = std::vector<std::pair<std::string, std::string>>;

// True when the text holds a control character other than a newline: a carriage return or an
// escape sequence in a script or config is never something the plan asked for.
inline bool has_control_character(std::string_view text) {
  for (unsigned char c : text)
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
  return false;
}

// The words of one shell line the way sh splits them, for the quoting the llama.cpp emitter
// writes: single quotes, and '\'' for a quote inside them. Anything the shell would expand,
// redirect or treat as a new command outside quotes makes the line unsafe: nullopt.
inline std::optional<std::vector<std::string>> shell_words(std::string_view line) {
  static constexpr std::string_view plain = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/+-:=@,%";
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\'') {
      const auto close = line.find('\'', i + 1);
      if (close == std::string_view::npos) return std::nullopt;
      cur.append(line.substr(i + 1, close - i - 1));
      in_word = true;
      i = close;
    } else if (c == '\\' && i + 1 < line.size() && line[i + 1] == '\'') {
      cur += '\'', in_word = true, ++i;
    } else if (c == ' ' || c == '\t') {
      if (in_word) out.push_back(cur), cur.clear(), in_word = false;
    } else if (plain.find(c) != std::string_view::npos) {
      cur += c, in_word = true;
    } else {
      return std::nullopt;  // $ ` " ; & | < > ( ) * ? [ ] ~ # ! { } \ or a byte >= 0x80 unquoted
    }
  }
  if (in_word) out.push_back(cur);
  return out;
}

// Flags and their values: a word that starts with '-' (and is not a negative number) is a flag;
// the word after it is its value unless it is a flag itself.
inline Settings pair_flags(const std::vector<std::string>& words) {
  Settings out;
  auto is_flag = [](const std::string& w) { return w.size() > 1 && w[0] == '-' && !std::isdigit(static_cast<unsigned char>(w[1])); };
  for (std::size_t i = 0; i < words.size(); ++i) {
    const bool has_value = i + 1 < words.size() && !is_flag(words[i + 1]);
    out.emplace_back(words[i], has_value ? words[i + 1] : "");
    if (has_value) ++i;
  }
  return out;
}

// The llama.cpp argument file: comment lines, then one option per line (`grep -v '^#' | xargs`).
inline std::optional<Settings> parse_args_file(const std::string& text) {
  if (has_control_character(text)) return std::nullopt;
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto w = shell_words(line);
    if (!w) return std::nullopt;
    words.insert(words.end(), w->begin(), w->end());
  }
  return pair_flags(words);
}

// The llama.cpp launch script: comment lines, then `exec llama-server` with one option per
// continued line and "$@" last.
inline std::optional<Settings> parse_script(const std::string& text) {
  if (has_control_character(text)) return std::nullopt;
  static constexpr std::string_view exec = "exec llama-server";
  const auto at = text.find(exec);
  if (at == std::string::npos) return std::nullopt;
  std::istringstream before(text.substr(0, at));
  for (std::string line; std::getline(before, line);)
    if (!line.empty() && line[0] != '#') return std::nullopt;  // only comments before the command
  std::string cmd;
  for (std::size_t i = at + exec.size(); i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    else if (text[i] == '\n' && i + 1 != text.size()) return std::nullopt;  // a second command
    else if (text[i] != '\n') cmd += text[i];
  }
  const std::string tail = " \"$@\"";
  if (cmd.size() < tail.size() || cmd.compare(cmd.size() - tail.size(), tail.size(), tail) != 0) return std::nullopt;
  cmd.resize(cmd.size() - tail.size());
  auto words = shell_words(cmd);
  if (!words) return std::nullopt;
  return pair_flags(*words);
}

// A Modelfile value as Ollama's parser takes it (parser/parser.go unquote): trimmed of spaces
// and tabs, then one pair of enclosing """ or " removed; a value that opens a quote it does not
// close would run on into the next line: nullopt.
inline std::optional<std::string> ollama_value(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  if (v.empty()) return std::nullopt;
  if (v.starts_with("\"\"\"")) {
    if (v.size() < 6 || !v.ends_with("\"\"\"")) return std::nullopt;
    return std::string(v.substr(3, v.size() - 6));
  }
  if (v.front() == '"') {
    if (v.size() < 2 || v.back() != '"') return std::nullopt;
    return std::string(v.substr(1, v.size() - 2));
  }
  return std::string(v);
}

// The Ollama Modelfile (FROM takes the rest of its line, PARAMETER a name and a value) and the
// environment file (NAME=value lines).
inline std::optional<Settings> parse_modelfile(const std::string& modelfile, const std::string& env) {
  if (has_control_character(modelfile) || has_control_character(env)) return std::nullopt;
  Settings out;
  std::istringstream in(modelfile);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("FROM ", 0) == 0) {
      auto v = ollama_value(line.substr(5));
      if (!v) return std::nullopt;
      out.emplace_back("FROM", *v);
      continue;
    }
    std::istringstream words(line);
    std::string op, name, value, extra;
    words >> op >> name >> value;
    if (op != "PARAMETER" || name.empty() || value.empty() || (words >> extra)) return std::nullopt;
    out.emplace_back(name, value);
  }
  std::istringstream ein(env);
  for (std::string line; std::getline(ein, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos || eq == 0) return std::nullopt;
    for (char c : line.substr(0, eq))
      if (!(std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_')) return std::nullopt;
    out.emplace_back(line.substr(0, eq), line.substr(eq + 1));
  }
  return out;
}

}  // namespace trilemma::testing
