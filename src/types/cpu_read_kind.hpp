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
inline constexpr std::size_t k_cpu_read_kind_count = 2;  // the enum's values: the table below has one row each

struct CpuReadKindInfo {
  CpuReadKind kind;
  std::string_view name;          // memory.cpu_read_kind in a device file
  std::string_view fraction_key;  // its key in a backend's bandwidth_fraction
};

inline constexpr auto k_cpu_read_kinds = std::to_array<CpuReadKindInfo>({
    {CpuReadKind::read, "read", "measured_read"},
    {CpuReadKind::copy, "copy", "measured_copy"},
});
static_assert(k_cpu_read_kinds.size() == k_cpu_read_kind_count, "one row per CpuReadKind");
static_assert(k_cpu_read_kinds[0].kind == CpuReadKind::read && k_cpu_read_kinds[1].kind == CpuReadKind::copy,
              "rows in enum order: info() indexes by the enum");

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
