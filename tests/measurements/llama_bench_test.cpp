// llama-bench output in each format, from text written here (the fixtures from a real run are
// tested in llama_bench_fixtures_test.cpp): fields, tests at depth, rounding in markdown, and
// malformed, truncated and foreign input named by file and line.
#include <catch2/catch.hpp>

#include "measurements/llama_bench.hpp"

using namespace trilemma;
using measurements::parse_llama_bench;

namespace {

const std::string k_csv =
    "build_commit,build_number,cpu_info,gpu_info,backends,model_filename,model_type,model_size,model_n_params,"
    "n_batch,n_ubatch,n_threads,type_k,type_v,n_gpu_layers,n_prompt,n_gen,n_depth,test_time,avg_ns,stddev_ns,avg_ts,stddev_ts\n"
    "\"abc\",\"1\",\"cpu\",\"\",\"CPU\",\"m.gguf\",\"llama 1B Q4_0\",\"619094016\",\"1100048384\",\"2048\",\"512\",\"4\","
    "\"f16\",\"f16\",\"0\",\"512\",\"0\",\"0\",\"t\",\"1\",\"0\",\"120.5\",\"0\"\n"
    "\"abc\",\"1\",\"cpu\",\"\",\"CPU\",\"m.gguf\",\"llama 1B Q4_0\",\"619094016\",\"1100048384\",\"2048\",\"512\",\"4\","
    "\"f16\",\"f16\",\"0\",\"0\",\"128\",\"4096\",\"t\",\"1\",\"0\",\"20.25\",\"0\"\n";

const std::string k_md =
    "| model                          |       size |     params | backend    | threads |            test |                  t/s |\n"
    "| ------------------------------ | ---------: | ---------: | ---------- | ------: | --------------: | -------------------: |\n"
    "| llama 1B Q4_0                  | 590.41 MiB |     1.10 B | CPU        |       4 |           pp512 |        120.50 ± 1.20 |\n"
    "| llama 1B Q4_0                  | 590.41 MiB |     1.10 B | CPU        |       4 |   tg128 @ d4096 |         20.25 ± 0.10 |\n"
    "\nbuild: abc (1)\n";

}  // namespace

TEST_CASE("llama-bench: csv records carry the model, threads, test and depth", "[measurements]") {
  const auto r = parse_llama_bench(k_csv, "b.csv");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 2);
  const auto& pp = (*r)[0];
  CHECK(pp.model_type == "llama 1B Q4_0");
  CHECK(pp.model_filename == "m.gguf");
  CHECK(*pp.model_size_bytes == 619094016.0);
  CHECK(*pp.model_n_params == 1100048384.0);
  CHECK(*pp.threads == 4u);
  CHECK(*pp.n_gpu_layers == 0);
  CHECK(pp.n_prompt == 512u);
  CHECK(pp.n_gen == 0u);
  CHECK(pp.avg_ts == 120.5);
  CHECK(pp.where() == "b.csv:2");
  const auto& tg = (*r)[1];
  CHECK(tg.n_gen == 128u);
  CHECK(tg.n_depth == 4096u);
  CHECK(tg.type_k == "f16");
}

TEST_CASE("llama-bench: the markdown table gives the same tests, sizes and parameters rounded", "[measurements]") {
  const auto csv = parse_llama_bench(k_csv, "b.csv");
  const auto md = parse_llama_bench(k_md, "b.md");
  REQUIRE(md.ok());
  REQUIRE(md->size() == csv->size());
  for (std::size_t i = 0; i < md->size(); ++i) {
    const auto &a = (*md)[i], &b = (*csv)[i];
    CHECK(a.model_type == b.model_type);
    CHECK(a.n_prompt == b.n_prompt);
    CHECK(a.n_gen == b.n_gen);
    CHECK(a.n_depth == b.n_depth);
    CHECK(*a.threads == *b.threads);
    CHECK(a.avg_ts == b.avg_ts);
    CHECK(*a.model_size_bytes == Approx(*b.model_size_bytes).epsilon(1e-5));
    CHECK(*a.model_n_params == Approx(*b.model_n_params).epsilon(0.005));
  }
  CHECK((*md)[1].where() == "b.md:4");
}

TEST_CASE("llama-bench: json and jsonl records, combined tests", "[measurements]") {
  const std::string one =
      R"({"model_type": "qwen2 0.5B Q4_K - Medium", "model_size": 397807616, "model_n_params": 494032768, "n_threads": 8,)"
      R"( "n_gpu_layers": 99, "backends": "Metal,BLAS", "n_prompt": 512, "n_gen": 128, "n_depth": 0, "avg_ts": 300.5})";
  const auto jsonl = parse_llama_bench(one + "\n" + one + "\n", "b.jsonl");
  REQUIRE(jsonl.ok());
  REQUIRE(jsonl->size() == 2);
  CHECK((*jsonl)[1].line == 2u);
  CHECK((*jsonl)[0].backend == "Metal,BLAS");
  CHECK((*jsonl)[0].n_prompt == 512u);
  CHECK((*jsonl)[0].n_gen == 128u);  // pp512+tg128: kept, and left to the reader to refuse
  const auto json = parse_llama_bench("[\n  " + one + ",\n  " + one + "\n]\n", "b.json");
  REQUIRE(json.ok());
  REQUIRE(json->size() == 2);
  CHECK((*json)[1].line == 3u);
}

TEST_CASE("llama-bench: malformed, truncated and foreign files fail naming file and line", "[measurements]") {
  auto error_of = [](const std::string& text, const std::string& file) {
    const auto r = parse_llama_bench(text, file);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == ErrorKind::input);
    return r.error().to_string();
  };
  // Truncated JSON (a run killed mid-write).
  CHECK_THAT(error_of("[\n  {\"model_type\": \"llama 1B Q4_0\", \"n_prompt\": 512,", "t.json"), Catch::Contains("t.json"));
  CHECK_THAT(error_of("[\n  {\"model_type\": \"llama 1B Q4_0\", \"n_prompt\": 512,", "t.json"), Catch::Contains("malformed JSON"));
  // A jsonl line cut short names its line.
  CHECK_THAT(error_of("{\"model_type\": \"a\", \"n_prompt\": 1, \"n_gen\": 0, \"avg_ts\": 1}\n{\"model_type\": \"a\",", "t.jsonl"),
             Catch::Contains("t.jsonl:2"));
  // A field of the wrong kind.
  CHECK_THAT(error_of(R"([{"model_type": "a", "n_prompt": "many", "n_gen": 0, "avg_ts": 1}])", "w.json"),
             Catch::Contains("w.json:1: n_prompt: expected a number"));
  CHECK_THAT(error_of(R"([{"model_type": "a", "n_prompt": 64, "n_gen": 0, "avg_ts": -3}])", "w.json"),
             Catch::Contains("avg_ts"));
  CHECK_THAT(error_of(R"([{"model_type": "a", "n_prompt": 0, "n_gen": 0, "avg_ts": 3}])", "w.json"),
             Catch::Contains("not a test"));
  // Another program's JSON.
  CHECK_THAT(error_of(R"([{"name": "x", "score": 3}])", "other.json"), Catch::Contains("other.json:1: model_type: missing"));
  // A CSV row with a column short.
  std::string short_row = k_csv.substr(0, k_csv.rfind(",\"20.25\""));
  CHECK_THAT(error_of(short_row + "\n", "s.csv"), Catch::Contains("s.csv:3"));
  // A markdown row with a cell missing, and a test name that is not one.
  std::string md = k_md;
  md.replace(md.find("|   tg128 @ d4096 "), 18, "");
  CHECK_THAT(error_of(md, "m.md"), Catch::Contains("m.md:4"));
  std::string md2 = k_md;
  md2.replace(md2.find("pp512"), 5, "xx512");
  CHECK_THAT(error_of(md2, "m.md"), Catch::Contains("m.md:3: test"));
  // Counts that are negative, fractional or beyond any integer (fuzz finding: converting
  // "@ d-56" to unsigned was undefined).
  for (const std::string bad_test : {"tg128 @ d-56", "pp1e20", "tg12.5", "pp-3"}) {
    CAPTURE(bad_test);
    std::string md3 = k_md;
    md3.replace(md3.find("tg128 @ d4096"), 13, bad_test);
    CHECK_THAT(error_of(md3, "m.md"), Catch::Contains("m.md:4: test"));
  }
  std::string md4 = k_md;
  md4.replace(md4.find("|       4 |           pp512"), 11, "|      -4 |");
  CHECK_THAT(error_of(md4, "m.md"), Catch::Contains("m.md:3: threads"));
  CHECK_THAT(error_of(R"([{"model_type": "a", "n_prompt": 64, "n_gen": 0, "n_threads": 1e20, "avg_ts": 3}])", "w.json"),
             Catch::Contains("n_threads"));
  // Plain text, an empty file.
  CHECK_THAT(error_of("hello world\n", "notes.txt"), Catch::Contains("notes.txt:1: not llama-bench output"));
  CHECK_THAT(error_of("", "empty.json"), Catch::Contains("empty.json:1: empty file"));
}
