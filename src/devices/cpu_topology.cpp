#include "devices/cpu_topology.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace trilemma::devices {
namespace {

std::string trimmed(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// Arm Ltd. (implementer 0x41) part numbers, as Linux's arch/arm64/include/asm/cputype.h lists
// them, for the cores devices/cores.yaml has rates for.
struct ArmPart {
  unsigned part;
  const char* name;
};
constexpr auto k_arm_parts = std::to_array<ArmPart>({
    {0xd03, "Cortex-A53"},
    {0xd05, "Cortex-A55"},
    {0xd08, "Cortex-A72"},
    {0xd0b, "Cortex-A76"},
    {0xd46, "Cortex-A510"},
    {0xd47, "Cortex-A710"},
    {0xd48, "Cortex-X2"},
    {0xd4d, "Cortex-A715"},
    {0xd4e, "Cortex-X3"},
    {0xd80, "Cortex-A520"},
    {0xd81, "Cortex-A720"},
});
constexpr unsigned k_arm_ltd = 0x41;

std::optional<double> read_number(const std::filesystem::path& file) {
  std::ifstream in(file);
  double v = 0;
  if (!(in >> v) || v < 0) return std::nullopt;
  return v;
}

}  // namespace

CpuInfo parse_cpuinfo(const std::string& text) {
  CpuInfo info;
  std::istringstream in(text);
  std::string line;
  std::optional<unsigned> processor;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trimmed(line.substr(0, colon)), value = trimmed(line.substr(colon + 1));
    if (key == "processor") {
      char* end = nullptr;
      const unsigned long n = std::strtoul(value.c_str(), &end, 10);
      processor = end != value.c_str() && *end == '\0' && n < 65536 ? std::optional(unsigned(n)) : std::nullopt;
    } else if (key == "model name") {
      info.model_name = value;
    } else if (key == "cpu MHz") {
      info.max_mhz = std::max(info.max_mhz, std::atof(value.c_str()));
    } else if (key == "flags" || key == "Features") {
      std::istringstream ss(value);
      std::string f;
      while (ss >> f) info.flags.insert(f);
    } else if ((key == "CPU implementer" || key == "CPU part") && processor) {
      const unsigned v = unsigned(std::strtoul(value.c_str(), nullptr, 0));
      auto& slot = info.arm_part[*processor];
      (key == "CPU part" ? slot.second : slot.first) = v;
    }
  }
  return info;
}

std::string arm_core_name(unsigned implementer, unsigned part) {
  if (implementer != k_arm_ltd) return "";
  for (const auto& p : k_arm_parts)
    if (p.part == part) return p.name;
  return "";
}

std::vector<std::string> arm_features(const std::set<std::string>& flags) {
  std::vector<std::string> out{"neon"};
  for (auto [flag, name] : {std::pair{"asimddp", "dotprod"}, {"i8mm", "i8mm"}, {"asimdhp", "fp16"}, {"bf16", "bf16"},
                            {"sve", "sve"}, {"sve2", "sve2"}, {"sme", "sme"}})
    if (flags.count(flag)) out.emplace_back(name);
  return out;
}

std::vector<std::string> x86_features(const std::set<std::string>& flags) {
  std::vector<std::string> out;
  for (auto [flag, name] : {std::pair{"avx2", "avx2"}, {"fma", "fma"}, {"f16c", "f16c"}, {"avx512f", "avx512"},
                            {"avx_vnni", "avx-vnni"}, {"avx512_vnni", "avx512-vnni"}, {"amx_int8", "amx"}})
    if (flags.count(flag)) out.emplace_back(name);
  return out;
}

std::vector<CoreGroup> read_core_groups(const std::filesystem::path& root, const CpuInfo& info) {
  std::vector<CoreGroup> groups;
  std::error_code ec;
  std::filesystem::directory_iterator it(root, ec), end;
  std::vector<unsigned> cpus;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0) continue;
    if (!std::all_of(name.begin() + 3, name.end(), [](char c) { return c >= '0' && c <= '9'; }) || name.size() > 8) continue;
    cpus.push_back(unsigned(std::stoul(name.substr(3))));
  }
  std::sort(cpus.begin(), cpus.end());
  for (const unsigned cpu : cpus) {
    const auto dir = root / ("cpu" + std::to_string(cpu));
    CoreGroup g;
    g.cpus = {cpu};
    if (auto c = read_number(dir / "cpu_capacity")) g.capacity = unsigned(*c);
    if (auto khz = read_number(dir / "cpufreq" / "cpuinfo_max_freq")) g.max_ghz = *khz / 1e6;
    if (auto p = info.arm_part.find(cpu); p != info.arm_part.end()) g.core = arm_core_name(p->second.first, p->second.second);
    auto same = std::find_if(groups.begin(), groups.end(), [&](const CoreGroup& o) {
      return o.capacity == g.capacity && o.max_ghz == g.max_ghz && o.core == g.core;
    });
    if (same != groups.end()) same->cpus.push_back(cpu);
    else groups.push_back(std::move(g));
  }
  std::stable_sort(groups.begin(), groups.end(), [](const CoreGroup& a, const CoreGroup& b) {
    if (a.capacity.value_or(0) != b.capacity.value_or(0)) return a.capacity.value_or(0) > b.capacity.value_or(0);
    return a.max_ghz > b.max_ghz;
  });
  return groups;
}

}  // namespace trilemma::devices
