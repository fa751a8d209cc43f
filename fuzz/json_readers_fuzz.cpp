// The readers of trilemma's own reports handed back to it (reliability D8, D10): `--measured-kl`
// (eval --json, or llama-perplexity output), `gate --baseline` (gate --json), and calibrate's
// verify/run reports (verify --json, run --json). The first byte picks the reader, the rest is
// the document. Oracle: a reader refuses or returns figures that are finite and in their
// physical range, and a baseline comparison leaves a report with no impossible figure.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/json_output.hpp"
#include "fuzz_input.hpp"
#include "gate/gate.hpp"
#include "gate/report.hpp"
#include "io/json_text.hpp"
#include "models/measured_loss.hpp"
#include "verify/report_points.hpp"

using namespace trilemma;

namespace {


bool amount(double v) { return std::isfinite(v) && v >= 0; }

// A report as `gate` builds it, for the baseline to be compared with: the seeds' model and
// budget names, one outcome passing with a plan, one failing without.
gate::Report current_report() {
  gate::Report r;
  r.budgets_file = "budgets.yaml";
  r.margin_pct = 5;
  for (const auto& [model, budget, pass] : {std::tuple{"qwen2.5-0.5b", "phone-chat", true}, {"llama-3.1-8b", "phone-chat", false},
                                            {"qwen2.5-0.5b", "laptop-assistant", true}}) {
    gate::Outcome o;
    o.model = model, o.budget = budget, o.pass = pass, o.has_plan = pass;
    o.figures.values = {12.5, 640, 0.61, 1.4, 0.02, 0.35};
    r.models.push_back(model);
    r.outcomes.push_back(o);
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text = fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {  // eval --json as --measured-kl FILE
      fuzz::MemoryFile file(data + 1, size - 1);
      if (auto m = models::parse_measured_kl(file.path())) FUZZ_CHECK(amount(m->kld));
      break;
    }
    case 1: {  // llama-perplexity --kl-divergence output
      if (auto kld = models::kld_from_llama_perplexity(text, "kld.log")) FUZZ_CHECK(amount(*kld));
      break;
    }
    case 2: {  // gate --baseline
      auto report = current_report();
      if (!gate::compare_with_baseline(report, text, "base.json")) break;
      for (const auto& o : report.outcomes)
        for (const auto& r : o.regressions) FUZZ_CHECK(std::isfinite(r.baseline) && std::isfinite(r.value) && std::isfinite(r.change_pct));
      FUZZ_CHECK(cli::impossible_figure(gate::report_to_json(report)).empty());
      break;
    }
    default: {  // verify --json / run --json as calibrate reads them
      auto doc = io::parse_json(text, "report.json");
      if (!doc) break;
      auto points = verify::report_points(*doc, "report.json", !(doc->is_object() && doc->contains("model")) ? "qwen2.5-0.5b" : "");
      if (!points) break;
      for (const auto& p : *points) {
        const auto& m = p.report.measured;
        for (const auto* s : {&m.ttft_ms, &m.prefill_tok_s, &m.decode_tok_s}) {
          FUZZ_CHECK(amount(s->median) && amount(s->min) && amount(s->max));
          for (double v : s->runs) FUZZ_CHECK(amount(v));
        }
        FUZZ_CHECK(amount(m.peak_rss_bytes) && amount(m.weight_bytes) && amount(m.kv_bytes) && amount(m.acceptance));
        if (m.kl_mean) FUZZ_CHECK(amount(*m.kl_mean));
        if (m.top1) FUZZ_CHECK(*m.top1 >= 0 && *m.top1 <= 1);
      }
      break;
    }
  }
  return 0;
}
