// Two vocabulary kinds. (1) SentencePiece-style BPE as llama2.c run.c implements it: a vocabulary of pieces with merge
// scores; encode() looks up each UTF-8 code point (bytes without a piece fall back to the
// byte tokens <0x00>..<0xFF>), then repeatedly merges the adjacent pair whose concatenation is
// a piece with the highest score. A " " prefix is added before non-empty text, as
// SentencePiece's add_dummy_prefix. Pieces are stored with real spaces: GGUF's U+2581 "▁" is
// mapped to " " on load. (2) GPT-2-style byte-level BPE with merges and a pre-tokenizer
// (GGUF model "gpt2": Llama 3, Qwen), byte_level_bpe.hpp; its pieces keep the GGUF spelling.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/gguf/gguf_file.hpp"
#include "engine/gguf/gguf_writer.hpp"
#include "engine/tokenizer/byte_level_bpe.hpp"
#include "types/result.hpp"

namespace trilemma::engine {

class Tokenizer {
 public:
  // llama2.c tokenizer.bin: int32 max_token_length, then per token float32 score, int32
  // length, bytes. Reads every entry to the end of the file; BOS 1, EOS 2.
  static Result<Tokenizer> load_llama2c(const std::filesystem::path& path);
  // tokenizer.ggml.tokens / scores / token_type / bos_token_id / eos_token_id / add_bos_token;
  // model "llama", or "gpt2" with tokenizer.ggml.merges and tokenizer.ggml.pre.
  static Result<Tokenizer> from_gguf(const gguf::GgufFile& file);
  // A byte-level BPE vocabulary from parts, as the writer stores them (GGUF spelling).
  static Tokenizer byte_level(std::vector<std::string> pieces, std::vector<std::int32_t> types, ByteLevelBpe bpe, int bos,
                              int eos, bool add_bos);
  // <unk>, <s>, </s>, 256 byte tokens, then placeholders "<tN>" up to `vocab`: for synthetic
  // models, which have no trained vocabulary. REQUIRES: vocab >= 259.
  static Tokenizer synthetic(int vocab);
  // From parts, as the writer stores them. REQUIRES: pieces.size() == scores.size().
  static Tokenizer from_pieces(std::vector<std::string> pieces, std::vector<float> scores, std::vector<std::int32_t> types,
                               int bos, int eos);

  std::vector<int> encode(std::string_view text, bool bos, bool eos) const;
  // The text of `token` following `prev` (the leading space after BOS is dropped, byte
  // tokens become their byte).
  std::string decode(int prev, int token) const;

  int vocab_size() const { return int(m_pieces.size()); }
  int bos() const { return m_bos; }
  int eos() const { return m_eos; }
  // Whether a prompt starts with BOS (the file's add_bos_token, else the kind's default).
  bool add_bos() const { return m_add_bos; }
  // nullptr for a SentencePiece vocabulary.
  const ByteLevelBpe* bpe() const { return m_bpe.get(); }
  // The tokenizer.ggml.* keys of this vocabulary.
  void write_to(gguf::GgufWriter& w) const;
  // GGUF spelling of the vocabulary (" " -> "▁"), scores and token types, for the writer.
  std::vector<std::string> gguf_pieces() const;
  const std::vector<float>& scores() const { return m_scores; }
  const std::vector<std::int32_t>& token_types() const { return m_types; }

 private:
  void index();
  int lookup(std::string_view piece) const;
  // Merges tokens[first, end) in place by run.c's rule (best score first, leftmost on ties).
  void merge_pairs(std::vector<int>& tokens, std::size_t first) const;

  std::vector<std::string> m_pieces;
  std::vector<float> m_scores;
  std::vector<std::int32_t> m_types;  // GGUF token types: 1 normal, 2 unknown, 3 control, 6 byte
  std::unordered_map<std::string, int> m_ids;
  int m_byte_ids[256];
  int m_bos = 1, m_eos = 2, m_unk = 0;
  bool m_add_bos = true;
  std::shared_ptr<const ByteLevelBpe> m_bpe;
};

}  // namespace trilemma::engine
