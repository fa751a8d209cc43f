#include "engine/tokenizer/tokenizer.hpp"

#include <cstdio>
#include <cstring>
#include <queue>

#include "engine/gguf/mapped_file.hpp"

namespace trilemma::engine {
namespace {

constexpr std::string_view k_space_marker = "\xE2\x96\x81";  // U+2581, SentencePiece's space

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// "<0xNN>" -> NN, or -1.
int byte_piece(std::string_view p) {
  if (p.size() != 6 || p.substr(0, 3) != "<0x" || p[5] != '>') return -1;
  unsigned v = 0;
  if (std::sscanf(std::string(p.substr(3, 2)).c_str(), "%2x", &v) != 1) return -1;
  return int(v);
}

}  // namespace

void Tokenizer::index() {
  m_ids.clear();
  m_ids.reserve(m_pieces.size());
  for (int i = int(m_pieces.size()) - 1; i >= 0; --i) m_ids[m_pieces[std::size_t(i)]] = i;  // first id wins
  std::fill(std::begin(m_byte_ids), std::end(m_byte_ids), -1);
  for (std::size_t i = 0; i < m_pieces.size(); ++i)
    if (const int b = byte_piece(m_pieces[i]); b >= 0 && m_byte_ids[b] < 0) m_byte_ids[b] = int(i);
  if (m_types.size() != m_pieces.size()) {
    m_types.assign(m_pieces.size(), 1);
    for (int b : m_byte_ids)
      if (b >= 0) m_types[std::size_t(b)] = 6;
    for (int id : {m_unk, m_bos, m_eos})
      if (id >= 0 && std::size_t(id) < m_types.size()) m_types[std::size_t(id)] = id == m_unk ? 2 : 3;
  }
}

int Tokenizer::lookup(std::string_view piece) const {
  const auto it = m_ids.find(std::string(piece));
  return it == m_ids.end() ? -1 : it->second;
}

Result<Tokenizer> Tokenizer::load_llama2c(const std::filesystem::path& path) {
  const std::string file = path.string();
  auto mapped = gguf::MappedFile::open(path);
  if (!mapped) return mapped.error();
  const auto bytes = (*mapped)->bytes();
  std::size_t pos = 0;
  const auto read_i32 = [&](std::int32_t& v) {
    if (bytes.size() - pos < 4) return false;
    std::memcpy(&v, bytes.data() + pos, 4);
    pos += 4;
    return true;
  };
  std::int32_t max_len = 0;
  if (!read_i32(max_len) || max_len <= 0)
    return make_error(ErrorKind::input, file, "byte 0", "max_token_length: missing or not > 0");
  Tokenizer t;
  while (pos < bytes.size()) {
    const std::size_t at = pos;
    const std::string field = "tokens[" + std::to_string(t.m_pieces.size()) + "]";
    float score = 0;
    std::int32_t len = 0;
    if (bytes.size() - pos < 8) return make_error(ErrorKind::input, file, "byte " + std::to_string(at), field + ": truncated");
    std::memcpy(&score, bytes.data() + pos, 4);
    pos += 4;
    read_i32(len);
    if (len < 0 || len > max_len || std::size_t(len) > bytes.size() - pos)
      return make_error(ErrorKind::input, file, "byte " + std::to_string(at + 4),
                        field + ".length: " + std::to_string(len) + " is outside 0..max_token_length or past the end");
    t.m_pieces.emplace_back(reinterpret_cast<const char*>(bytes.data() + pos), std::size_t(len));
    t.m_scores.push_back(score);
    pos += std::size_t(len);
  }
  if (t.m_pieces.size() < 3) return make_error(ErrorKind::input, file, "", "vocabulary: fewer than 3 tokens");
  t.index();
  return t;
}

namespace {

// tokenizer.ggml.merges and tokenizer.ggml.pre of a "gpt2" vocabulary.
Result<ByteLevelBpe> byte_level_rules(const gguf::GgufFile& file) {
  auto merges = file.get_string_array("tokenizer.ggml.merges");
  if (!merges) return make_error(ErrorKind::input, file.name(), "metadata[\"tokenizer.ggml.merges\"]", "missing (a gpt2 vocabulary needs its merges)");
  const std::string pre_name = file.get_string("tokenizer.ggml.pre").value_or("default");  // llama.cpp's fallback
  const auto pre = find_pre_tokenizer(pre_name);
  if (!pre)
    return make_error(ErrorKind::input, file.name(), "metadata[\"tokenizer.ggml.pre\"]",
                      "pre-tokenizer \"" + pre_name + "\" is not supported (supported: " + pre_tokenizer_names() + ")");
  return ByteLevelBpe(pre_name, *pre, std::move(*merges));
}

}  // namespace

Result<Tokenizer> Tokenizer::from_gguf(const gguf::GgufFile& file) {
  const auto model = file.get_string("tokenizer.ggml.model");
  if (model != "llama" && model != "gpt2")
    return make_error(ErrorKind::input, file.name(), "metadata[\"tokenizer.ggml.model\"]",
                      "\"" + model.value_or("") + "\" is not supported (llama: SentencePiece BPE; gpt2: byte-level BPE)");
  auto pieces = file.get_string_array("tokenizer.ggml.tokens");
  if (!pieces || pieces->size() < 3)
    return make_error(ErrorKind::input, file.name(), "metadata[\"tokenizer.ggml.tokens\"]", "missing, or fewer than 3 tokens");
  std::vector<std::int32_t> types;
  if (const auto t = file.get_int_array("tokenizer.ggml.token_type"); t && t->size() == pieces->size())
    types.assign(t->begin(), t->end());
  const auto id = [&](const char* key, int fallback) {
    const auto v = file.get_uint(key);
    return v && *v < pieces->size() ? int(*v) : fallback;
  };
  const auto add_bos = file.get_bool("tokenizer.ggml.add_bos_token");
  // Read before `pieces` is moved into a by-value parameter: argument order is unspecified
  // (aarch64's GCC moved it first, and every id fell back to its default).
  const bool byte_level_bpe = model == "gpt2";
  const int bos = id("tokenizer.ggml.bos_token_id", byte_level_bpe ? 0 : 1);
  const int eos = id("tokenizer.ggml.eos_token_id", byte_level_bpe ? 0 : 2);
  if (byte_level_bpe) {
    TRILEMMA_TRY(rules, byte_level_rules(file));
    const bool bos_default = rules.pre().add_bos;
    return byte_level(std::move(*pieces), std::move(types), std::move(rules), bos, eos, add_bos.value_or(bos_default));
  }
  auto scores = file.get_float_array("tokenizer.ggml.scores").value_or(std::vector<float>(pieces->size(), 0.0f));
  if (scores.size() != pieces->size())
    return make_error(ErrorKind::input, file.name(), "metadata[\"tokenizer.ggml.scores\"]", "length differs from tokens");
  for (auto& p : *pieces) p = replace_all(std::move(p), k_space_marker, " ");
  Tokenizer t = from_pieces(std::move(*pieces), std::move(scores), std::move(types), bos, eos);
  t.m_add_bos = add_bos.value_or(true);
  return t;
}

Tokenizer Tokenizer::byte_level(std::vector<std::string> pieces, std::vector<std::int32_t> types, ByteLevelBpe bpe, int bos,
                                int eos, bool add_bos) {
  Tokenizer t;
  t.m_scores.assign(pieces.size(), 0.0f);
  t.m_pieces = std::move(pieces);
  t.m_types = std::move(types);
  t.m_bos = bos;
  t.m_eos = eos;
  t.m_unk = -1;
  t.m_add_bos = add_bos;
  t.m_bpe = std::make_shared<const ByteLevelBpe>(std::move(bpe));
  t.index();
  return t;
}

Tokenizer Tokenizer::from_pieces(std::vector<std::string> pieces, std::vector<float> scores, std::vector<std::int32_t> types,
                                 int bos, int eos) {
  Tokenizer t;
  t.m_pieces = std::move(pieces);
  t.m_scores = std::move(scores);
  t.m_types = std::move(types);
  t.m_bos = bos;
  t.m_eos = eos;
  t.index();
  return t;
}

Tokenizer Tokenizer::synthetic(int vocab) {
  std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
  char buf[16];
  for (int b = 0; b < 256; ++b) {
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    pieces.emplace_back(buf);
  }
  for (int i = int(pieces.size()); i < vocab; ++i) pieces.push_back("<t" + std::to_string(i) + ">");
  std::vector<float> scores(pieces.size(), 0.0f);
  return from_pieces(std::move(pieces), std::move(scores), {}, 1, 2);
}

// run.c's rule: merge the best-scoring adjacent pair (the leftmost among equals) until no pair
// merges. run.c rescans every pair after each merge (quadratic: 80 KB of text took minutes);
// here the symbols are a linked list and the candidate pairs a heap ordered by score, then
// position, so each merge costs a log. A popped pair whose symbols changed since it was
// pushed is stale and skipped.
void Tokenizer::merge_pairs(std::vector<int>& tokens, std::size_t first) const {
  const std::size_t n = tokens.size() - first;
  if (n < 2) return;
  struct Symbol {
    int id;
    std::ptrdiff_t prev, next;  // -1 at the ends
    std::uint32_t version = 0;
  };
  std::vector<Symbol> sym(n);
  for (std::size_t i = 0; i < n; ++i) sym[i] = {tokens[first + i], std::ptrdiff_t(i) - 1, i + 1 < n ? std::ptrdiff_t(i + 1) : -1};
  struct Candidate {
    float score;
    std::size_t left, right;
    std::uint32_t left_version, right_version;
    int id;
    bool operator<(const Candidate& o) const {  // the heap's top: highest score, then leftmost
      return score != o.score ? score < o.score : left > o.left;
    }
  };
  std::priority_queue<Candidate> heap;
  std::string merged;
  auto push = [&](std::ptrdiff_t l, std::ptrdiff_t r) {
    if (l < 0 || r < 0) return;
    merged = m_pieces[std::size_t(sym[std::size_t(l)].id)];
    merged += m_pieces[std::size_t(sym[std::size_t(r)].id)];
    if (const int id = lookup(merged); id >= 0)
      heap.push({m_scores[std::size_t(id)], std::size_t(l), std::size_t(r), sym[std::size_t(l)].version, sym[std::size_t(r)].version, id});
  };
  for (std::size_t i = 0; i + 1 < n; ++i) push(std::ptrdiff_t(i), std::ptrdiff_t(i + 1));
  constexpr std::uint32_t k_dead = 0xffffffffu;
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    Symbol &l = sym[c.left], &r = sym[c.right];
    if (l.version != c.left_version || r.version != c.right_version || l.next != std::ptrdiff_t(c.right)) continue;
    l.id = c.id;
    l.version += 1;
    r.version = k_dead;
    l.next = r.next;
    if (r.next >= 0) sym[std::size_t(r.next)].prev = std::ptrdiff_t(c.left);
    push(l.prev, std::ptrdiff_t(c.left));
    push(std::ptrdiff_t(c.left), l.next);
  }
  std::size_t out = first;
  for (std::ptrdiff_t i = 0; i >= 0; i = sym[std::size_t(i)].next) tokens[out++] = sym[std::size_t(i)].id;
  tokens.resize(out);
}

std::vector<int> Tokenizer::encode(std::string_view text, bool bos, bool eos) const {
  std::vector<int> tokens;
  if (bos) tokens.push_back(m_bos);
  if (m_bpe) {
    const auto words = m_bpe->encode(text, m_ids);
    tokens.insert(tokens.end(), words.begin(), words.end());
    if (eos) tokens.push_back(m_eos);
    return tokens;
  }
  const std::size_t first = tokens.size();
  // SentencePiece's rule, as llama.cpp applies it: spaces are U+2581 (stored here as ' '), a
  // space is prefixed, and a vocabulary without a space piece falls back to U+2581's UTF-8
  // bytes, not to the byte 0x20.
  const int space = lookup(" ");
  auto push_space = [&] {
    if (space >= 0) return tokens.push_back(space);
    for (const unsigned char b : std::string_view("\xE2\x96\x81")) tokens.push_back(m_byte_ids[b] >= 0 ? m_byte_ids[b] : m_unk);
  };
  if (!text.empty()) push_space();
  // One token per code point, or one per byte when the code point has no piece.
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == ' ') {
      push_space();
      ++i;
      continue;
    }
    std::size_t len = 1;
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c & 0xE0) == 0xC0) len = 2;
    else if ((c & 0xF0) == 0xE0) len = 3;
    else if ((c & 0xF8) == 0xF0) len = 4;
    len = std::min(len, text.size() - i);
    if (const int id = lookup(text.substr(i, len)); id >= 0) {
      tokens.push_back(id);
    } else {
      for (std::size_t k = 0; k < len; ++k) {
        const int b = m_byte_ids[static_cast<unsigned char>(text[i + k])];
        tokens.push_back(b >= 0 ? b : m_unk);
      }
    }
    i += len;
  }
  merge_pairs(tokens, first);
  if (eos) tokens.push_back(m_eos);
  return tokens;
}

std::string Tokenizer::decode(int prev, int token) const {
  if (token < 0 || token >= vocab_size()) return {};
  std::string_view piece = m_pieces[std::size_t(token)];
  if (m_bpe) return m_types[std::size_t(token)] == 3 ? std::string() : ByteLevelBpe::to_bytes(piece);  // control tokens print nothing
  if (prev == m_bos && !piece.empty() && piece[0] == ' ') piece.remove_prefix(1);
  if (const int b = byte_piece(piece); b >= 0) return std::string(1, char(b));
  return std::string(piece);
}

std::vector<std::string> Tokenizer::gguf_pieces() const {
  if (m_bpe) return m_pieces;
  std::vector<std::string> out;
  out.reserve(m_pieces.size());
  for (std::size_t i = 0; i < m_pieces.size(); ++i) {
    std::string p = m_pieces[i];
    // llama2.c's tokenizer.bin spells BOS/EOS "\n<s>\n" and "\n</s>\n" (its decoder prints
    // them that way); a GGUF vocabulary names control tokens bare, as llama.cpp prints them.
    if (i < m_types.size() && m_types[i] == 3) {
      const auto first = p.find_first_not_of(" \t\r\n"), last = p.find_last_not_of(" \t\r\n");
      if (first != std::string::npos) p = p.substr(first, last - first + 1);
    }
    out.push_back(replace_all(p, " ", k_space_marker));
  }
  return out;
}

void Tokenizer::write_to(gguf::GgufWriter& w) const {
  w.add_string("tokenizer.ggml.model", m_bpe ? "gpt2" : "llama");
  if (m_bpe) {
    w.add_string("tokenizer.ggml.pre", m_bpe->pre_name());
    w.add_string_array("tokenizer.ggml.merges", m_bpe->merges());
  }
  w.add_string_array("tokenizer.ggml.tokens", gguf_pieces());
  if (!m_bpe) w.add_float_array("tokenizer.ggml.scores", m_scores);
  w.add_int32_array("tokenizer.ggml.token_type", m_types);
  w.add_uint32("tokenizer.ggml.bos_token_id", std::uint32_t(m_bos));
  w.add_uint32("tokenizer.ggml.eos_token_id", std::uint32_t(m_eos));
  if (!m_bpe) w.add_uint32("tokenizer.ggml.unknown_token_id", std::uint32_t(m_unk));
  w.add_bool("tokenizer.ggml.add_bos_token", m_add_bos);
}

}  // namespace trilemma::engine
