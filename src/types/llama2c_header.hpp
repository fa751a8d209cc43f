// The header of a llama2.c checkpoint (run.c's Config): seven little-endian int32 at byte 0
// (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len; a negative vocab_size
// means an untied classifier follows the weights). Read by the engine's loader and by verify's
// check that a model file has the catalog shape it claims.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "types/result.hpp"

namespace trilemma {

inline constexpr std::size_t k_llama2c_header_bytes = 28;

struct Llama2cHeader {
  std::uint64_t dim = 0, hidden_dim = 0, layers = 0, heads = 0, kv_heads = 0, vocab = 0, seq_len = 0;
  bool tied = true;  // vocab_size > 0: the classifier is the embedding
};

// The header of `bytes` (the file's first bytes, at least k_llama2c_header_bytes), checked:
// every field > 0 (vocab by magnitude), heads dividing dim into even head sizes, kv_heads
// dividing heads. Errors name `file` and the byte of the field ("header.n_heads: ...").
Result<Llama2cHeader> parse_llama2c_header(std::span<const std::byte> bytes, const std::string& file);

}  // namespace trilemma
