// RFC 4180 reading: quotes, embedded commas, quotes and newlines, CRLF, and errors that name
// the file and the line a record starts on.
#include <catch2/catch.hpp>

#include "io/csv.hpp"

using namespace trilemma;

TEST_CASE("io::parse_csv: quoted fields, doubled quotes, newlines inside quotes, CRLF", "[io]") {
  const std::string text = "a,b,c\r\n1,\"x, y\",\"say \"\"hi\"\"\"\r\n2,\"two\nlines\",\r\n\n3,,last";
  auto t = io::parse_csv(text, "f.csv");
  REQUIRE(t.ok());
  CHECK(t->header == std::vector<std::string>{"a", "b", "c"});
  REQUIRE(t->records.size() == 3);
  CHECK(t->records[0].fields == std::vector<std::string>{"1", "x, y", "say \"hi\""});
  CHECK(t->records[0].line == 2);
  CHECK(t->records[1].fields == std::vector<std::string>{"2", "two\nlines", ""});
  CHECK(t->records[1].line == 3);
  CHECK(t->records[2].line == 6);  // after the two-line record and a blank line
  CHECK(t->records[2].fields.back() == "last");
  CHECK(t->column("c") == 2u);
  CHECK_FALSE(t->column("d"));
}

TEST_CASE("io::parse_csv: malformed input names file and line", "[io]") {
  auto expect = [](const std::string& text, const std::string& where, const std::string& what) {
    auto t = io::parse_csv(text, "f.csv");
    REQUIRE_FALSE(t.ok());
    CAPTURE(t.error().to_string());
    CHECK(t.error().to_string().rfind("f.csv:" + where + ":", 0) == 0);
    CHECK(t.error().message.find(what) != std::string::npos);
  };
  expect("a,b\n1,\"open\n2,3\n", "2", "unterminated");
  expect("a,b\n1,2\n3\n", "3", "expected 2 fields");
  expect("a,b\n1,x\"y\n", "2", "quote inside an unquoted field");
  expect("a,b\n1,\"x\"y\n", "2", "after a closing quote");
  expect("", "1", "empty file");
}

TEST_CASE("io::check_columns: missing and unknown columns are named", "[io]") {
  auto t = io::parse_csv("id,valeu\n1,2\n", "f.csv").value();
  auto missing = io::check_columns(t, {"id", "value"}, {});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("missing column 'value'") != std::string::npos);
  auto unknown = io::check_columns(t, {"id"}, {"value"});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message.find("unknown column 'valeu'") != std::string::npos);
  CHECK(io::check_columns(t, {"id"}, {"valeu"}).ok());
}
