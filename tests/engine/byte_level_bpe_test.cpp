// GPT-2-style byte-level BPE: the pre-tokenizers against hand-worked splits of their regexes,
// the byte stand-ins, merge order, ignore_merges, the GGUF round trip and bad vocabularies.
// Parity with llama.cpp on the same file: interop_llama_cpp_test.
#include <catch2/catch.hpp>

#include "engine/gguf/gguf_file.hpp"
#include "engine/gguf/gguf_writer.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "engine/tokenizer/unicode_classes.hpp"

using namespace trilemma;
using namespace trilemma::engine;
using Words = std::vector<std::string>;

namespace {

PreTokenizer pre(std::string_view name) {
  const auto p = find_pre_tokenizer(name);
  REQUIRE(p.has_value());
  return *p;
}

// A vocabulary of the 256 byte stand-ins, then one token per merge, then <s> and </s>.
Tokenizer vocabulary(std::string_view pre_name, std::vector<std::string> merges) {
  std::vector<std::string> pieces;
  for (int b = 0; b < 256; ++b) pieces.push_back(ByteLevelBpe::from_bytes(std::string(1, char(b))));
  for (const auto& m : merges) pieces.push_back(m.substr(0, m.find(' ')) + m.substr(m.find(' ') + 1));
  pieces.push_back("<s>");
  pieces.push_back("</s>");
  std::vector<std::int32_t> types(pieces.size(), 1);
  types[types.size() - 2] = types[types.size() - 1] = 3;
  const int bos = int(pieces.size()) - 2;
  return Tokenizer::byte_level(std::move(pieces), std::move(types), ByteLevelBpe(std::string(pre_name), pre(pre_name), merges),
                               bos, bos + 1, true);
}

}  // namespace

TEST_CASE("unicode classes: letters, numbers and white space as \\p{L}, \\p{N}, \\s", "[tokenizer]") {
  using namespace unicode;
  for (char32_t c : {U'a', U'Z', U'é', U'ß', U'東', U'Ж', U'ا'}) CHECK(is_letter(c));
  for (char32_t c : {U'0', U'9', U'٣', U'½', U'Ⅻ'}) CHECK(is_number(c));
  for (char32_t c : {U' ', U'\t', U'\n', U'\r', char32_t(0xA0), char32_t(0x3000)}) CHECK(is_whitespace(c));
  for (char32_t c : {U'!', U'🙂', U'_', U'-'}) CHECK((!is_letter(c) && !is_number(c) && !is_whitespace(c)));
  CHECK(code_points("a\xC3\xA9\xF0\x9F\x99\x82") == std::vector<char32_t>{U'a', U'é', U'🙂'});
  CHECK(code_points("a\xC3") == std::vector<char32_t>{U'a', 0xFFFD});  // truncated sequence
  CHECK(code_points("\x80z") == std::vector<char32_t>{0xFFFD, U'z'});  // a stray continuation byte
}

TEST_CASE("pre_tokenize: gpt2, llama3 and qwen2 cut text as their regexes do", "[tokenizer]") {
  CHECK(pre_tokenize(pre("gpt-2"), "Hello world's 123  foo!!\n") ==
        Words{"Hello", " world", "'s", " 123", " ", " foo", "!!", "\n"});
  CHECK(pre_tokenize(pre("gpt-2"), "DON'T") == Words{"DON", "'", "T"});  // gpt2's contractions are lower case
  CHECK(pre_tokenize(pre("llama-bpe"), "Hello world's 12345  foo!!\n\nbar") ==
        Words{"Hello", " world", "'s", " ", "123", "45", " ", " foo", "!!\n\n", "bar"});
  CHECK(pre_tokenize(pre("llama-bpe"), "DON'T") == Words{"DON", "'T"});
  CHECK(pre_tokenize(pre("qwen2"), "x 12345") == Words{"x", " ", "1", "2", "3", "4", "5"});
  CHECK(pre_tokenize(pre("llama-bpe"), "caf\xC3\xA9 \xE6\x9D\xB1\xE4\xBA\xAC\xF0\x9F\x99\x82") ==
        Words{"caf\xC3\xA9", " \xE6\x9D\xB1\xE4\xBA\xAC", "\xF0\x9F\x99\x82"});
  // \s*[\r\n]+ takes white space up to its last line break; \s+(?!\S) leaves one space.
  CHECK(pre_tokenize(pre("llama-bpe"), "a  \n \n  b   ") == Words{"a", "  \n \n", " ", " b", "   "});
  CHECK(pre_tokenize(pre("llama-bpe"), "\tword") == Words{"\tword"});  // [^\r\n\p{L}\p{N}]?\p{L}+
  for (const char* name : {"gpt-2", "llama-bpe", "qwen2"}) {  // the words always give back the text
    std::string joined;
    for (const auto& w : pre_tokenize(pre(name), "  It's 2026!\r\n\tGr\xC3\xBC\xC3\x9F" "e,  world 99  ")) joined += w;
    CHECK(joined == "  It's 2026!\r\n\tGr\xC3\xBC\xC3\x9F" "e,  world 99  ");
  }
  CHECK_FALSE(find_pre_tokenizer("no-such-pre").has_value());
}

TEST_CASE("byte-level BPE: stand-ins, merge ranks, ignore_merges, decode", "[tokenizer]") {
  CHECK(ByteLevelBpe::from_bytes(" ") == "\xC4\xA0");    // U+0120 'Ġ', GPT-2's space
  CHECK(ByteLevelBpe::from_bytes("\n") == "\xC4\x8A");   // U+010A 'Ċ'
  CHECK(ByteLevelBpe::from_bytes("A") == "A");
  for (int b = 0; b < 256; ++b) CHECK(ByteLevelBpe::to_bytes(ByteLevelBpe::from_bytes(std::string(1, char(b)))) == std::string(1, char(b)));

  // Ranks decide, not lengths: "l l" (rank 0) merges before "e l" (rank 1), so "ell" is e + ll.
  const Tokenizer t = vocabulary("gpt-2", {"l l", "e l", "h e", "he ll", "ll o"});
  auto id = [&](std::string_view piece) {
    for (int i = 0; i < t.vocab_size(); ++i)
      if (t.gguf_pieces()[std::size_t(i)] == piece) return i;
    FAIL("no piece " << piece);
    return -1;
  };
  CHECK(t.encode("hello", false, false) == std::vector<int>{id("hell"), id("o")});
  CHECK(t.encode("ello", false, false) == std::vector<int>{id("e"), id("llo")});
  CHECK(t.encode(" hello", true, true) ==
        std::vector<int>{t.bos(), id("\xC4\xA0"), id("hell"), id("o"), t.eos()});  // " hello" is one gpt2 word
  std::string text;
  int prev = t.bos();
  for (int tok : t.encode("hello, world\n", true, false)) text += t.decode(prev, tok), prev = tok;
  CHECK(text == "hello, world\n");  // BOS prints nothing

  // One 200 000-letter word (a prompt without spaces): every "l l" pair merges, left to right.
  const auto long_word = t.encode(std::string(200000, 'l'), false, false);
  CHECK(long_word == std::vector<int>(100000, id("ll")));

  // llama3 takes a word that is a whole token as it is; gpt2 merges it by rank.
  const Tokenizer l3 = vocabulary("llama-bpe", {"h e", "l l", "he ll", "l o", "hel lo"});
  const Tokenizer g2 = vocabulary("gpt-2", {"h e", "l l", "he ll", "l o", "hel lo"});
  CHECK(l3.encode("hello", false, false).size() == 1);  // "hello" is a token (hel + lo)
  CHECK(g2.encode("hello", false, false).size() == 2);  // he ll, then no "hell o": hell + o
}

TEST_CASE("byte-level BPE: a GGUF vocabulary round-trips; bad ones are refused by key", "[tokenizer]") {
  const Tokenizer t = vocabulary("qwen2", {"l l", "e l", "h e"});
  gguf::GgufWriter w;
  t.write_to(w);
  const auto file = gguf::GgufFile::parse(w.to_bytes(), "vocab.gguf");
  REQUIRE(file.ok());
  const auto back = Tokenizer::from_gguf(*file);
  REQUIRE(back.ok());
  REQUIRE(back->bpe() != nullptr);
  CHECK(back->bpe()->pre_name() == "qwen2");
  CHECK(back->add_bos());
  CHECK(back->encode("hello 2026", true, false) == t.encode("hello 2026", true, false));

  gguf::GgufWriter bad;
  bad.add_string("tokenizer.ggml.model", "gpt2");
  bad.add_string("tokenizer.ggml.pre", "no-such-pre");
  bad.add_string_array("tokenizer.ggml.tokens", {"a", "b", "c"});
  bad.add_string_array("tokenizer.ggml.merges", {"a b"});
  auto f2 = gguf::GgufFile::parse(bad.to_bytes(), "bad.gguf");
  REQUIRE(f2.ok());
  const auto refused = Tokenizer::from_gguf(*f2);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("no-such-pre"));
  CHECK_THAT(refused.error().where, Catch::Contains("tokenizer.ggml.pre"));

  gguf::GgufWriter no_merges;
  no_merges.add_string("tokenizer.ggml.model", "gpt2");
  no_merges.add_string_array("tokenizer.ggml.tokens", {"a", "b", "c"});
  auto f3 = gguf::GgufFile::parse(no_merges.to_bytes(), "nomerges.gguf");
  REQUIRE(f3.ok());
  const auto refused2 = Tokenizer::from_gguf(*f3);
  REQUIRE_FALSE(refused2.ok());
  CHECK_THAT(refused2.error().where, Catch::Contains("tokenizer.ggml.merges"));
}
