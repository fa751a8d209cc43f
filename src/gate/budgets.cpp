// Budgets file reader. Layout (docs/budgets.md):
//   version: 1
//   budgets:
//     - {name, device, scenario, context, prompt?, ram_gib?,
//        limits: {min_decode_tok_s?, max_ttft_ms?, max_memory_gib?, max_loss_points?, max_kld?,
//                 max_joules_per_token?},
//        weights?: {min_bits?, max_bits?, allowed?: [format...]}}
#include "gate/budgets.hpp"

#include <algorithm>
#include <set>

#include "devices/device_db.hpp"
#include "io/atomic_write.hpp"
#include "io/yaml_fields.hpp"
#include "types/deployment.hpp"
#include "types/safe_text.hpp"

namespace trilemma::gate {
namespace {

void read_limits(io::FieldReader r, Limits& l) {
  l.min_decode_tok_s = r.optional_positive("min_decode_tok_s");
  l.max_ttft_ms = r.optional_positive("max_ttft_ms");
  l.max_memory_gib = r.optional_positive("max_memory_gib");
  l.max_loss_points = r.optional_positive("max_loss_points");
  l.max_kld = r.optional_positive("max_kld");
  l.max_joules_per_token = r.optional_positive("max_joules_per_token");
  r.finish();  // a misspelt limit is reported as such, not as "names no limit"
  if (!r.context().failed() && !l.min_decode_tok_s && !l.max_ttft_ms && !l.max_memory_gib && !l.max_loss_points &&
      !l.max_kld && !l.max_joules_per_token)
    r.context().fail(r.node(), r.path(),
                     "names no limit (min_decode_tok_s, max_ttft_ms, max_memory_gib, max_loss_points, max_kld, max_joules_per_token)");
}

void read_weights(io::FieldReader r, Budget& b) {
  auto& w = b.weights;
  w.min_bits = r.optional_positive("min_bits");
  w.max_bits = r.optional_positive("max_bits");
  if (r.has("allowed")) {
    const YAML::Node list = r.node()["allowed"];
    w.allowed = r.string_list("allowed");
    for (std::size_t i = 0; i < w.allowed.size() && !r.context().failed(); ++i)
      if (!weight_format_from_name(w.allowed[i]))
        r.context().fail(list[i], r.field("allowed") + "[" + std::to_string(i) + "]",
                         "unknown weight format '" + w.allowed[i] + "'");
  } else {
    r.raw("allowed");
  }
  if (!r.context().failed() && w.min_bits && w.max_bits && *w.min_bits > *w.max_bits)
    r.context().fail(r.node()["max_bits"], r.field("max_bits"), "must be >= min_bits");
  r.finish();
  if (r.context().failed() || (!w.min_bits && !w.max_bits && w.allowed.empty())) return;
  for (const auto& f : weight_formats()) {
    const double bits = weight_bits(f.format);
    if (w.min_bits && bits < *w.min_bits) continue;
    if (w.max_bits && bits > *w.max_bits) continue;
    if (!w.allowed.empty() && std::find(w.allowed.begin(), w.allowed.end(), f.name) == w.allowed.end()) continue;
    b.weight_formats.emplace_back(f.name);
  }
  if (b.weight_formats.empty()) r.context().fail(r.node(), r.path(), "no weight format satisfies this range");
}

void resolve(io::FieldReader& r, Budget& b) {
  auto& ctx = r.context();
  if (ctx.failed()) return;
  auto device = devices::resolve_device(b.device);
  if (!device.ok()) {
    ctx.fail(r.node()["device"], r.field("device"), "unknown device '" + b.device + "': " + device.error().to_string());
    return;
  }
  b.resolved_device = *device;
  if (b.ram_gib) b.resolved_device.ram_gib = *b.ram_gib;
  auto profile = solver::resolve_profile(b.scenario);
  if (!profile.ok()) {
    ctx.fail(r.node()["scenario"], r.field("scenario"),
             "unknown scenario '" + b.scenario + "' (expected latency, memory, accuracy or a profile YAML): " +
                 profile.error().message);
    return;
  }
  b.profile = *profile;
}

}  // namespace

double weight_bits(WeightFormat format) { return bits_per_element(info(format).bulk); }

Result<BudgetFile> parse_budgets(const std::string& text, const std::string& file) {
  TRILEMMA_TRY(doc, io::parse_yaml(text, file));
  io::YamlContext ctx(file);
  io::FieldReader root(ctx, doc, "");
  BudgetFile out;
  out.path = file;
  const std::uint32_t version = root.count("version");
  if (!ctx.failed() && version != k_budgets_version)
    ctx.fail(root.node()["version"], "version",
             "version " + std::to_string(version) + " is not one this trilemma reads (" + std::to_string(k_budgets_version) + ")");
  std::set<std::string> names;
  auto entries = root.map_list("budgets");
  if (!ctx.failed() && entries.empty()) ctx.fail(root.node()["budgets"], "budgets", "must list at least one budget");
  for (auto& r : entries) {
    if (ctx.failed()) break;
    Budget b;
    b.line = r.node().Mark().line + 1;
    b.name = r.id("name", "");
    if (!ctx.failed() && !names.insert(b.name).second) ctx.fail(r.node()["name"], r.field("name"), "duplicate budget name '" + b.name + "'");
    b.device = r.string("device");
    // An id or a profile's path, at most a path's length: a 5 MB id once took half a minute to
    // be refused by the device lookup's suggestions (reliability D26).
    if (!ctx.failed() && b.device.size() > k_max_path_length)
      ctx.fail(r.node()["device"], r.field("device"), "is " + std::to_string(b.device.size()) + " characters long (at most " +
                                                          std::to_string(k_max_path_length) + ": a device id or a profile's path)");
    b.scenario = r.string("scenario");
    if (!ctx.failed() && b.scenario.size() > k_max_path_length)
      ctx.fail(r.node()["scenario"], r.field("scenario"), "is longer than a path");
    b.context = r.count("context");
    if (!ctx.failed() && (b.context == 0 || b.context > k_max_context))
      ctx.fail(r.node()["context"], r.field("context"), "must be 1.." + std::to_string(k_max_context));
    b.prompt = r.optional_count("prompt").value_or(0);
    // A prompt longer than the context cannot be planned (reliability D24).
    if (!ctx.failed() && b.prompt > b.context)
      ctx.fail(r.node()["prompt"], r.field("prompt"), std::to_string(b.prompt) + " tokens exceed the budget's context of " +
                                                      std::to_string(b.context));
    b.ram_gib = r.optional_positive("ram_gib");
    if (!ctx.failed()) read_limits(r.map("limits"), b.limits);
    if (auto w = r.optional_map("weights"); w && !ctx.failed()) read_weights(*w, b);
    r.finish();
    resolve(r, b);
    out.budgets.push_back(std::move(b));
  }
  root.finish();
  if (ctx.failed()) return ctx.error();
  return out;
}

Result<BudgetFile> load_budgets(const std::string& path) {
  TRILEMMA_TRY(text, io::read_text_file(path));
  return parse_budgets(text, path);
}

}  // namespace trilemma::gate
