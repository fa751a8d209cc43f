#include "engine/tokenizer/byte_level_bpe.hpp"

#include <array>
#include <cstdint>
#include <queue>

#include "engine/tokenizer/unicode_classes.hpp"

namespace trilemma::engine {
namespace {

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves; the other 68 bytes
// (controls, space, DEL, NBSP, soft hyphen, ...) take code points 256, 257, ... in byte order.
struct ByteMap {
  std::array<char32_t, 256> to_cp{};
  std::unordered_map<char32_t, unsigned char> to_byte;
  ByteMap() {
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      to_cp[std::size_t(b)] = printable ? char32_t(b) : next++;
      to_byte[to_cp[std::size_t(b)]] = static_cast<unsigned char>(b);
    }
  }
};

const ByteMap& byte_map() {
  static const ByteMap m;
  return m;
}

}  // namespace

ByteLevelBpe::ByteLevelBpe(std::string pre_name, PreTokenizer pre, std::vector<std::string> merges)
    : m_pre_name(std::move(pre_name)), m_pre(pre), m_merges(std::move(merges)) {
  m_rank.reserve(m_merges.size());
  for (std::size_t i = 0; i < m_merges.size(); ++i) m_rank.emplace(m_merges[i], int(i));  // first listing wins
}

std::string ByteLevelBpe::from_bytes(std::string_view raw) {
  std::string out;
  for (const unsigned char b : raw) unicode::append_utf8(byte_map().to_cp[b], out);
  return out;
}

std::string ByteLevelBpe::to_bytes(std::string_view piece) {
  std::string out;
  for (const char32_t cp : unicode::code_points(piece)) {
    const auto it = byte_map().to_byte.find(cp);
    if (it != byte_map().to_byte.end()) out += char(it->second);
    else unicode::append_utf8(cp, out);
  }
  return out;
}

// Lowest rank first, the leftmost among equals, until no listed merge applies. The symbols
// are a linked list and the candidate pairs a heap ordered by (rank, position), so a long word
// (a prompt of 100 KB without a space is one word) costs n log n, not n^2; a popped pair whose
// symbols changed since it was pushed is stale and skipped.
void ByteLevelBpe::merge_word(std::vector<std::string>& symbols) const {
  const std::size_t n = symbols.size();
  if (n < 2) return;
  std::vector<std::ptrdiff_t> next(n), prev(n);
  std::vector<std::uint32_t> version(n, 0);
  for (std::size_t i = 0; i < n; ++i) prev[i] = std::ptrdiff_t(i) - 1, next[i] = i + 1 < n ? std::ptrdiff_t(i + 1) : -1;
  struct Candidate {
    int rank;
    std::size_t left, right;
    std::uint32_t left_version, right_version;
    bool operator<(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }  // top: lowest rank, leftmost
  };
  std::priority_queue<Candidate> heap;
  std::string key;
  const auto push = [&](std::ptrdiff_t l, std::ptrdiff_t r) {
    if (l < 0 || r < 0) return;
    key.assign(symbols[std::size_t(l)]).append(" ").append(symbols[std::size_t(r)]);
    if (const auto it = m_rank.find(key); it != m_rank.end())
      heap.push({it->second, std::size_t(l), std::size_t(r), version[std::size_t(l)], version[std::size_t(r)]});
  };
  for (std::size_t i = 0; i + 1 < n; ++i) push(std::ptrdiff_t(i), std::ptrdiff_t(i + 1));
  constexpr std::uint32_t k_dead = 0xffffffffu;
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    if (version[c.left] != c.left_version || version[c.right] != c.right_version || next[c.left] != std::ptrdiff_t(c.right)) continue;
    symbols[c.left] += symbols[c.right];
    version[c.left] += 1;
    version[c.right] = k_dead;
    next[c.left] = next[c.right];
    if (next[c.right] >= 0) prev[std::size_t(next[c.right])] = std::ptrdiff_t(c.left);
    push(prev[c.left], std::ptrdiff_t(c.left));
    push(std::ptrdiff_t(c.left), next[c.left]);
  }
  std::size_t out = 0;
  for (std::ptrdiff_t i = 0; i >= 0; i = next[std::size_t(i)], ++out)
    if (out != std::size_t(i)) symbols[out] = std::move(symbols[std::size_t(i)]);  // no self-move
  symbols.resize(out);
}

std::vector<int> ByteLevelBpe::encode(std::string_view text, const std::unordered_map<std::string, int>& ids) const {
  std::vector<int> out;
  std::vector<std::string> symbols;
  for (const std::string& word : pre_tokenize(m_pre, text)) {
    const std::string spelled = from_bytes(word);
    if (m_pre.ignore_merges) {
      if (const auto it = ids.find(spelled); it != ids.end()) {
        out.push_back(it->second);
        continue;
      }
    }
    symbols.clear();
    for (const char32_t cp : unicode::code_points(spelled)) unicode::append_utf8(cp, symbols.emplace_back());
    merge_word(symbols);
    for (const std::string& s : symbols) {
      if (const auto it = ids.find(s); it != ids.end()) {
        out.push_back(it->second);
        continue;
      }
      for (const char32_t cp : unicode::code_points(s)) {  // a piece the vocabulary lacks: its stand-ins
        std::string one;
        unicode::append_utf8(cp, one);
        if (const auto b = ids.find(one); b != ids.end()) out.push_back(b->second);
      }
    }
  }
  return out;
}

}  // namespace trilemma::engine
