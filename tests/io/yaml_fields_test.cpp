// FieldReader::id: the id rule, and an id long enough to have overflowed the stack of the
// regex it replaced (issue 14) is an error like any other.
#include <catch2/catch.hpp>

#include "io/yaml_fields.hpp"

using namespace trilemma;

namespace {

// The error of reading `id` from "id: <value>", or "" when it is accepted.
std::string id_error(const std::string& value, const std::string& expected = "") {
  auto doc = io::parse_yaml("id: '" + value + "'\n", "d.yaml");
  REQUIRE(doc.ok());
  io::YamlContext ctx("d.yaml");
  io::FieldReader root(ctx, *doc, "");
  root.id("id", expected);
  return ctx.failed() ? ctx.error().to_string() : "";
}

}  // namespace

TEST_CASE("io::FieldReader::id: lowercase words joined by hyphens or dots", "[io]") {
  for (const std::string ok : {"raspberry-pi-5", "qwen2.5-0.5b", "a", "m4", "x1e-80-100"}) CHECK(id_error(ok).empty());
  for (const std::string bad : {"", "Pi-5", "a--b", "-a", "a-", "a.", "a b", "a_b", "ü"}) {
    CAPTURE(bad);
    CHECK(id_error(bad).find("is not a lowercase hyphenated id") != std::string::npos);
  }
  CHECK(id_error("pi-5", "pi-4").find("does not match the file name 'pi-4'") != std::string::npos);
}

TEST_CASE("io::FieldReader::id: an 80 KB id is refused, not a crash", "[io]") {
  std::string huge;
  for (int i = 0; i < 40000; ++i) huge += "a-";
  huge += "a";
  const auto e = id_error(huge);
  CHECK(e.find("d.yaml") == 0);
  CHECK(e.find("at most 128 characters") != std::string::npos);
  CHECK(e.size() < 400);  // the message quotes the start, not the whole id
  CHECK_FALSE(id_error(std::string(128, 'a')).size());
  CHECK(id_error(std::string(129, 'a')).size());
}

TEST_CASE("io::FieldReader: looking up a missing key leaves the document as it was (fuzz finding, issue 14)", "[io]") {
  // yaml-cpp's non-const operator[] inserts a missing key. Readers that look keys up while
  // iterating the same mapping (derating_tables.cpp reads each backend by name) reallocated
  // its entries under the iterator when a key was null (its name reads as ""): a
  // use-after-free under AddressSanitizer, from this minimized fuzz input.
  auto doc = io::parse_yaml("backends:\n    : r\n    :", "d.yaml");
  REQUIRE(doc.ok());
  io::YamlContext ctx("d.yaml");
  io::FieldReader root(ctx, *doc, "");
  auto rows = root.map("backends");
  int seen = 0;
  for (const auto& kv : rows.node()) {
    (void)rows.raw(kv.first.Scalar());
    (void)rows.has("missing");
    ++seen;
  }
  CHECK(seen == 2);
  CHECK(rows.node().size() == 2);
}

TEST_CASE("io::FieldReader::keys: a list or a non-text key where names are expected is an error, not a throw (fuzz finding, issue 14)", "[io]") {
  // Iterating a list as a mapping throws YAML::InvalidNode inside yaml-cpp; the tables keyed by
  // name (backends, device classes, formats) did that on "backends: [- cpu: ...]" and aborted.
  for (const std::string text : {"backends:\n - cpu: {}\n", "backends: 3\n", "backends:\n  [a, b]: 1\n"}) {
    CAPTURE(text);
    auto doc = io::parse_yaml(text, "d.yaml");
    REQUIRE(doc.ok());
    io::YamlContext ctx("d.yaml");
    io::FieldReader root(ctx, *doc, "");
    auto rows = root.map("backends");
    CHECK(rows.keys().empty());
    REQUIRE(ctx.failed());
    CHECK(ctx.error().to_string().find("backends") != std::string::npos);
  }
  auto doc = io::parse_yaml("backends: {cpu: 1, gpu: 2}\n", "d.yaml");
  REQUIRE(doc.ok());
  io::YamlContext ctx("d.yaml");
  io::FieldReader root(ctx, *doc, "");
  std::vector<std::string> names;
  for (const auto& k : root.map("backends").keys()) names.push_back(k.text);
  CHECK(names == std::vector<std::string>{"cpu", "gpu"});
  CHECK_FALSE(ctx.failed());
}

TEST_CASE("io::parse_yaml: text on which yaml-cpp's parser stalls is malformed YAML, not an endless loop (fuzz finding, issue 45)", "[io]") {
  // The fitted_yaml target's input: yaml-cpp hands out an empty document at offset 0 for ever,
  // and LoadAll collected them until memory ran out.
  const std::string stalls("\x2c\x26ittefi\x01\0\0\0\0\0\0\0f_o\x1dn:on\xd5 oionn", 30);
  auto doc = io::parse_yaml(stalls, "fitted.yaml");
  REQUIRE_FALSE(doc.ok());
  CHECK(doc.error().to_string().find("fitted.yaml:1:1") != std::string::npos);
  CHECK(doc.error().to_string().find("malformed YAML") != std::string::npos);
  for (const std::string text : {",", ", a: 1", ",\n---\n,"}) {
    CAPTURE(text);
    CHECK_FALSE(io::parse_yaml(text, "f.yaml").ok());
  }
  // What is not affected: one document, an empty text, a second document.
  CHECK(io::parse_yaml("a: 1\n", "f.yaml").ok());
  CHECK(io::parse_yaml("", "f.yaml").ok());
  auto two = io::parse_yaml("a: 1\n---\nb: 2\n", "f.yaml");
  REQUIRE_FALSE(two.ok());
  CHECK(two.error().to_string().find("a second YAML document") != std::string::npos);
}
