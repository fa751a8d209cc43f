#include "power/power_tables.hpp"

#include <algorithm>

#include "io/embedded_data.hpp"
#include "devices/device_loader.hpp"
#include "io/yaml_fields.hpp"

namespace trilemma::power {
namespace {

constexpr const char* k_path = "devices/power.yaml";
const std::vector<std::string> k_classes = {"phone", "laptop", "desktop", "board", "module", "mcu", "gpu"};

std::optional<Range> optional_range(io::FieldReader& row, const std::string& key) {
  if (!row.has(key)) return std::nullopt;
  return row.range(key);
}

ClassPower read_class(io::FieldReader row, const std::string& name) {
  ClassPower c;
  c.device_class = name;
  c.decode_w = optional_range(row, "decode_w");
  c.prefill_w = optional_range(row, "prefill_w");
  c.decode_tdp_fraction = optional_range(row, "decode_tdp_fraction");
  c.prefill_tdp_fraction = optional_range(row, "prefill_tdp_fraction");
  if (row.has("backends"))
    for (const auto& b : row.string_list("backends")) {
      if (auto backend = backend_from_name(b)) c.backends.push_back(*backend);
      else row.context().fail(row.node()["backends"], row.field("backends"), "unknown backend '" + b + "' (expected one of: " + backend_names() + ")");
    }
  c.sustained = devices::read_sustained_points(row);
  for (const auto& [key, fraction] : {std::pair{"decode_tdp_fraction", c.decode_tdp_fraction},
                                      std::pair{"prefill_tdp_fraction", c.prefill_tdp_fraction}})
    if (!row.context().failed() && fraction && fraction->high > 3)
      row.context().fail(row.node()[key], row.field(key), "a multiple of the TDP: at most 3 (turbo runs above it, not that far)");
  c.sources = io::read_source_texts(row);
  row.finish();
  return c;
}

}  // namespace

bool ClassPower::covers(Backend b) const {
  return backends.empty() || std::find(backends.begin(), backends.end(), b) != backends.end();
}

std::string ClassPower::source_of(const std::string& field) const { return io::source_text_of(sources, field); }

const ClassPower* PowerTables::find(const std::string& device_class) const {
  for (const auto& c : classes)
    if (c.device_class == device_class) return &c;
  return nullptr;
}

Result<PowerTables> parse_power_tables(const std::string& yaml_text, const std::string& file) {
  TRILEMMA_TRY(doc, io::parse_yaml(yaml_text, file));
  io::YamlContext ctx(file);
  io::FieldReader root(ctx, doc, "");
  auto classes = root.map("classes");
  PowerTables t;
  // Every class has a row: a class without a prior says so with a source, not by omission.
  for (const auto& name : k_classes) t.classes.push_back(read_class(classes.map(name), name));
  classes.finish();
  root.finish();
  if (ctx.failed()) return ctx.error();
  return t;
}

Result<const PowerTables*> power_tables() {
  static const Result<PowerTables> table = []() -> Result<PowerTables> {
    for (const auto& f : io::embedded_files())
      if (f.path == k_path) return parse_power_tables(std::string(f.content), std::string(f.path));
    return make_error(ErrorKind::internal, k_path, "", "not compiled in");
  }();
  if (!table.ok()) return table.error();
  return &table.value();
}

}  // namespace trilemma::power
