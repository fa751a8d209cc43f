#include "engine/tokenizer/pre_tokenizer.hpp"

#include <array>

#include "engine/tokenizer/unicode_classes.hpp"

namespace trilemma::engine {
namespace {

struct Named {
  std::string_view name;
  PreTokenizer pre;
};

constexpr PreTokenizer k_gpt2{"gpt2", false, 0, false, false};
constexpr PreTokenizer k_llama3{"llama3", true, 3, true, true};
constexpr PreTokenizer k_qwen2{"qwen2", true, 1, false, false};

// llama.cpp's names for these three families (llama-vocab.cpp); "default" and "gpt-2" are gpt2's.
constexpr std::array k_names = {
    Named{"default", k_gpt2}, Named{"gpt-2", k_gpt2},
    Named{"llama3", k_llama3}, Named{"llama-v3", k_llama3}, Named{"llama-bpe", k_llama3},
    Named{"qwen2", k_qwen2},   Named{"deepseek-r1-qwen", k_qwen2},
};

// A cursor over one text's code points; past either end reads as "nothing" (no class).
class Scanner {
 public:
  explicit Scanner(std::vector<char32_t> cps) : m_cps(std::move(cps)) {}
  std::size_t size() const { return m_cps.size(); }
  bool inside(std::size_t i) const { return i < m_cps.size(); }
  char32_t at(std::size_t i) const { return inside(i) ? m_cps[i] : 0; }
  bool letter(std::size_t i) const { return inside(i) && unicode::is_letter(m_cps[i]); }
  bool number(std::size_t i) const { return inside(i) && unicode::is_number(m_cps[i]); }
  bool space(std::size_t i) const { return inside(i) && unicode::is_whitespace(m_cps[i]); }
  bool newline(std::size_t i) const { return at(i) == U'\r' || at(i) == U'\n'; }
  // [^\s\p{L}\p{N}]: inside the text and none of the three.
  bool other(std::size_t i) const { return inside(i) && !space(i) && !letter(i) && !number(i); }
  std::string word(std::size_t from, std::size_t to) const {
    std::string s;
    for (std::size_t i = from; i < to; ++i) unicode::append_utf8(m_cps[i], s);
    return s;
  }

 private:
  std::vector<char32_t> m_cps;
};

char32_t lower_ascii(char32_t c) { return c >= U'A' && c <= U'Z' ? c + 32 : c; }

// 's 't 're 've 'm 'll 'd at i: the contraction's length, or 0.
std::size_t contraction(const Scanner& s, std::size_t i, bool any_case) {
  if (s.at(i) != U'\'' || !s.inside(i + 1)) return 0;
  const auto c = [&](std::size_t k) { return any_case ? lower_ascii(s.at(k)) : s.at(k); };
  const char32_t a = c(i + 1);
  if (a == U's' || a == U't' || a == U'm' || a == U'd') return 2;
  if (!s.inside(i + 2)) return 0;
  const char32_t b = c(i + 2);
  return (a == U'r' && b == U'e') || (a == U'v' && b == U'e') || (a == U'l' && b == U'l') ? 3 : 0;
}

// The end of the word that starts at i under gpt2's alternatives.
std::size_t gpt2_word(const Scanner& s, std::size_t i) {
  if (const std::size_t n = contraction(s, i, false)) return i + n;
  const std::size_t j = s.at(i) == U' ' ? i + 1 : i;  // the optional leading space
  std::size_t e = j;
  if (s.letter(j)) {
    while (s.letter(e)) ++e;
    return e;
  }
  if (s.number(j)) {
    while (s.number(e)) ++e;
    return e;
  }
  if (s.other(j)) {
    while (s.other(e)) ++e;
    return e;
  }
  return 0;  // white space: the shared rules below
}

// The end of the word that starts at i under llama3's alternatives (qwen2: max_digits 1).
std::size_t llama3_word(const Scanner& s, std::size_t i, int max_digits) {
  if (const std::size_t n = contraction(s, i, true)) return i + n;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (!s.newline(i) && !s.number(i) && (s.letter(i) || s.letter(i + 1))) {
    std::size_t e = i + 1;
    while (s.letter(e)) ++e;
    return e;
  }
  if (s.number(i)) {  // \p{N}{1,max}
    std::size_t e = i;
    while (s.number(e) && e - i < std::size_t(max_digits)) ++e;
    return e;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  const std::size_t j = s.at(i) == U' ' ? i + 1 : i;
  if (s.other(j)) {
    std::size_t e = j;
    while (s.other(e)) ++e;
    while (s.newline(e)) ++e;
    return e;
  }
  // \s*[\r\n]+: the white-space run up to its last line break
  std::size_t e = i, last_break = 0;
  while (s.space(e)) {
    if (s.newline(e)) last_break = e + 1;
    ++e;
  }
  return last_break;
}

// \s+(?!\S)|\s+ at i: a run of white space keeps its last character for the next word when
// something follows it; or a lone character no rule takes.
std::size_t space_word(const Scanner& s, std::size_t i) {
  std::size_t e = i;
  while (s.space(e)) ++e;
  if (e == i) return i + 1;
  if (e - i > 1 && s.inside(e)) return e - 1;
  return e;
}

}  // namespace

std::optional<PreTokenizer> find_pre_tokenizer(std::string_view name) {
  for (const auto& n : k_names)
    if (n.name == name) return n.pre;
  return std::nullopt;
}

std::string pre_tokenizer_names() {
  std::string out;
  for (const auto& n : k_names) out += (out.empty() ? "" : ", ") + std::string(n.name);
  return out;
}

std::vector<std::string> pre_tokenize(const PreTokenizer& pre, std::string_view text) {
  const Scanner s(unicode::code_points(text));
  std::vector<std::string> words;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t end = pre.llama3_rules ? llama3_word(s, i, pre.max_digits == 0 ? 1 << 30 : pre.max_digits) : gpt2_word(s, i);
    if (end == 0) end = space_word(s, i);
    words.push_back(s.word(i, end));
    i = end;
  }
  return words;
}

}  // namespace trilemma::engine
