// What the kernel says about this machine's cores: /proc/cpuinfo's model, flags and (on Arm)
// each core's implementer and part number, and the clusters of a big.LITTLE system, read from
// sysfs (/sys/devices/system/cpu/cpuN/cpu_capacity and cpufreq/cpuinfo_max_freq). Pure
// functions over text and a directory, so tests feed them another machine's files.
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace trilemma::devices {

struct CpuInfo {
  std::string model_name;  // x86 "model name"; empty on Arm kernels, which have none
  double max_mhz = 0;      // the highest "cpu MHz" line (x86)
  std::set<std::string> flags;  // "flags" (x86) or "Features" (Arm), of every core
  // Arm: per logical CPU, (implementer, part) from "CPU implementer" / "CPU part".
  std::map<unsigned, std::pair<unsigned, unsigned>> arm_part;
};

CpuInfo parse_cpuinfo(const std::string& text);

// The microarchitecture an Arm (implementer, part) pair names, as devices/cores.yaml spells it
// ("Cortex-A76"); empty when the table here does not know it.
std::string arm_core_name(unsigned implementer, unsigned part);

// Features in device files' vocabulary (devices/README.md): Arm "asimddp" -> dotprod, "i8mm",
// "asimdhp" -> fp16, "bf16", "sve", "sve2", "sme"; x86 "avx2", "fma", "f16c", "avx512",
// "avx-vnni", "avx512-vnni", "amx".
std::vector<std::string> arm_features(const std::set<std::string>& flags);
std::vector<std::string> x86_features(const std::set<std::string>& flags);

// Cores of one kind: the same capacity and the same highest clock.
struct CoreGroup {
  std::vector<unsigned> cpus;
  std::optional<unsigned> capacity;  // sysfs cpu_capacity (1024 = the fastest core), when present
  double max_ghz = 0;                // cpufreq cpuinfo_max_freq, 0 when absent
  std::string core;                  // arm_core_name of its cores, when known and shared
};

// Groups the cpuN directories under `root`, fastest first (capacity, then clock). Empty when
// `root` lists no CPUs; one group when the cores do not differ.
std::vector<CoreGroup> read_core_groups(const std::filesystem::path& root, const CpuInfo& info);

}  // namespace trilemma::devices
