// llama-bench results as rows of one device: llama.cpp's file type names, the catalog model
// from architecture and parameter count (or a file name, or --model), a label its size
// contradicts, and results that match nothing listed with the reason.
#include <catch2/catch.hpp>

#include "calibration/bench_rows.hpp"
#include "memory/tensor_layout.hpp"
#include "models/catalog.hpp"

using namespace trilemma;
using calibration::bench_rows;

namespace {

measurements::BenchResult result(std::string type, double params, std::uint32_t pp, std::uint32_t tg) {
  measurements::BenchResult r;
  r.file = "bench.json";
  r.line = 7;
  r.model_type = std::move(type);
  r.model_n_params = params;
  r.backend = "CPU";
  r.threads = 4;
  r.n_prompt = pp;
  r.n_gen = tg;
  r.avg_ts = 50;
  return r;
}

const std::vector<models::Model>& catalog() {
  static const auto c = models::builtin_models().value();
  return c;
}

double bytes_of(const std::string& id, WeightFormat f) {
  return memory::weight_bytes(models::resolve_model(id).value().shape, f).total;
}

}  // namespace

TEST_CASE("bench_rows: llama.cpp file type names as weight formats", "[calibration]") {
  using calibration::weight_format_of_file_type;
  CHECK(weight_format_of_file_type("llama 1B Q4_0") == "q4_0");
  CHECK(weight_format_of_file_type("qwen2 0.5B Q4_K - Medium") == "q4_k_m");
  CHECK(weight_format_of_file_type("llama 8B Q5_K - Medium") == "q5_k_m");
  CHECK(weight_format_of_file_type("llama 8B Q3_K - Medium") == "q3_k_m");
  CHECK(weight_format_of_file_type("llama 8B Q2_K - Medium") == "q2_k");
  CHECK(weight_format_of_file_type("llama 8B IQ2_XS - 2.3125 bpw") == "iq2_xs");
  CHECK(weight_format_of_file_type("llama ?B all F32") == "f32");
  CHECK(weight_format_of_file_type("gemma2 2B BF16") == "bf16");
  CHECK(weight_format_of_file_type("llama 7B Q5_1").empty());  // not costed
}

TEST_CASE("bench_rows: prompt and generation tests become prefill and decode rows", "[calibration]") {
  auto pp = result("llama 1B Q4_0", 1100048384, 512, 0);
  auto tg = result("llama 1B Q4_0", 1100048384, 0, 128);
  tg.n_depth = 4096;
  tg.line = 9;
  const auto rows = bench_rows({pp, tg}, "raspberry-pi-5", catalog());
  REQUIRE(rows.unmatched.empty());
  REQUIRE(rows.rows.size() == 2);
  const auto& a = rows.rows[0];
  CHECK(a.device == "raspberry-pi-5");
  CHECK(a.model == "tinyllama-1.1b");
  CHECK(a.weights == "q4_0");
  CHECK(a.backend == "cpu");
  CHECK(a.engine == "llama.cpp");
  CHECK(*a.threads == 4u);
  CHECK(*a.prompt_tokens == 512u);
  CHECK(*a.prefill_tok_s == 50.0);
  CHECK_FALSE(a.decode_tok_s);
  const auto& b = rows.rows[1];
  CHECK(*b.gen_tokens == 128u);
  CHECK(*b.depth == 4096u);
  CHECK(*b.decode_tok_s == 50.0);
  CHECK(b.where() == "bench.json:9");
}

TEST_CASE("bench_rows: unmatched results are listed with the reason, never guessed", "[calibration]") {
  auto unknown = result("llama 13B Q4_0", 13.0e9, 512, 0);           // no 13B model in the catalog
  auto combined = result("llama 1B Q4_0", 1100048384, 512, 128);     // pp512+tg128
  auto uncosted = result("llama 1B Q5_1", 1100048384, 512, 0);       // a format trilemma does not cost
  auto no_params = result("llama 1B Q4_0", 0, 512, 0);
  no_params.model_n_params.reset();
  const auto rows = bench_rows({unknown, combined, uncosted, no_params}, "raspberry-pi-5", catalog());
  CHECK(rows.rows.empty());
  REQUIRE(rows.unmatched.size() == 4);
  CHECK_THAT(rows.unmatched[0], Catch::Contains("bench.json:7: llama 13B Q4_0: no catalog model of architecture 'llama' with 13"));
  CHECK_THAT(rows.unmatched[0], Catch::Contains("--model"));
  CHECK_THAT(rows.unmatched[1], Catch::Contains("prefill and decode cannot be told apart"));
  CHECK_THAT(rows.unmatched[2], Catch::Contains("file type not costed"));
  CHECK_THAT(rows.unmatched[3], Catch::Contains("no parameter count"));
  // Named with --model, the 13B result is taken as that model.
  const auto named = bench_rows({unknown}, "raspberry-pi-5", catalog(), "llama-2-7b");
  REQUIRE(named.rows.size() == 1);
  CHECK(named.rows[0].model == "llama-2-7b");
}

TEST_CASE("bench_rows: ambiguous parameter counts, settled by the file name", "[calibration]") {
  // qwen2.5-coder-1.5b and qwen2.5-1.5b have the same shape.
  auto r = result("qwen2 1.5B Q4_K - Medium", 1543714304, 512, 0);
  const auto ambiguous = bench_rows({r}, "apple-m2", catalog());
  REQUIRE(ambiguous.unmatched.size() == 1);
  CHECK_THAT(ambiguous.unmatched[0], Catch::Contains("ambiguous between"));
  r.model_filename = "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf";
  const auto named = bench_rows({r}, "apple-m2", catalog());
  REQUIRE(named.rows.size() == 1);
  CHECK(named.rows[0].model == "qwen2.5-coder-1.5b");
}

TEST_CASE("bench_rows: a label its size contradicts is taken as the size's format, with a note", "[calibration]") {
  // trilemma export before 0.4 wrote ggml type ids as general.file_type: its Q8_0 read "Q5_0".
  auto mislabelled = result("llama 1B Q5_0", 1100048384, 64, 0);
  mislabelled.model_size_bytes = bytes_of("tinyllama-1.1b", WeightFormat::q8_0);
  auto right = result("llama 1B Q4_0", 1100048384, 64, 0);
  right.model_size_bytes = bytes_of("tinyllama-1.1b", WeightFormat::q4_0) * 0.97;  // an all-q4_0 classifier
  const auto rows = bench_rows({mislabelled, right}, "raspberry-pi-5", catalog());
  REQUIRE(rows.rows.size() == 2);
  CHECK(rows.rows[0].weights == "q8_0");
  CHECK(rows.rows[1].weights == "q4_0");
  REQUIRE(rows.notes.size() == 1);
  CHECK_THAT(rows.notes[0], Catch::Contains("labelled 'llama 1B Q5_0'") && Catch::Contains("taken as q8_0"));
}

TEST_CASE("bench_rows: backends from llama-bench's list and the offload", "[calibration]") {
  auto metal = result("llama 1B Q4_0", 1100048384, 512, 0);
  metal.backend = "Metal,BLAS";
  metal.n_gpu_layers = 99;
  auto cpu_only = metal;
  cpu_only.n_gpu_layers = 0;
  auto cuda = metal;
  cuda.backend = "CUDA";
  const auto rows = bench_rows({metal, cpu_only, cuda}, "apple-m2", catalog());
  REQUIRE(rows.rows.size() == 3);
  CHECK(rows.rows[0].backend == "metal");
  CHECK(rows.rows[1].backend == "cpu");
  CHECK(rows.rows[2].backend == "cuda");
}

TEST_CASE("bench_rows: a file quantized throughout (trilemma export) keeps its label; stories260K's untied count matches", "[calibration]") {
  // `trilemma export --weights q4_0` quantizes the embedding and classifier to Q4_0 as well:
  // the file is smaller than llama-quantize's recipe (Q6_K classifier) by more than 8%, and was
  // once relabelled iq2_xs, the recipe whose size it happened to have (issue 50).
  const auto smol = models::resolve_model("smollm2-135m").value();
  const double params = count_parameters(smol.shape).total();
  auto exported = result("llama ?B Q4_0", params, 0, 16);
  exported.model_size_bytes = params * 18.0 / 32.0;  // Q4_0 blocks of 32 in 18 bytes, on every tensor
  REQUIRE(exported.model_size_bytes < 0.92 * bytes_of("smollm2-135m", WeightFormat::q4_0));
  auto rows = bench_rows({exported}, "raspberry-pi-5", catalog());
  REQUIRE(rows.rows.size() == 1);
  CHECK(rows.rows[0].model == "smollm2-135m");
  CHECK(rows.rows[0].weights == "q4_0");
  CHECK(rows.notes.empty());
  // A Q8_0 file labelled Q4_0 is still caught: above the Q4_0 recipe's size by far.
  exported.model_size_bytes = bytes_of("smollm2-135m", WeightFormat::q8_0);
  rows = bench_rows({exported}, "raspberry-pi-5", catalog());
  REQUIRE(rows.rows.size() == 1);
  CHECK(rows.rows[0].weights == "q8_0");
  // llama.cpp counts a llama2.c conversion's classifier apart from its tied embedding:
  // stories260K reads 293K parameters in llama-bench, 260K in the catalog.
  const auto stories = models::resolve_model("stories260k").value();
  const auto counts = count_parameters(stories.shape);
  REQUIRE(counts.output == 0);
  auto tiny = result("llama ?B all F32", counts.total() + counts.embedding, 0, 16);
  tiny.model_size_bytes = 4 * (counts.total() + counts.embedding);
  rows = bench_rows({tiny}, "raspberry-pi-5", catalog());
  CAPTURE(rows.unmatched);
  REQUIRE(rows.rows.size() == 1);
  CHECK(rows.rows[0].model == "stories260k");
  CHECK(rows.rows[0].weights == "f32");
}

TEST_CASE("bench_rows: results whose repetitions spread more than 10% of their mean are listed as noisy", "[calibration]") {
  auto quiet = result("llama 1B Q4_0", 1100048384, 0, 128);
  quiet.stddev_ts = 0.04 * quiet.avg_ts;
  auto noisy = result("llama 1B Q4_0", 1100048384, 512, 0);
  noisy.line = 12;
  noisy.stddev_ts = 0.3 * noisy.avg_ts;
  auto unknown = result("llama 1B Q4_0", 1100048384, 0, 64);  // a markdown row without "±"
  const auto rows = bench_rows({quiet, noisy, unknown}, "raspberry-pi-5", catalog());
  REQUIRE(rows.rows.size() == 3);
  REQUIRE(rows.noisy.size() == 1);
  CHECK_THAT(rows.noisy[0], Catch::StartsWith("bench.json:12: llama 1B Q4_0 pp512: 50 +/- 15 tok/s (30%)"));
}
