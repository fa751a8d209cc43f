// The published-measurement files: the built-in ones load (unique ids, every row sourced), and
// a malformed row is an error naming file, line and column.
#include <catch2/catch.hpp>

#include <set>

#include "measurements/speed_rows.hpp"

using namespace trilemma;

namespace {

const std::string k_speed_header =
    "id,device,model,weights,weights_published,engine,engine_version,backend,threads,prompt_tokens,gen_tokens,depth,"
    "prefill_tok_s,decode_tok_s,ttft_ms,peak_memory_mib,kv_type,model_size_gib,source_url,locator,notes,exclude\n";

std::string row(const std::string& middle, const std::string& notes = "", const std::string& exclude = "") {
  return "r1,apple-m2,llama-2-7b,q4_0,Q4_0,llama.cpp,b1,metal," + middle + ",https://x,table 1," + notes + "," + exclude + "\n";
}

}  // namespace

TEST_CASE("measurements::parse_speed_csv: a row's fields, typed", "[measurements]") {
  auto rows = measurements::parse_speed_csv(k_speed_header + row(",512,128,0,145.9,21.7,,,f16,3.56"), "speed-x.csv");
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  const auto& r = rows->front();
  CHECK(r.where() == "speed-x.csv:2");
  CHECK_FALSE(r.threads);
  CHECK(r.prompt_tokens == 512u);
  CHECK(r.decode_tok_s == 21.7);
  CHECK(r.model_size_gib == 3.56);
  CHECK_FALSE(r.exclude_decode);
}

TEST_CASE("measurements::parse_speed_csv: malformed rows name file, line and column", "[measurements]") {
  auto expect = [](const std::string& text, const std::string& what) {
    auto rows = measurements::parse_speed_csv(text, "speed-x.csv");
    REQUIRE_FALSE(rows.ok());
    CAPTURE(rows.error().to_string());
    CHECK(rows.error().to_string().rfind("speed-x.csv:", 0) == 0);
    CHECK(rows.error().message.find(what) != std::string::npos);
  };
  expect(k_speed_header + row("4,512,128,0,fast,21.7,,,f16,"), "prefill_tok_s: expected a positive number, got 'fast'");
  expect(k_speed_header + row("4,512,128,0,-3,21.7,,,f16,"), "prefill_tok_s");
  expect(k_speed_header + row("four,512,128,0,1,21.7,,,f16,"), "threads: expected a whole number");
  expect(k_speed_header + row("4,512,128,0,,,,,f16,"), "needs at least one of");
  expect(k_speed_header + row("4,512,128,0,1,2,,,f16,", "", "decode"), "notes: an excluded figure needs its reason");
  expect(k_speed_header + row("4,512,128,0,1,2,,,f16,", "excluded: x", "decoding"), "exclude: expected decode");
  expect("id,device\nr1,apple-m2\n", "missing column");
  expect(k_speed_header.substr(0, k_speed_header.size() - 1) + ",colour\n", "unknown column 'colour'");
}

TEST_CASE("measurements::parse_speed_csv: exclusions name figures", "[measurements]") {
  auto rows = measurements::parse_speed_csv(k_speed_header + row("4,512,128,0,1,2,,,f16,", "excluded: short prompt", "prefill;memory"),
                                            "speed-x.csv");
  REQUIRE(rows.ok());
  CHECK(rows->front().exclude_prefill);
  CHECK(rows->front().exclude_memory);
  CHECK_FALSE(rows->front().exclude_decode);
}

TEST_CASE("measurements::load_speed_rows: the built-in dataset, sourced, with unique ids", "[measurements]") {
  auto rows = measurements::load_speed_rows();
  REQUIRE(rows.ok());
  CHECK(rows->size() >= 200);
  std::set<std::string> devices;
  for (const auto& r : *rows) {
    CAPTURE(r.where());
    CHECK(r.source_url.rfind("http", 0) == 0);
    CHECK_FALSE(r.locator.empty());
    devices.insert(r.device);
  }
  CHECK(devices.size() >= 25);
  // The folder on disk is the same data.
  auto disk = measurements::load_speed_rows(std::string(TRILEMMA_SOURCE_DIR) + "/data/measurements");
  REQUIRE(disk.ok());
  CHECK(disk->size() == rows->size());
  CHECK_FALSE(measurements::load_speed_rows("/nonexistent-folder").ok());
}
