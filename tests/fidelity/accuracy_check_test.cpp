// fidelity::check_accuracy: hand-computed ratios against the first model's reference figures
// (method priors), the rows it must leave out (and why), and the built-in dataset scored leave
// one family out end to end, against the targets.
#include <catch2/catch.hpp>

#include <cmath>

#include "accuracy/accuracy_model.hpp"
#include "fidelity/accuracy_check.hpp"

using namespace trilemma;

namespace {

measurements::LossRow row(const std::string& id, double params_b, const std::string& format, const std::string& metric, double value) {
  measurements::LossRow r;
  r.id = id, r.model = id, r.family = "fam", r.params_b = params_b, r.format = format, r.base_precision = "f16";
  r.metric = metric, r.value = value;
  return r;
}

}  // namespace

TEST_CASE("fidelity::check_accuracy: ratios against the model's reference figures", "[fidelity]") {
  // At the reference model's size the prediction is the reference figure itself.
  const auto& q4 = accuracy::weight_loss_figure(WeightFormat::q4_0);
  const double ref_b = q4.reference_params / 1e9;
  std::vector<measurements::LossRow> rows = {
      row("half", ref_b, "q4_0", "ppl_delta_pct", q4.ppl_delta_pct.mid / 2),  // predicted 2x too high
      row("double", ref_b, "q4_0", "ppl_delta_pct", q4.ppl_delta_pct.mid * 2),  // predicted 2x too low
      row("exact", ref_b, "q4_0", "ppl_delta_pct", q4.ppl_delta_pct.mid),
      row("absolute", ref_b, "q4_0", "ppl", 0),
  };
  rows[3].value = 6.0 * (1 + q4.ppl_delta_pct.mid / 100), rows[3].baseline_value = 6.0;  // same as "exact"
  const auto report = fidelity::check_accuracy(rows, {}, fidelity::AccuracyMethod::priors);
  REQUIRE(report.points.size() == 4);
  CHECK(report.points[0].ratio() == Approx(2.0));
  CHECK(report.points[1].ratio() == Approx(0.5));
  CHECK(report.points[3].measured == Approx(q4.ppl_delta_pct.mid));
  const auto& s = report.by_metric.at("ppl_delta_pct");
  CHECK(s.points == 4);
  // |ln ratio| = ln2, ln2, 0, 0: median ln2/2, so the median ratio error is sqrt(2).
  CHECK(s.median_ratio_error == Approx(std::sqrt(2.0)));
  CHECK(s.median_ratio == Approx(1.0));
  CHECK(report.points[2].inside());
  CHECK(s.inside == Approx(double(report.points[0].inside() + report.points[1].inside() + 2) / 4));
}

TEST_CASE("fidelity::check_accuracy: rows the model cannot express are counted by reason", "[fidelity]") {
  std::vector<measurements::LossRow> rows = {row("gptq", 7, "gptq-int4", "ppl_delta_pct", 3),
                                             row("mmlu", 7, "q4_0", "mmlu", 60), row("noise", 7, "q8_0", "ppl_delta_pct", 0.01),
                                             row("kv", 7, "q4_0", "kld_mean", 0.1), row("noparams", 7, "q4_0", "kld_mean", 0.1)};
  rows[3].kv_k = "q8_0";  // KV rows: the KV term is not fitted
  rows[4].params_b.reset();
  const auto report = fidelity::check_accuracy(rows, {}, fidelity::AccuracyMethod::leave_one_family_out);
  CHECK(report.points.empty());
  std::size_t skipped = 0;
  for (const auto& [reason, n] : report.skipped) skipped += n;
  CHECK(skipped == rows.size());
  CHECK(report.skipped.count("parameter count not published") == 1);
}

TEST_CASE("fidelity::check_accuracy: leave one family out on the built-in loss dataset", "[fidelity]") {
  const auto rows = measurements::load_loss_rows();
  REQUIRE(rows.ok());
  const auto tokens = measurements::load_training_tokens();
  REQUIRE(tokens.ok());
  const auto report = fidelity::check_accuracy(*rows, *tokens, fidelity::AccuracyMethod::leave_one_family_out);
  REQUIRE(report.by_metric.count("ppl_delta_pct"));
  REQUIRE(report.by_metric.count("kld_mean"));
  std::size_t accounted = report.points.size();
  for (const auto& [reason, n] : report.skipped) accounted += n;
  CHECK(accounted == rows->size());  // every row compared or left out with a reason
  const auto& ppl = report.by_metric.at("ppl_delta_pct");
  const auto& kld = report.by_metric.at("kld_mean");
  CHECK(ppl.points >= 100);
  CHECK(report.by_family.at("ppl_delta_pct").size() >= 8);
  // The figures of docs/fidelity.md (1.44x, 1.34x, 78% and 80% inside) with a small margin:
  // tighten them when the model improves. The target is 1.3x and 75-85% inside.
  // Tightened from 1.52x / 1.37x and a KLD range holding up to 93% when session 18 tripled the
  // KLD rows' families (docs/fidelity.md).
  CHECK(ppl.median_ratio_error <= 1.47);
  CHECK(kld.median_ratio_error <= 1.37);
  CHECK(ppl.inside >= 0.75);
  CHECK(ppl.inside <= 0.85);
  CHECK(kld.inside >= 0.75);
  CHECK(kld.inside <= 0.85);
  CHECK(report.by_family.at("kld_mean").size() >= 10);
  // The first, unfitted model on the same rows is worse: the fit earns its place.
  const auto priors = fidelity::check_accuracy(*rows, *tokens, fidelity::AccuracyMethod::priors);
  CHECK(priors.by_metric.at("ppl_delta_pct").median_ratio_error > ppl.median_ratio_error);
}

TEST_CASE("fidelity::check_accuracy: a dataset of one family has nothing to hold it out against", "[fidelity]") {
  // A user's --loss-data with one family: every row is left out with the reason, no fit on no rows.
  const std::vector<measurements::LossRow> rows = {row("a", 8, "q4_0", "kld_mean", 0.07), row("b", 8, "q2_k", "kld_mean", 0.4),
                                                   row("c", 8, "q4_0", "ppl_delta_pct", 7)};
  const auto report = fidelity::check_accuracy(rows, {}, fidelity::AccuracyMethod::leave_one_family_out);
  CHECK(report.points.empty());
  CHECK(report.skipped.at("no other family in the data to predict the family from") == rows.size());
}
