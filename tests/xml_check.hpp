// A small well-formedness check for the XML the tool writes (JUnit reports, SVG plots): tags
// nest and balance, attribute quotes pair, text holds no raw '<', '>' or bare '&'. And a counter
// of elements.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace trilemma::testing {

// Checks that tags nest and balance and that text holds no raw '<' or a bare '&'. Returns "" or
// the first problem.
inline std::string xml_problem(const std::string& xml) {
  std::vector<std::string> stack;
  std::size_t i = 0;
  if (xml.rfind("<?xml", 0) == 0) i = xml.find("?>") + 2;
  while (i < xml.size()) {
    if (xml[i] == '<') {
      const auto close = xml.find('>', i);
      if (close == std::string::npos) return "unterminated tag";
      std::string tag = xml.substr(i + 1, close - i - 1);
      for (std::size_t q = 0, n = 0; q < tag.size(); ++q) {  // attribute values hold no raw < or "
        if (tag[q] == '"') ++n;
        if (tag[q] == '<') return "raw < inside a tag";
        if (q + 1 == tag.size() && n % 2) return "unbalanced quotes in <" + tag + ">";
      }
      const bool self_closing = !tag.empty() && tag.back() == '/';
      if (tag[0] == '/') {
        const std::string name = tag.substr(1);
        if (stack.empty() || stack.back() != name) return "</" + name + "> closes " + (stack.empty() ? "nothing" : stack.back());
        stack.pop_back();
      } else if (!self_closing) {
        stack.push_back(tag.substr(0, tag.find_first_of(" \n")));
      }
      i = close + 1;
    } else {
      if (xml[i] == '&') {
        const auto semi = xml.find(';', i);
        const std::string entity = xml.substr(i, semi - i + 1);
        if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;" && entity != "&apos;")
          return "bare & in text";
      }
      if (xml[i] == '>') return "raw > in text";
      ++i;
    }
  }
  return stack.empty() ? "" : "unclosed <" + stack.back() + ">";
}

// Checks that every character is one XML 1.0 allows (its Char production: tab, newline, carriage
// return, U+0020-U+D7FF, U+E000-U+FFFD, U+10000-U+10FFFF) in well-formed UTF-8. Returns "" or the
// first offending byte offset.
inline std::string xml_char_problem(const std::string& xml) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(xml[k]); };
  for (std::size_t i = 0; i < xml.size();) {
    const unsigned char c = byte(i);
    std::size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (n == 0 || c > 0xF4 || i + n > xml.size()) return "invalid UTF-8 at " + std::to_string(i);
    std::uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (std::size_t k = 1; k < n; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80) return "invalid UTF-8 at " + std::to_string(i);
      cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    const std::uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n]) return "overlong UTF-8 at " + std::to_string(i);
    const bool allowed = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
                         (cp >= 0x10000 && cp <= 0x10FFFF);
    if (!allowed) return "character U+" + std::to_string(cp) + " (decimal) not allowed in XML at " + std::to_string(i);
    i += n;
  }
  return "";
}

// How many times `what` occurs in `s` (elements of a class in an SVG, cells in a grid).
inline std::size_t count_of(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace trilemma::testing
