#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "types/llama2c_header.hpp"

using namespace trilemma;

namespace {
std::vector<std::byte> header_bytes(std::initializer_list<std::int32_t> fields) {
  std::vector<std::byte> out(fields.size() * 4);
  std::size_t at = 0;
  for (std::int32_t v : fields) std::memcpy(out.data() + 4 * at++, &v, 4);
  return out;
}
}  // namespace

TEST_CASE("types::parse_llama2c_header: stories260K's shape, the tie flag, and each refusal names its field", "[types]") {
  auto h = parse_llama2c_header(header_bytes({64, 172, 5, 8, 4, 512, 512}), "a.bin");
  REQUIRE(h.ok());
  CHECK(h->dim == 64);
  CHECK(h->hidden_dim == 172);
  CHECK(h->layers == 5);
  CHECK(h->heads == 8);
  CHECK(h->kv_heads == 4);
  CHECK(h->vocab == 512);
  CHECK(h->seq_len == 512);
  CHECK(h->tied);
  h = parse_llama2c_header(header_bytes({64, 172, 5, 8, 4, -512, 512}), "a.bin");
  REQUIRE(h.ok());
  CHECK(h->vocab == 512);
  CHECK_FALSE(h->tied);

  const auto refused = [](std::initializer_list<std::int32_t> fields) {
    auto r = parse_llama2c_header(header_bytes(fields), "a.bin");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().to_string().find("a.bin") != std::string::npos);
    return r.error().message;
  };
  CHECK(refused({64, -172, 5, 8, 4, 512, 512}) == "header.hidden_dim: must be > 0, got -172");
  CHECK(refused({64, 172, 5, 0, 4, 512, 512}) == "header.n_heads: must be > 0, got 0");
  CHECK(refused({64, 172, 5, 6, 3, 512, 512}) == "header.n_heads: must divide dim into even head sizes");
  CHECK(refused({64, 172, 5, 8, 3, 512, 512}) == "header.n_kv_heads: must divide n_heads");
  CHECK(refused({64, 172, 5}) == "header: needs 28 bytes, file has 12");
}
