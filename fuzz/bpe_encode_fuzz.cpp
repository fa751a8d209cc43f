// The byte-level BPE encoder (GPT-2, Llama 3, Qwen 2 pre-tokenizers) on any text and any merge
// list: the input's first part picks the pre-tokenizer and builds merges over a vocabulary of the
// 256 byte stand-ins plus every merge's result, the rest is the text. Oracle: the words the
// pre-tokenizer cuts put back together are the text (as llama.cpp decodes it: invalid UTF-8 as
// U+FFFD); every id is in the vocabulary; and because every byte has a token, the tokens spell
// the text back exactly.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/tokenizer/byte_level_bpe.hpp"
#include "engine/tokenizer/pre_tokenizer.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "engine/tokenizer/unicode_classes.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

namespace {


// The text as the pre-tokenizer sees it: decoded as llama.cpp decodes UTF-8 (a byte that does
// not start a sequence with its continuation bytes is U+FFFD, one byte consumed; overlong forms
// are taken as written) and encoded again.
std::string as_decoded(const std::string& s) {
  std::string out;
  for (const char32_t cp : engine::unicode::code_points(s)) engine::unicode::append_utf8(cp, out);
  return out;
}

// Strictly well-formed UTF-8 (RFC 3629): then the pre-tokenizer's words are the text's bytes.
bool well_formed(const std::string& s) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = b(i);
    const std::size_t n = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3 : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k)
      if ((b(i + k) & 0xC0) != 0x80) return false;
    if ((c == 0xE0 && b(i + 1) < 0xA0) || (c == 0xED && b(i + 1) >= 0xA0) || (c == 0xF0 && b(i + 1) < 0x90) || (c == 0xF4 && b(i + 1) >= 0x90))
      return false;
    i += n;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const char* family = in.PickValueInArray({"gpt2", "llama3", "qwen2", "llama-bpe", "default"});
  const auto pre = engine::find_pre_tokenizer(family);
  if (!pre) return 0;
  // The vocabulary: every byte's stand-in, then each merge's result (GGUF spelling).
  std::vector<std::string> pieces;
  for (int b = 0; b < 256; ++b) pieces.push_back(engine::ByteLevelBpe::from_bytes(std::string(1, char(b))));
  std::vector<std::string> merges;
  const int n = in.ConsumeIntegralInRange<int>(0, 48);
  for (int i = 0; i < n; ++i) {
    const auto& left = pieces[in.ConsumeIntegralInRange<std::size_t>(0, pieces.size() - 1)];
    const auto& right = pieces[in.ConsumeIntegralInRange<std::size_t>(0, pieces.size() - 1)];
    merges.push_back(left + " " + right);
    pieces.push_back(left + right);
  }
  const std::string text = in.ConsumeRemainingBytesAsString();
  const std::string seen = as_decoded(text);
  if (well_formed(text)) FUZZ_CHECK(seen == text);

  std::string joined;
  for (const auto& w : engine::pre_tokenize(*pre, text)) joined += w;
  FUZZ_CHECK(joined == seen);

  std::unordered_map<std::string, int> ids;
  for (std::size_t i = 0; i < pieces.size(); ++i) ids.emplace(pieces[i], int(i));  // a repeated piece keeps its first id
  engine::ByteLevelBpe bpe(family, *pre, merges);
  std::string spelled;
  for (const int id : bpe.encode(text, ids)) {
    FUZZ_CHECK(id >= 0 && id < int(pieces.size()));
    spelled += engine::ByteLevelBpe::to_bytes(pieces[std::size_t(id)]);
  }
  FUZZ_CHECK(spelled == seen);

  // Through the Tokenizer, as the engine calls it: BOS first, ids in range.
  const auto tokenizer = engine::Tokenizer::byte_level(pieces, std::vector<std::int32_t>(pieces.size(), 1), bpe, 0, 1, true);
  const auto tokens = tokenizer.encode(text, true, false);
  FUZZ_CHECK(!tokens.empty() && tokens.front() == 0);
  for (const int id : tokens) FUZZ_CHECK(id >= 0 && id < tokenizer.vocab_size());
  return 0;
}
