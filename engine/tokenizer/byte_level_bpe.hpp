// GPT-2-style byte-level BPE (GGUF `tokenizer.ggml.model` "gpt2": Llama 3, Qwen, SmolLM, ...),
// as llama.cpp runs it: the pre-tokenizer cuts the text into words; each word's UTF-8 bytes
// are spelled with GPT-2's printable stand-ins (byte b -> one code point, so vocabulary
// strings never hold raw control bytes or spaces); inside a word, the adjacent pair of lowest
// merge rank (the leftmost among equals) merges until no listed merge applies; each piece
// left is a token. With `ignore_merges` (llama3) a word that is itself a token is taken whole.
#pragma once
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/tokenizer/pre_tokenizer.hpp"

namespace trilemma::engine {

class ByteLevelBpe {
 public:
  // merges: "left right" in the vocabulary's spelling, best (rank 0) first.
  ByteLevelBpe(std::string pre_name, PreTokenizer pre, std::vector<std::string> merges);

  // ids: the vocabulary (spelling -> id). Pieces without an id are dropped, as llama.cpp
  // drops them (a vocabulary with all 256 byte stand-ins never has any).
  std::vector<int> encode(std::string_view text, const std::unordered_map<std::string, int>& ids) const;
  // A vocabulary string back to the bytes it stands for (stand-ins outside the 256 are kept).
  static std::string to_bytes(std::string_view piece);
  // Raw bytes in the vocabulary's spelling.
  static std::string from_bytes(std::string_view raw);

  const std::string& pre_name() const { return m_pre_name; }
  const PreTokenizer& pre() const { return m_pre; }
  const std::vector<std::string>& merges() const { return m_merges; }

 private:
  void merge_word(std::vector<std::string>& symbols) const;

  std::string m_pre_name;
  PreTokenizer m_pre;
  std::vector<std::string> m_merges;
  std::unordered_map<std::string, int> m_rank;  // "left right" -> rank
};

}  // namespace trilemma::engine
