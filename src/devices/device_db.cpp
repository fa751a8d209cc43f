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

Result<std::vector<Device>> builtin_devices() {
  std::vector<Device> out;
  for (const auto& f : io::embedded_yaml_in("devices")) {
    const std::string stem = stem_of(f.path);
    if (stem == "classes" || stem == "derating") continue;  // shared tables, not devices
    TRILEMMA_TRY(d, parse_device(std::string(f.content), std::string(f.path), stem));
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
    if (stem_of(f.path) == id_or_path) return parse_device(std::string(f.content), std::string(f.path), id_or_path);
  }
  // Unknown id: suggest the closest ones.
  std::vector<std::pair<std::size_t, std::string>> near;
  for (const auto& f : io::embedded_yaml_in("devices")) {
    const std::string stem = stem_of(f.path);
    if (stem == "classes" || stem == "derating") continue;
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

ClassDefaults class_defaults(const std::string& device_class) {
  ClassDefaults out;
  for (const auto& f : io::embedded_yaml_in("devices")) {
    if (stem_of(f.path) != "classes") continue;
    auto doc = io::parse_yaml(std::string(f.content), std::string(f.path));
    if (!doc.ok()) return out;
    const YAML::Node node = (*doc)["classes"][device_class];
    if (!node.IsDefined()) return out;
    out.os_reserve_fraction = node["os_reserve_fraction"].as<double>(out.os_reserve_fraction);
    if (node["sources"].IsSequence() && node["sources"].size() > 0) {
      const auto s = node["sources"][0];
      out.source = s["url"] ? s["url"].as<std::string>() : s["basis"].as<std::string>("");
    }
  }
  return out;
}

double usable_memory_gib(const Device& d) {
  if (d.os_reserve_gib) return d.ram_gib - *d.os_reserve_gib;
  return d.ram_gib * (1.0 - class_defaults(d.device_class).os_reserve_fraction);
}

}  // namespace trilemma::devices
