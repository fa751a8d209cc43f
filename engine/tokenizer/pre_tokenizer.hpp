// The pre-tokenizers of GPT-2-style byte-level BPE vocabularies: text is cut into words by a
// regex before BPE merges run inside each word. The GGUF key `tokenizer.ggml.pre` names the
// regex; one row per family (pre_tokenizer.cpp) gives its rules and llama.cpp's defaults.
// Regexes (as the Hugging Face tokenizers and llama.cpp spell them):
//   gpt2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   qwen2:  as llama3 with \p{N} (one digit per word)
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trilemma::engine {

struct PreTokenizer {
  std::string_view family;     // gpt2, llama3, qwen2
  bool llama3_rules;           // the llama3/qwen2 alternatives (else gpt2's)
  int max_digits;              // numbers per word: 0 = unbounded
  bool ignore_merges;          // a word that is a whole token is taken as it is (llama.cpp)
  bool add_bos;                // llama.cpp's default when the file has no add_bos_token key
};

// The row for a `tokenizer.ggml.pre` value (llama.cpp's names), or nullopt when unknown.
std::optional<PreTokenizer> find_pre_tokenizer(std::string_view name);
// Names accepted, for messages.
std::string pre_tokenizer_names();

// Cuts UTF-8 text into the words the regex matches (their concatenation is the text, with
// invalid bytes replaced by U+FFFD).
std::vector<std::string> pre_tokenize(const PreTokenizer& pre, std::string_view text);

}  // namespace trilemma::engine
