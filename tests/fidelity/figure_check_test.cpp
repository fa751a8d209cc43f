// fidelity::check_printed_figures: which published formats stand for which planner format, the
// rows it leaves out (and why), that a family's rows are predicted by fits that never saw the
// family, and the built-in dataset against the figures of docs/fidelity.md.
#include <catch2/catch.hpp>

#include <cmath>

#include "accuracy/accuracy_model.hpp"
#include "fidelity/figure_check.hpp"

using namespace trilemma;

namespace {

measurements::LossRow row(const std::string& id, const std::string& family, const std::string& format,
                          const std::string& metric, double value, std::optional<double> baseline = std::nullopt) {
  measurements::LossRow r;
  r.id = id, r.model = id, r.family = family, r.params_b = 8, r.format = format, r.base_precision = "f16";
  r.metric = metric, r.value = value, r.baseline_value = baseline;
  return r;
}

// Two families measured in llama.cpp formats (the loss fit), with MMLU beside perplexity (the
// points map), and the rows under check.
std::vector<measurements::LossRow> dataset(double family_b_loss_scale) {
  std::vector<measurements::LossRow> rows;
  for (const std::string family : {"a", "b", "c"}) {
    const double s = family == "b" ? family_b_loss_scale : 1.0;
    for (const auto& [format, kld] : {std::pair{"q4_0", 0.07}, {"q4_k_m", 0.03}, {"q2_k", 0.4}, {"q6_k", 0.006}}) {
      rows.push_back(row(family + "-" + format + "-kld", family, format, "kld_mean", kld * s));
      rows.push_back(row(family + "-" + format + "-ppl", family, format, "ppl_delta_pct", kld * s * 100));
    }
    // A perplexity and an MMLU score of one quantized model, from one source: one points-map pair.
    rows.push_back(row(family + "-gptq-ppl", family, "gptq-int4", "ppl", 6.6, 6.0));
    rows.push_back(row(family + "-gptq-mmlu", family, "gptq-int4", "mmlu", 70 - 3 * s, 70));
    rows[rows.size() - 2].model = rows.back().model = family + "-8b";  // a pair: one model, format and source
  }
  return rows;
}

}  // namespace

TEST_CASE("fidelity::planner_format_of: published integer formats by bits, llama.cpp formats by name", "[fidelity]") {
  CHECK(fidelity::planner_format_of("gptq-int4") == WeightFormat::w4a16);
  CHECK(fidelity::planner_format_of("awq-int4") == WeightFormat::w4a16);
  CHECK(fidelity::planner_format_of("gptq-int8") == WeightFormat::w8a16);
  CHECK(fidelity::planner_format_of("w8a8-smoothquant") == WeightFormat::w8a8);
  CHECK(fidelity::planner_format_of("q4_0") == WeightFormat::q4_0);
  CHECK_FALSE(fidelity::planner_format_of("q4_k_s"));  // a llama.cpp format the planner does not offer
  CHECK_FALSE(fidelity::planner_format_of("gptq-int3"));
  CHECK_FALSE(fidelity::planner_format_of("fp8"));
}

TEST_CASE("fidelity::check_printed_figures: measured losses, and rows left out by reason", "[fidelity]") {
  auto rows = dataset(1.0);
  rows.push_back(row("fp8", "a", "fp8", "mmlu", 69, 70));                      // no planner format
  rows.push_back(row("kv", "a", "gptq-int4", "mmlu", 69, 70));                 // a KV row
  rows.back().kv_k = "q8_0";
  rows.push_back(row("flat", "a", "gptq-int8", "ppl", 6.0, 6.0));              // below resolution
  rows.push_back(row("nobase", "a", "gptq-int4", "mmlu", 69));                 // no baseline
  const auto report = fidelity::check_printed_figures(rows, {});
  std::size_t accounted = report.points.size();
  for (const auto& [reason, n] : report.skipped) accounted += n;
  CHECK(accounted == rows.size());
  // The checked rows: each family's GPTQ perplexity and MMLU.
  REQUIRE(report.points.size() == 6);
  for (const auto& p : report.points) {
    CHECK(p.format == WeightFormat::w4a16);
    if (p.kind == fidelity::PrintedKind::perplexity) CHECK(p.measured == Approx(10.0));  // 6.6 / 6.0
    else CHECK(p.measured == Approx(3.0));  // 70 - 67 points
    CHECK(p.predicted.low <= p.predicted.mid);
    CHECK(p.predicted.mid <= p.predicted.high);
  }
  CHECK(report.perplexity_by_format.at("w4a16").points == 3);
  CHECK(report.points_by_benchmark.at("mmlu").points == 3);
  CHECK(report.points_by_benchmark.at("family a").points == 1);
}

TEST_CASE("fidelity::check_printed_figures: a family is predicted by fits that never saw it", "[fidelity]") {
  // Family b's losses and MMLU drop grow 3x: its own predictions must not move (held out);
  // the other families' points must (b's pair, now 0.9 points per % instead of 0.3, joins c's
  // 0.3 in a's points map: least squares through the origin over the two, 0.6, twice as much).
  // The reports point into their rows: both datasets outlive them.
  const auto base_rows = dataset(1.0), worse_rows = dataset(3.0);
  const auto base = fidelity::check_printed_figures(base_rows, {});
  const auto worse = fidelity::check_printed_figures(worse_rows, {});
  REQUIRE(base.points.size() == worse.points.size());
  for (std::size_t i = 0; i < base.points.size(); ++i) {
    const auto& before = base.points[i];
    const auto& after = worse.points[i];
    REQUIRE(before.row->id == after.row->id);
    if (before.row->family == "b") CHECK(after.predicted.mid == Approx(before.predicted.mid));
    else if (before.kind == fidelity::PrintedKind::points) CHECK(after.predicted.mid == Approx(before.predicted.mid * 2));
  }
}

TEST_CASE("fidelity::check_printed_figures: the built-in dataset", "[fidelity]") {
  const auto rows = measurements::load_loss_rows();
  REQUIRE(rows.ok());
  const auto tokens = measurements::load_training_tokens();
  REQUIRE(tokens.ok());
  const auto report = fidelity::check_printed_figures(*rows, *tokens);
  std::size_t accounted = report.points.size();
  for (const auto& [reason, n] : report.skipped) accounted += n;
  CHECK(accounted == rows->size());
  // The figures of docs/fidelity.md with a small margin (MMLU: 46 rows, 0.81 points median
  // error, bias -0.16, 85% inside; w4a16 perplexity: 26 rows, all inside its 2.4-39% span at 8B).
  const auto& mmlu = report.points_by_benchmark.at("mmlu");
  CHECK(mmlu.points >= 45);
  CHECK(mmlu.median_error <= 0.9);
  CHECK(std::fabs(mmlu.median_bias) <= 0.3);
  CHECK(mmlu.inside >= 0.8);
  const auto& w4 = report.perplexity_by_format.at("w4a16");
  CHECK(w4.points >= 25);
  CHECK(w4.inside >= 0.8);
}
