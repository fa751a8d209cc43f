#include "engine/tokenizer/unicode_classes.hpp"

#include <algorithm>

namespace trilemma::engine::unicode {

extern const CodeRange k_letters[];
extern const std::size_t k_letters_count;
extern const CodeRange k_numbers[];
extern const std::size_t k_numbers_count;
extern const char k_unicode_version[];

namespace {

bool in(const CodeRange* table, std::size_t count, char32_t cp) {
  const CodeRange* end = table + count;
  const CodeRange* it = std::upper_bound(table, end, cp, [](char32_t v, const CodeRange& r) { return v < r.first; });
  return it != table && cp <= (it - 1)->last;
}

// The length of the sequence a lead byte starts, or 0 for a byte that cannot start one.
int sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 0;
}

}  // namespace

std::vector<char32_t> code_points(std::string_view s) {
  std::vector<char32_t> out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    const int n = sequence_length(lead);
    bool ok = n > 0 && i + std::size_t(n) <= s.size();
    char32_t cp = n == 1 ? lead : n == 2 ? lead & 0x1F : n == 3 ? lead & 0x0F : lead & 0x07;
    for (int k = 1; ok && k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + std::size_t(k)]);
      ok = (c & 0xC0) == 0x80;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (!ok) {  // one byte consumed, as llama.cpp does
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += std::size_t(n);
  }
  return out;
}

void append_utf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xC0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += char(0xE0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  } else {
    out += char(0xF0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3F));
    out += char(0x80 | ((cp >> 6) & 0x3F));
    out += char(0x80 | (cp & 0x3F));
  }
}

bool is_letter(char32_t cp) { return in(k_letters, k_letters_count, cp); }
bool is_number(char32_t cp) { return in(k_numbers, k_numbers_count, cp); }

bool is_whitespace(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

std::string_view table_version() { return k_unicode_version; }

}  // namespace trilemma::engine::unicode
