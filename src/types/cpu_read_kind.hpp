// How a device's CPU read bandwidth (memory.cpu_read_gbps) was measured, one row per kind. A
// decode step only streams weights, so it reaches a larger share of a read-only kernel's figure
// (tinymembench's NEON read, a load loop) than of a copy's (STREAM Copy, memcpy: bytes read plus
// bytes written, where every written line is also read for ownership): the derating tables keep
// one fraction per kind (devices/derating.yaml `bandwidth_fraction.measured_<kind>`).
#pragma once
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace trilemma {

enum class CpuReadKind : unsigned char { read, copy };

struct CpuReadKindInfo {
  CpuReadKind kind;
  std::string_view name;          // memory.cpu_read_kind in a device file
  std::string_view fraction_key;  // its key in a backend's bandwidth_fraction
};

inline constexpr std::array<CpuReadKindInfo, 2> k_cpu_read_kinds = {{
    {CpuReadKind::read, "read", "measured_read"},
    {CpuReadKind::copy, "copy", "measured_copy"},
}};

inline const CpuReadKindInfo& info(CpuReadKind k) { return k_cpu_read_kinds[static_cast<std::size_t>(k)]; }

inline std::optional<CpuReadKind> cpu_read_kind_from_name(std::string_view name) {
  for (const auto& k : k_cpu_read_kinds)
    if (k.name == name) return k.kind;
  return std::nullopt;
}

inline std::optional<CpuReadKind> cpu_read_kind_from_fraction_key(std::string_view key) {
  for (const auto& k : k_cpu_read_kinds)
    if (k.fraction_key == key) return k.kind;
  return std::nullopt;
}

}  // namespace trilemma
