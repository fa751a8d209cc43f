#include "measurements/loss_rows.hpp"

#include <algorithm>
#include <set>

#include "io/csv.hpp"
#include "io/embedded_data.hpp"

namespace trilemma::measurements {
namespace {

constexpr const char* k_loss_builtin = "data/measurements/loss.csv";
const std::vector<std::string> k_loss_required = {"id", "model", "family", "format", "metric", "value", "source_url", "locator"};
const std::vector<std::string> k_loss_optional = {"params_b", "active_params_b", "base_precision", "format_published", "bpw", "imatrix",
                                             "kv_k", "kv_v", "baseline_value", "eval_text", "context", "engine", "notes"};

}  // namespace

std::string LossRow::where() const { return file + ":" + std::to_string(line); }

Result<std::vector<LossRow>> parse_loss_csv(const std::string& text, const std::string& file) {
  TRILEMMA_TRY(table, io::parse_csv(text, file));
  if (auto ok = io::check_columns(table, k_loss_required, k_loss_optional); !ok.ok()) return ok.error();
  std::vector<LossRow> out;
  std::set<std::string> ids;
  for (const auto& record : table.records) {
    io::CsvFields f(table, record);
    LossRow r;
    r.file = file, r.line = record.line;
    r.id = f.required("id");
    r.model = f.required("model");
    r.family = f.required("family");
    r.format = f.text("format");
    r.format_published = f.text("format_published");
    r.base_precision = f.text("base_precision");
    r.params_b = f.positive("params_b");
    r.active_params_b = f.positive("active_params_b");
    r.bpw = f.positive("bpw");
    const std::string imatrix = f.text("imatrix");
    if (imatrix == "yes" || imatrix == "no") r.imatrix = imatrix == "yes";
    else if (!imatrix.empty()) f.fail("imatrix", "expected yes, no or empty, got '" + imatrix + "'");
    r.kv_k = f.text("kv_k"), r.kv_v = f.text("kv_v");
    r.metric = f.required("metric");
    const auto value = f.number("value");
    if (!value) f.fail("value", "required");
    r.value = value.value_or(0);
    r.baseline_value = f.number("baseline_value");
    if (r.metric == "ppl" && !r.baseline_value) f.fail("baseline_value", "an absolute perplexity needs its baseline");
    r.eval_text = f.text("eval_text"), r.engine = f.text("engine"), r.notes = f.text("notes");
    if (const auto c = f.positive("context")) r.context = std::uint32_t(std::min(*c, 1e9));
    r.source_url = f.required("source_url");
    r.locator = f.required("locator");
    if (!f.error() && !ids.insert(r.id).second) f.fail("id", "duplicate id '" + r.id + "'");
    if (f.error()) return *f.error();
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<LossRow>> load_loss_rows(const std::string& path) {
  TRILEMMA_TRY(text, io::read_file_or_embedded(path, k_loss_builtin));
  return parse_loss_csv(text, path.empty() ? k_loss_builtin : path);
}

}  // namespace trilemma::measurements
