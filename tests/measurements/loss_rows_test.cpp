// data/measurements/loss.csv read strictly: typed fields, errors naming file, line and column,
// and the built-in dataset itself.
#include <catch2/catch.hpp>

#include <set>

#include "measurements/loss_rows.hpp"

using namespace trilemma;
using measurements::parse_loss_csv;

namespace {

const std::string k_loss_header =
    "id,model,family,params_b,active_params_b,base_precision,format,format_published,bpw,imatrix,kv_k,kv_v,metric,value,"
    "baseline_value,eval_text,context,engine,source_url,locator,notes\n";

}  // namespace

TEST_CASE("measurements::parse_loss_csv: a row's fields, typed", "[measurements]") {
  const auto rows = parse_loss_csv(k_loss_header +
                                       "a,Qwen3-30B-A3B,qwen3,30.5,3.3,bf16,q4_k_m,Q4_K_M,4.9,yes,q8_0,q8_0,ppl,7.5,7.25,wikitext-2,512,"
                                       "llama.cpp,https://x,table 1,\n"
                                       "b,Some-7B,mistral,,,f16,q4_0,Q4_0,,,,,kld_mean,0.05,,,,llama.cpp,https://y,row 2,\n",
                                   "loss.csv");
  INFO((rows.ok() ? "" : rows.error().to_string()));
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 2);
  const auto& a = (*rows)[0];
  CHECK(*a.params_b == 30.5);
  CHECK(*a.active_params_b == 3.3);
  CHECK(*a.imatrix);
  CHECK(a.kv_k == "q8_0");
  CHECK(*a.baseline_value == 7.25);
  CHECK(*a.context == 512u);
  CHECK(a.where() == "loss.csv:2");
  const auto& b = (*rows)[1];
  CHECK_FALSE(b.params_b);
  CHECK_FALSE(b.imatrix);
  CHECK(b.metric == "kld_mean");
}

TEST_CASE("measurements::parse_loss_csv: malformed rows name file, line and column", "[measurements]") {
  const auto error_of = [](const std::string& row) {
    const auto r = parse_loss_csv(k_loss_header + row, "loss.csv");
    REQUIRE_FALSE(r.ok());
    return r.error().to_string();
  };
  CHECK_THAT(error_of("a,M,f,-3,,f16,q4_0,,,,,,ppl_delta_pct,1,,,,e,u,l,\n"), Catch::Contains("loss.csv:2: params_b"));
  CHECK_THAT(error_of("a,M,f,7,,f16,q4_0,,,maybe,,,ppl_delta_pct,1,,,,e,u,l,\n"), Catch::Contains("imatrix"));
  CHECK_THAT(error_of("a,M,f,7,,f16,q4_0,,,,,,ppl,6.5,,,,e,u,l,\n"), Catch::Contains("baseline_value"));
  CHECK_THAT(error_of("a,M,f,7,,f16,q4_0,,,,,,ppl_delta_pct,lots,,,,e,u,l,\n"), Catch::Contains("value: expected a number"));
  CHECK_THAT(error_of("a,M,f,7,,f16,q4_0,,,,,,ppl_delta_pct,1,,,,e,,l,\n"), Catch::Contains("source_url: required"));
  CHECK_THAT(error_of("a,M,f,7,,f16,q4_0,,,,,,kld_mean,1,,,,e,u,l,\na,M,f,7,,f16,q8_0,,,,,,kld_mean,1,,,,e,u,l,\n"),
             Catch::Contains("loss.csv:3: id: duplicate"));
}

TEST_CASE("measurements::load_loss_rows: the built-in dataset, sourced, with unique ids", "[measurements]") {
  const auto rows = measurements::load_loss_rows();
  INFO((rows.ok() ? "" : rows.error().to_string()));
  REQUIRE(rows.ok());
  CHECK(rows->size() >= 150);  // the floor for the dataset
  std::set<std::string> families;
  for (const auto& r : *rows) {
    families.insert(r.family);
    CHECK_FALSE(r.source_url.empty());
  }
  CHECK(families.size() >= 8);
}
