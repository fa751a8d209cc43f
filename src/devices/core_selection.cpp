#include "devices/core_selection.hpp"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace trilemma::devices {
namespace {

Error usage(const std::string& message) { return make_error(ErrorKind::usage, "--cores", "", message); }

// A decimal CPU number below the kernel's set size; nullopt otherwise.
std::optional<unsigned> cpu_number(const std::string& s) {
  if (s.empty() || s.size() > 5 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const unsigned long n = std::stoul(s);
  if (n >= CPU_SETSIZE) return std::nullopt;
  return unsigned(n);
}

}  // namespace

Result<std::vector<unsigned>> parse_core_list(const std::string& text) {
  std::vector<unsigned> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const std::size_t dash = item.find('-');
    const auto first = cpu_number(item.substr(0, dash));
    const auto last = dash == std::string::npos ? first : cpu_number(item.substr(dash + 1));
    if (!first || !last || *last < *first)
      return usage("'" + item + "' in '" + text + "' is not a CPU number or range (expected big, all, or a list like 0-3,6; CPUs below " +
                   std::to_string(CPU_SETSIZE) + ")");
    for (unsigned c = *first; c <= *last; ++c) out.push_back(c);
    start = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<std::vector<unsigned>> select_cores(const std::string& spec, const std::vector<CoreGroup>& groups) {
  if (spec == "all") return std::vector<unsigned>{};
  if (spec == "big") return groups.size() > 1 ? groups.front().cpus : std::vector<unsigned>{};
  auto list = parse_core_list(spec);
  if (!list.ok()) return list.error();
  if (!groups.empty())
    for (const unsigned c : *list)
      if (std::none_of(groups.begin(), groups.end(),
                       [&](const CoreGroup& g) { return std::find(g.cpus.begin(), g.cpus.end(), c) != g.cpus.end(); }))
        return usage("CPU " + std::to_string(c) + " is not one of this machine's (/sys/devices/system/cpu)");
  return *list;
}

Status pin_to_cores(const std::vector<unsigned>& cpus) {
  if (cpus.empty()) return Ok{};
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const unsigned c : cpus) CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    return make_error(ErrorKind::usage, "--cores", "", std::string("cannot run on the CPUs asked for: ") + std::strerror(errno));
  return Ok{};
}

Result<std::vector<unsigned>> apply_core_selection(const std::string& spec) {
  auto cpus = select_cores(spec, read_core_groups("/sys/devices/system/cpu", {}));
  if (!cpus.ok()) return cpus.error();
  if (auto s = pin_to_cores(*cpus); !s.ok()) return s.error();
  return *cpus;
}

std::vector<unsigned> allowed_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<unsigned> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (unsigned c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

}  // namespace trilemma::devices
