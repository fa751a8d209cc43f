// A small well-formedness check for the XML the tool writes (JUnit reports, SVG plots): tags
// nest and balance, attribute quotes pair, text holds no raw '<', '>' or bare '&'. And a counter
// of elements.
#pragma once
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

// How many times `what` occurs in `s` (elements of a class in an SVG, cells in a grid).
inline std::size_t count_of(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace trilemma::testing
