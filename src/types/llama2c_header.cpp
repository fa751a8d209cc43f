#include "types/llama2c_header.hpp"

#include <array>
#include <cstdlib>
#include <cstring>

namespace trilemma {

Result<Llama2cHeader> parse_llama2c_header(std::span<const std::byte> bytes, const std::string& file) {
  if (bytes.size() < k_llama2c_header_bytes)
    return make_error(ErrorKind::input, file, "byte 0",
                      "header: needs " + std::to_string(k_llama2c_header_bytes) + " bytes, file has " + std::to_string(bytes.size()));
  std::array<std::int32_t, 7> h{};
  std::memcpy(h.data(), bytes.data(), k_llama2c_header_bytes);
  static constexpr std::array<const char*, 7> k_fields = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
  for (std::size_t i = 0; i < h.size(); ++i) {
    const std::int64_t v = i == 5 ? std::abs(std::int64_t(h[i])) : h[i];
    if (v <= 0)
      return make_error(ErrorKind::input, file, "byte " + std::to_string(4 * i),
                        std::string("header.") + k_fields[i] + ": must be > 0, got " + std::to_string(h[i]));
  }
  Llama2cHeader out;
  out.dim = std::uint64_t(h[0]), out.hidden_dim = std::uint64_t(h[1]), out.layers = std::uint64_t(h[2]);
  out.heads = std::uint64_t(h[3]), out.kv_heads = std::uint64_t(h[4]);
  out.vocab = std::uint64_t(std::abs(std::int64_t(h[5]))), out.seq_len = std::uint64_t(h[6]);
  out.tied = h[5] > 0;
  if (out.dim % out.heads != 0 || (out.dim / out.heads) % 2 != 0)
    return make_error(ErrorKind::input, file, "byte 12", "header.n_heads: must divide dim into even head sizes");
  if (out.kv_heads > out.heads || out.heads % out.kv_heads != 0)
    return make_error(ErrorKind::input, file, "byte 16", "header.n_kv_heads: must divide n_heads");
  return out;
}

}  // namespace trilemma
