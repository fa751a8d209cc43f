// The real llama-bench outputs in ../shared/fixtures/llama-bench/ (this binary exits 77,
// reported as skipped, when they are absent): each format of the same benchmark parses to the
// same tests. Each file is its own run, so the rates differ by the host's noise, not the tests.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "measurements/llama_bench.hpp"
#include "shared_data.hpp"

using namespace trilemma;

namespace {

const bool k_have_fixtures = (testing::require_shared_or_skip("fixtures/llama-bench/tinyllama-shape-q4_0.md"), true);

std::vector<measurements::BenchResult> parse(const std::string& name) {
  const auto path = testing::shared_file("fixtures/llama-bench/" + name).string();
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto r = measurements::parse_llama_bench(ss.str(), path);
  INFO((r.ok() ? "" : r.error().to_string()));
  REQUIRE(r.ok());
  return *r;
}

using Test = std::tuple<std::string, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>;  // type, threads, pp, tg, depth

std::vector<Test> tests_of(const std::vector<measurements::BenchResult>& results) {
  std::vector<Test> out;
  for (const auto& r : results) out.emplace_back(r.model_type, r.threads.value_or(0), r.n_prompt, r.n_gen, r.n_depth);
  return out;
}

}  // namespace

TEST_CASE("llama-bench fixtures: json, jsonl, csv and markdown hold the same tests", "[measurements]") {
  const auto json = parse("tinyllama-shape-q4_0.json");
  REQUIRE(json.size() == 8);  // -p 64 -n 16 -t 1,2 -d 0,256
  const auto expected = tests_of(json);
  for (const std::string format : {"jsonl", "csv", "md"}) {
    CAPTURE(format);
    const auto other = parse("tinyllama-shape-q4_0." + format);
    CHECK(tests_of(other) == expected);
    for (std::size_t i = 0; i < other.size(); ++i) {
      CHECK(*other[i].model_n_params == Approx(1100048384.0).epsilon(0.005));
      CHECK(*other[i].model_size_bytes == Approx(619094016.0).epsilon(1e-5));
      // One run per file: the same test within the host's run-to-run spread.
      CHECK(other[i].avg_ts == Approx(json[i].avg_ts).epsilon(0.6));
    }
  }
  const std::set<Test> distinct(expected.begin(), expected.end());
  CHECK(distinct.size() == 8);
  CHECK(std::get<4>(expected[2]) == 256u);
}

TEST_CASE("llama-bench fixtures: the q8_0 run", "[measurements]") {
  const auto r = parse("tinyllama-shape-q8_0.json");
  REQUIRE(r.size() == 2);
  CHECK(r[0].n_prompt == 64u);
  CHECK(r[1].n_gen == 16u);
  CHECK(*r[0].threads == 2u);
  CHECK(*r[0].model_size_bytes == 1169072128.0);
}
