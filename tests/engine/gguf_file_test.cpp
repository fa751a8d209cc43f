#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>

#include "engine/gguf/gguf_file.hpp"
#include "engine/gguf/gguf_writer.hpp"
#include "gguf_bytes.hpp"

using namespace trilemma;
using namespace trilemma::gguf;
using trilemma::testing::Bytes;

namespace {

std::vector<std::byte> as_bytes(const std::vector<float>& v) {
  std::vector<std::byte> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// A small valid file holding every value type the engine reads and two tensors. The last
// tensor's size is a multiple of the alignment, so every strict prefix lacks data.
std::vector<std::byte> small_file() {
  static const std::vector<std::byte> a = as_bytes({1, 2, 3, 4, 5, 6});               // 3 x 2
  static const std::vector<std::byte> b = as_bytes({-1, -2, -3, -4, -5, -6, -7, -8});  // 8
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_uint32("llama.block_count", 5);
  w.add_int32("neg", -3);
  w.add_uint64("big", 1ull << 40);
  w.add_float32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.add_bool("flag", true);
  w.add_string_array("tokenizer.ggml.tokens", {"<unk>", "a", "bc"});
  const float scores[] = {0.5f, -1.f, 2.f};
  w.add_float_array("tokenizer.ggml.scores", scores);
  const std::int32_t types[] = {2, 1, 1};
  w.add_int32_array("tokenizer.ggml.token_type", types);
  w.add_tensor("a", {3, 2}, TensorType::f32, a);
  w.add_tensor("b", {8}, TensorType::f32, b);
  return w.to_bytes();
}

Error parse_error(std::vector<std::byte> bytes) {
  auto r = GgufFile::parse(std::move(bytes), "t.gguf");
  REQUIRE_FALSE(r.ok());
  CAPTURE(r.error().to_string());
  CHECK(r.error().file == "t.gguf");
  CHECK(r.error().where.rfind("byte ", 0) == 0);
  return r.error();
}

bool mentions(const Error& e, std::string_view s) { return e.message.find(s) != std::string::npos; }

}  // namespace

TEST_CASE("gguf::GgufFile: reads metadata of every type and the tensor table", "[gguf]") {
  auto r = GgufFile::parse(small_file(), "t.gguf");
  REQUIRE(r.ok());
  const GgufFile& f = *r;
  CHECK(f.version() == 3);
  CHECK(f.get_string("general.architecture") == "llama");
  CHECK(f.get_uint("llama.block_count") == 5u);
  CHECK_FALSE(f.get_uint("neg").has_value());
  CHECK(f.get_float("neg") == -3.0);
  CHECK(f.get_uint("big") == (1ull << 40));
  CHECK(f.get_float("llama.attention.layer_norm_rms_epsilon") == Approx(1e-5));
  CHECK(f.get_bool("flag") == true);
  CHECK_FALSE(f.get_string("llama.block_count").has_value());  // wrong type -> nullopt
  CHECK(f.get_string_array("tokenizer.ggml.tokens") == std::vector<std::string>{"<unk>", "a", "bc"});
  CHECK(f.get_float_array("tokenizer.ggml.scores") == std::vector<float>{0.5f, -1.f, 2.f});
  CHECK(f.get_int_array("tokenizer.ggml.token_type") == std::vector<std::int64_t>{2, 1, 1});
  CHECK(f.array_length("tokenizer.ggml.tokens") == 3);
  CHECK(f.array_length("absent") == 0);
  CHECK(f.keys().size() == 9);
  REQUIRE(f.tensors().size() == 2);
  const TensorInfo* a = f.find_tensor("a");
  REQUIRE(a != nullptr);
  CHECK(a->dims == std::vector<std::uint64_t>{3, 2});
  CHECK(a->type == TensorType::f32);
  CHECK(a->elems == 6);
  CHECK(a->bytes == 24);
  CHECK(f.find_tensor("b")->offset == 32);  // aligned to 32
  float v[8];
  const auto data = f.tensor_data(*f.find_tensor("b"));
  REQUIRE(data.size() == sizeof v);
  std::memcpy(v, data.data(), sizeof v);
  CHECK(v[7] == -8.f);
  CHECK(f.find_tensor("c") == nullptr);
}

TEST_CASE("gguf::GgufFile: every truncated prefix is an error, never a crash", "[gguf]") {
  const auto full = small_file();
  REQUIRE(GgufFile::parse(full, "t.gguf").ok());
  for (std::size_t n = 0; n < full.size(); ++n) {
    CAPTURE(n);
    auto r = GgufFile::parse(std::vector<std::byte>(full.begin(), full.begin() + std::ptrdiff_t(n)), "t.gguf");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().where.rfind("byte ", 0) == 0);
  }
}

TEST_CASE("gguf::GgufFile: open() maps a file and reports a missing one", "[gguf]") {
  const auto path = std::filesystem::temp_directory_path() / "trilemma_gguf_open_test.gguf";
  GgufWriter w;
  w.add_string("general.architecture", "llama");
  const std::vector<std::byte> data = as_bytes({1, 2, 3, 4, 5, 6, 7, 8});
  w.add_tensor("x", {8}, TensorType::f32, data);
  REQUIRE(w.write(path).ok());
  auto r = GgufFile::open(path);
  REQUIRE(r.ok());
  CHECK(r->tensor_data(r->tensors()[0]).size() == 32);
  std::filesystem::remove(path);
  auto missing = GgufFile::open(path);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind == ErrorKind::io);
}

TEST_CASE("gguf::GgufFile: bad header fields name the field", "[gguf]") {
  SECTION("magic") { CHECK(mentions(parse_error(Bytes{}.u32(0x12345678).u32(3).u64(0).u64(0).b), "magic")); }
  SECTION("version 1") { CHECK(mentions(parse_error(Bytes{}.header(0, 0, 1).b), "version")); }
  SECTION("absurd tensor count") {
    CHECK(mentions(parse_error(Bytes{}.header(1ull << 60, 0).b), "tensor_count"));
  }
  SECTION("absurd metadata count") {
    CHECK(mentions(parse_error(Bytes{}.header(0, ~0ull).b), "metadata_kv_count"));
  }
}

TEST_CASE("gguf::GgufFile: bad metadata is an error naming the key", "[gguf]") {
  SECTION("unknown value type") {
    const Error e = parse_error(Bytes{}.header(0, 1).str("k").u32(13).u32(0).b);
    CHECK(mentions(e, "metadata[\"k\"].type"));
    CHECK(mentions(e, "unknown value type 13"));
  }
  SECTION("unknown array element type") {
    CHECK(mentions(parse_error(Bytes{}.header(0, 1).str("k").u32(9).u32(99).u64(1).u32(0).b), "elem_type"));
  }
  SECTION("string length past the end") {
    CHECK(mentions(parse_error(Bytes{}.header(0, 1).str("k").u32(8).u64(1ull << 62).zeros(16).b),
                   "metadata[\"k\"].length"));
  }
  SECTION("array count past the end") {
    const Error e = parse_error(Bytes{}.header(0, 1).str("k").u32(9).u32(8).u64(1ull << 61).zeros(16).b);
    CHECK(mentions(e, "metadata[\"k\"].count"));
  }
  SECTION("duplicate key") {
    CHECK(mentions(parse_error(Bytes{}.header(0, 2).str("k").u32(4).u32(1).str("k").u32(4).u32(2).b), "duplicate key"));
  }
  SECTION("alignment not a power of two") {
    CHECK(mentions(parse_error(Bytes{}.header(0, 1).str("general.alignment").u32(4).u32(24).b), "general.alignment"));
  }
  SECTION("alignment below the spec's 8 (fuzz finding: misaligned f32 loads)") {
    CHECK(mentions(parse_error(Bytes{}.header(0, 1).str("general.alignment").u32(4).u32(2).b), "general.alignment"));
  }
  SECTION("key longer than 65535 bytes") {
    CHECK(mentions(parse_error(Bytes{}.header(0, 1).u64(70000).zeros(70100).b), "metadata[0].key.length"));
  }
}

TEST_CASE("gguf::GgufFile: bad tensor infos are errors naming tensor and dimension", "[gguf]") {
  SECTION("more than 4 dimensions") {
    CHECK(mentions(parse_error(Bytes{}.header(1, 0).tensor("t", {1, 1, 1, 1, 1}, 0, 0).pad().zeros(32).b),
                   "tensor_infos[0].n_dims"));
  }
  SECTION("dims product overflows") {
    const Error e = parse_error(Bytes{}.header(2, 0)
                                    .tensor("ok", {8}, 0, 0)
                                    .tensor("t", {1ull << 32, 1ull << 32}, 0, 32)
                                    .pad()
                                    .zeros(64)
                                    .b);
    CHECK(mentions(e, "tensor_infos[1].dims[1]"));
  }
  SECTION("zero dimension") {
    CHECK(mentions(parse_error(Bytes{}.header(1, 0).tensor("t", {4, 0}, 0, 0).pad().zeros(32).b), "dims[1]: must be > 0"));
  }
  SECTION("offset past the end") {
    CHECK(mentions(parse_error(Bytes{}.header(1, 0).tensor("t", {8}, 0, 1ull << 40).pad().zeros(32).b),
                   "tensor_infos[0].offset"));
  }
  SECTION("data runs past the end") {
    CHECK(mentions(parse_error(Bytes{}.header(1, 0).tensor("t", {16}, 0, 0).pad().zeros(32).b), "tensor_infos[0].offset"));
  }
  SECTION("misaligned offset") {
    CHECK(mentions(parse_error(Bytes{}.header(1, 0).tensor("t", {1}, 0, 4).pad().zeros(32).b), "alignment"));
  }
  SECTION("duplicate tensor name") {
    CHECK(mentions(parse_error(Bytes{}.header(2, 0).tensor("t", {8}, 0, 0).tensor("t", {8}, 0, 32).pad().zeros(64).b),
                   "duplicate tensor name"));
  }
  SECTION("row length not a multiple of the block") {
    CHECK(mentions(parse_error(Bytes{}.header(1, 0).tensor("t", {33}, 8, 0).pad().zeros(64).b), "tensor_infos[0].type"));
  }
}

TEST_CASE("gguf::GgufFile: an unknown tensor type is listed with type nullopt", "[gguf]") {
  auto r = GgufFile::parse(Bytes{}.header(1, 0).tensor("t", {8}, 4000, 0).pad().b, "t.gguf");
  REQUIRE(r.ok());
  CHECK(r->tensors()[0].gguf_type == 4000);
  CHECK_FALSE(r->tensors()[0].type.has_value());
  CHECK(r->tensors()[0].elems == 8);
}
