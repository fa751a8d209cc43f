// The Unicode facts the GPT-2-style pre-tokenizers need: UTF-8 to code points and back (as
// llama.cpp reads text: an invalid byte becomes U+FFFD), letters (\p{L}), numbers (\p{N}) and
// white space (\s: the White_Space property). The letter and number ranges are generated
// (scripts/gen-unicode-classes, unicode_classes_data.cpp).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace trilemma::engine::unicode {

struct CodeRange {
  char32_t first, last;
};

std::vector<char32_t> code_points(std::string_view utf8);
void append_utf8(char32_t cp, std::string& out);
bool is_letter(char32_t cp);
bool is_number(char32_t cp);
bool is_whitespace(char32_t cp);
// The Unicode version the letter and number tables were generated from.
std::string_view table_version();

}  // namespace trilemma::engine::unicode
