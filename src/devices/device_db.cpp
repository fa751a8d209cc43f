#include "devices/device_db.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "devices/device_loader.hpp"
#include "io/atomic_write.hpp"
#include "io/embedded_data.hpp"
#include "io/yaml_fields.hpp"

namespace trilemma::devices {
namespace {

HostProber& prober() {
  static HostProber p;
  return p;
}

std::string stem_of(std::string_view path) {
  return std::filesystem::path(std::string(path)).stem().string();
}


// A built-in device with its fitted calibration, unless its file has one.
Result<Device> builtin(const io::EmbeddedFile& f, const std::string& id) {
  TRILEMMA_TRY(d, parse_device(std::string(f.content), std::string(f.path), id));
  if (!d.calibration)
    if (const auto* c = fitted_calibration(d.id)) d.calibration = *c;
  return d;
}

// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t prev = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}

}  // namespace

bool is_shared_table(const std::string& stem) {
  return stem == "classes" || stem == "derating" || stem == "cores" || stem == "fitted" || stem == "power";
}

Result<std::vector<Device>> builtin_devices() {
  std::vector<Device> out;
  for (const auto& f : io::embedded_yaml_in("devices")) {
    const std::string stem = stem_of(f.path);
    if (is_shared_table(stem)) continue;
    TRILEMMA_TRY(d, builtin(f, stem));
    out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.id < b.id; });
  return out;
}

std::string host_profile_path() {
  if (const char* p = std::getenv("TRILEMMA_HOST_PROFILE")) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME")) return std::string(x) + "/trilemma/host.yaml";
  if (const char* h = std::getenv("HOME")) return std::string(h) + "/.cache/trilemma/host.yaml";
  return ".trilemma-host.yaml";
}

void set_host_prober(HostProber p) { prober() = std::move(p); }

Result<Device> resolve_device(const std::string& id_or_path) {
  if (id_or_path == "host") {
    const std::string path = host_profile_path();
    if (std::filesystem::exists(path)) {
      TRILEMMA_TRY(text, io::read_text_file(path));
      return parse_device(text, path, "");
    }
    if (!prober()) return make_error(ErrorKind::input, "host", "", "no host profile cached and no probe available");
    TRILEMMA_TRY(d, prober()());
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    auto written = io::write_file_atomically(path, device_to_yaml(d));
    (void)written;  // a read-only cache is not fatal: the probe result is still used
    return d;
  }
  const bool looks_like_path = id_or_path.find('/') != std::string::npos || id_or_path.ends_with(".yaml") ||
                               id_or_path.ends_with(".yml");
  if (looks_like_path) {
    TRILEMMA_TRY(text, io::read_text_file(id_or_path));
    return parse_device(text, id_or_path, "");
  }
  for (const auto& f : io::embedded_yaml_in("devices")) {
    if (stem_of(f.path) == id_or_path && !is_shared_table(id_or_path)) return builtin(f, id_or_path);
  }
  // Unknown id: suggest the closest ones.
  std::vector<std::pair<std::size_t, std::string>> near;
  for (const auto& f : io::embedded_yaml_in("devices")) {
    const std::string stem = stem_of(f.path);
    if (is_shared_table(stem)) continue;
    std::size_t dist = edit_distance(id_or_path, stem);
    if (stem.find(id_or_path) != std::string::npos) dist = std::min<std::size_t>(dist, 1);
    near.emplace_back(dist, stem);
  }
  std::sort(near.begin(), near.end());
  std::string hint;
  for (std::size_t i = 0; i < near.size() && i < 3; ++i) hint += (i ? ", " : "") + near[i].second;
  return make_error(ErrorKind::input, "", "", "unknown device '" + id_or_path + "'" +
                                                  (hint.empty() ? "" : " (closest: " + hint + ")") +
                                                  "; `trilemma devices list` shows all");
}

Result<std::vector<std::pair<std::string, Calibration>>> parse_fitted_calibrations(const std::string& text,
                                                                                    const std::string& file) {
  TRILEMMA_TRY(doc, io::parse_yaml(text, file));
  io::YamlContext ctx(file);
  io::FieldReader root(ctx, doc, "");
  root.string("fitted_on");
  root.raw("backends");  // the derating tables' parts: roofline reads them
  root.raw("ranges");
  std::vector<std::pair<std::string, Calibration>> out;
  if (auto devices = root.optional_map("devices")) {
    for (const auto& [id, key_node] : devices->keys()) {
      out.emplace_back(id, read_calibration(devices->map(id)));
    }
    devices->finish();
  }
  root.finish();
  if (ctx.failed()) return ctx.error();
  return out;
}

const Calibration* fitted_calibration(const std::string& id) {
  static const std::vector<std::pair<std::string, Calibration>> table = [] {
    for (const auto& f : io::embedded_files())
      if (f.path == "devices/fitted.yaml") {
        // Built in and checked by the tests; a broken file fits nothing rather than failing every device.
        auto parsed = parse_fitted_calibrations(std::string(f.content), std::string(f.path));
        if (parsed.ok()) return *parsed;
      }
    return std::vector<std::pair<std::string, Calibration>>{};
  }();
  for (const auto& [key, c] : table)
    if (key == id) return &c;
  return nullptr;
}

Result<std::vector<ClassDefaults>> parse_class_table(const std::string& text, const std::string& file) {
  static const std::vector<std::string> k_classes = {"phone", "laptop", "desktop", "board", "module", "mcu", "gpu"};
  TRILEMMA_TRY(doc, io::parse_yaml(text, file));
  io::YamlContext ctx(file);
  io::FieldReader root(ctx, doc, "");
  auto classes = root.map("classes");
  std::vector<ClassDefaults> out;
  for (const auto& name : k_classes) {
    auto row = classes.map(name);
    ClassDefaults c{name, row.number("os_reserve_fraction"), ""};
    if (!ctx.failed() && !(c.os_reserve_fraction >= 0 && c.os_reserve_fraction < 1))
      ctx.fail(row.node()["os_reserve_fraction"], row.field("os_reserve_fraction"), "must be in [0, 1)");
    for (auto s : row.map_list("sources")) {
      s.string_list("fields");
      const auto url = s.optional_string("url"), basis = s.optional_string("basis");
      s.optional_string("note");
      if (!ctx.failed() && !url && !basis) ctx.fail(s.node(), s.path(), "a source needs a url or a basis");
      if (c.source.empty()) c.source = url ? *url : basis.value_or("");
      s.finish();
    }
    row.finish();
    out.push_back(std::move(c));
  }
  classes.finish();
  root.finish();
  if (ctx.failed()) return ctx.error();
  return out;
}

Result<const std::vector<ClassDefaults>*> class_table() {
  static const Result<std::vector<ClassDefaults>> table = []() -> Result<std::vector<ClassDefaults>> {
    for (const auto& f : io::embedded_files())
      if (f.path == "devices/classes.yaml") return parse_class_table(std::string(f.content), std::string(f.path));
    return make_error(ErrorKind::internal, "devices/classes.yaml", "", "not compiled in");
  }();
  if (!table.ok()) return table.error();
  return &table.value();
}

double usable_memory_gib(const Device& d) {
  if (d.os_reserve_gib) return d.ram_gib - *d.os_reserve_gib;
  double reserve = 0;
  if (auto table = class_table(); table.ok())
    for (const auto& c : **table)
      if (c.device_class == d.device_class) reserve = c.os_reserve_fraction;
  return d.ram_gib * (1.0 - reserve);
}

}  // namespace trilemma::devices
