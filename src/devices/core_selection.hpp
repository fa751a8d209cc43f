// `--cores big|all|LIST` for the commands that run the engine: which logical CPUs its threads
// may use. The process is pinned before the engine starts its thread pool, so every worker
// inherits the mask (the engine needs no knowledge of it); `big` is the fastest group of cores
// that sysfs reports (devices/cpu_topology.hpp), where a phone's or board's big.LITTLE SoC
// would otherwise put some of the threads on its slow cores.
#pragma once
#include <string>
#include <vector>

#include "devices/cpu_topology.hpp"
#include "types/result.hpp"

namespace trilemma::devices {

// The help text of every command's --cores option.
inline constexpr const char* k_cores_option_help =
    "CPUs the engine's threads may use: all, big (the fastest cluster), or a list like 0-3,6";

// "0-3,6" -> {0, 1, 2, 3, 6}, sorted and unique. Errors name `--cores`.
Result<std::vector<unsigned>> parse_core_list(const std::string& text);

// The CPUs `spec` selects among `groups` (fastest first): "all" -> {} (no pinning), "big" -> the
// first group's (or {} when there is only one kind of core), a list -> itself, each of which
// must be a CPU `groups` lists when it lists any.
Result<std::vector<unsigned>> select_cores(const std::string& spec, const std::vector<CoreGroup>& groups);

// Restricts this process (and the threads it starts from now on) to `cpus`; {} leaves it alone.
Status pin_to_cores(const std::vector<unsigned>& cpus);

// select_cores against this machine's groups (/sys/devices/system/cpu), then pin_to_cores:
// what a command's --cores does. Returns the CPUs chosen ({} for all).
Result<std::vector<unsigned>> apply_core_selection(const std::string& spec);

// The CPUs this process may run on now.
std::vector<unsigned> allowed_cores();

}  // namespace trilemma::devices
