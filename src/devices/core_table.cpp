#include "devices/core_table.hpp"

#include "io/embedded_data.hpp"
#include "io/yaml_fields.hpp"

namespace trilemma::devices {
namespace {

constexpr const char* k_path = "devices/cores.yaml";

}  // namespace

const std::vector<std::string>& isa_names() {
  static const std::vector<std::string> names = {"arm64", "x86-64", "xtensa"};
  return names;
}

Result<std::vector<CoreRates>> parse_core_table(const std::string& text, const std::string& file) {
  TRILEMMA_TRY(doc, io::parse_yaml(text, file));
  io::YamlContext ctx(file);
  io::FieldReader root(ctx, doc, "");
  std::vector<CoreRates> out;
  for (auto row : root.map_list("cores")) {
    CoreRates r;
    r.core = row.string("core");
    r.isa = row.choice("isa", isa_names());
    r.fp32_flops_per_cycle = row.positive("fp32_flops_per_cycle");
    r.fp16_flops_per_cycle = row.optional_positive("fp16_flops_per_cycle");
    r.int8_dot_ops_per_cycle = row.optional_positive("int8_dot_ops_per_cycle");
    r.int8_matmul_ops_per_cycle = row.optional_positive("int8_matmul_ops_per_cycle");
    auto sources = row.map_list("sources");
    for (auto& s : sources) {
      s.string_list("fields");
      const auto url = s.optional_string("url"), basis = s.optional_string("basis");
      s.optional_string("note");
      if (!ctx.failed() && !url && !basis) ctx.fail(s.node(), s.path(), "a source needs a url or a basis");
      s.finish();
    }
    if (!ctx.failed() && sources.empty()) ctx.fail(row.node(), row.field("sources"), "every core needs sources");
    row.finish();
    if (!ctx.failed() && find_core(out, r.core))
      ctx.fail(row.node()["core"], row.field("core"), "duplicate core '" + r.core + "'");
    out.push_back(std::move(r));
  }
  root.finish();
  if (ctx.failed()) return ctx.error();
  return out;
}

Result<const std::vector<CoreRates>*> core_table() {
  static const Result<std::vector<CoreRates>> table = [] {
    for (const auto& f : io::embedded_files())
      if (f.path == k_path) return parse_core_table(std::string(f.content), std::string(f.path));
    return Result<std::vector<CoreRates>>(std::vector<CoreRates>{});
  }();
  if (!table.ok()) return table.error();
  return &table.value();
}

const CoreRates* find_core(const std::vector<CoreRates>& table, const std::string& core) {
  for (const auto& r : table)
    if (r.core == core) return &r;
  return nullptr;
}

}  // namespace trilemma::devices
