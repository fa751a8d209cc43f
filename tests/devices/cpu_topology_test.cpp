// The probe's reading of the kernel's CPU description: /proc/cpuinfo on x86 and Arm, Arm part
// numbers to core names, features in device files' words, big.LITTLE groups from a sysfs tree
// written here, and the clusters the probe reports from them.
#include <catch2/catch.hpp>

#include <fstream>
#include <unistd.h>

#include "devices/cpu_topology.hpp"
#include "devices/host_probe.hpp"

using namespace trilemma::devices;
namespace fs = std::filesystem;

namespace {

// An Arm kernel's /proc/cpuinfo: no model name, one block per core; cores 0-1 are Cortex-A55
// (part 0xd05), 2-3 Cortex-A76 (0xd0b), as on an RK3588-class SoC (cut to four cores).
std::string arm_cpuinfo() {
  std::string text;
  const char* parts[] = {"0xd05", "0xd05", "0xd0b", "0xd0b"};
  for (int i = 0; i < 4; ++i)
    text += "processor\t: " + std::to_string(i) +
            "\nBogoMIPS\t: 48.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid "
            "asimdrdm lrcpc dcpop asimddp\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x2\nCPU part\t: " +
            parts[i] + "\nCPU revision\t: 0\n\n";
  return text;
}

struct TempTree {
  fs::path root;
  explicit TempTree(const std::string& name)
      : root(fs::temp_directory_path() / ("trilemma-sysfs-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(root);
  }
  ~TempTree() { fs::remove_all(root); }
  void cpu(unsigned n, std::optional<unsigned> capacity, std::optional<unsigned> max_khz) {
    const auto dir = root / ("cpu" + std::to_string(n));
    fs::create_directories(dir / "cpufreq");
    if (capacity) std::ofstream(dir / "cpu_capacity") << *capacity << "\n";
    if (max_khz) std::ofstream(dir / "cpufreq" / "cpuinfo_max_freq") << *max_khz << "\n";
  }
};

}  // namespace

TEST_CASE("parse_cpuinfo: x86 model, flags and the highest clock; Arm parts per core", "[devices]") {
  const auto x86 = parse_cpuinfo(
      "processor\t: 0\nmodel name\t: AMD EPYC 9B45\ncpu MHz\t\t: 2999.998\nflags\t\t: fpu avx2 fma f16c avx512f avx512_vnni\n\n"
      "processor\t: 1\nmodel name\t: AMD EPYC 9B45\ncpu MHz\t\t: 3400.5\nflags\t\t: fpu avx2 fma f16c avx512f avx512_vnni\n");
  CHECK(x86.model_name == "AMD EPYC 9B45");
  CHECK(x86.max_mhz == Approx(3400.5));
  CHECK(x86_features(x86.flags) == std::vector<std::string>{"avx2", "fma", "f16c", "avx512", "avx512-vnni"});
  CHECK(x86.arm_part.empty());

  const auto arm = parse_cpuinfo(arm_cpuinfo());
  CHECK(arm.model_name.empty());
  REQUIRE(arm.arm_part.size() == 4);
  CHECK(arm.arm_part.at(0) == std::pair{0x41u, 0xd05u});
  CHECK(arm.arm_part.at(3) == std::pair{0x41u, 0xd0bu});
  CHECK(arm_features(arm.flags) == std::vector<std::string>{"neon", "dotprod", "fp16"});
  CHECK(arm_features({"asimd", "asimddp", "i8mm", "bf16", "sve", "sve2", "sme"}) ==
        std::vector<std::string>{"neon", "dotprod", "i8mm", "bf16", "sve", "sve2", "sme"});
  // Garbage is not a crash, and a part line before any processor line belongs to no core.
  CHECK(parse_cpuinfo("CPU part : 0xd0b\nprocessor : x\nCPU part : 0xd0b\n::::\n").arm_part.empty());
}

TEST_CASE("arm_core_name: the cores devices/cores.yaml has rates for", "[devices]") {
  CHECK(arm_core_name(0x41, 0xd0b) == "Cortex-A76");
  CHECK(arm_core_name(0x41, 0xd05) == "Cortex-A55");
  CHECK(arm_core_name(0x41, 0xd82).empty());  // Cortex-X4: known to Linux, not mapped here
  CHECK(arm_core_name(0x51, 0xd0b).empty());  // another implementer's part numbers mean other cores
}

TEST_CASE("read_core_groups: big.LITTLE from sysfs, fastest first", "[devices]") {
  TempTree t("rk3588");
  t.cpu(0, 414, 1800000);
  t.cpu(1, 414, 1800000);
  t.cpu(2, 1024, 2400000);
  t.cpu(3, 1024, 2400000);
  fs::create_directories(t.root / "cpufreq");  // not a core
  fs::create_directories(t.root / "cpuidle");
  const auto groups = read_core_groups(t.root, parse_cpuinfo(arm_cpuinfo()));
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].cpus == std::vector<unsigned>{2, 3});
  CHECK(groups[0].capacity == 1024u);
  CHECK(groups[0].max_ghz == Approx(2.4));
  CHECK(groups[0].core == "Cortex-A76");
  CHECK(groups[1].cpus == std::vector<unsigned>{0, 1});
  CHECK(groups[1].core == "Cortex-A55");

  SECTION("without cpu_capacity, the clock orders them") {
    TempTree u("no-capacity");
    u.cpu(0, std::nullopt, 2000000);
    u.cpu(1, std::nullopt, 3000000);
    const auto g = read_core_groups(u.root, {});
    REQUIRE(g.size() == 2);
    CHECK(g[0].cpus == std::vector<unsigned>{1});
  }
  CHECK(read_core_groups(t.root / "absent", {}).empty());
}

TEST_CASE("probed_clusters: one per group, measured rates on the fastest, cores.yaml on the rest", "[devices]") {
  std::vector<CoreGroup> groups = {{{4, 5, 6, 7}, 1024, 2.4, "Cortex-A76"}, {{0, 1, 2, 3}, 414, 1.8, "Cortex-A55"}};
  auto clusters = probed_clusters(groups, 8, "unknown CPU", 2.35, 15.0, 60.0);
  REQUIRE(clusters.size() == 2);
  CHECK(clusters[0].kind == "performance");
  CHECK(clusters[0].cores == 4u);
  CHECK(clusters[0].core == "Cortex-A76");
  CHECK(clusters[0].clock_ghz == Approx(2.4));
  CHECK(clusters[0].fp32_flops_per_cycle == Approx(15.0));
  CHECK(clusters[0].rates_source == "measured by the host probe");
  CHECK(clusters[1].kind == "efficiency");
  CHECK(clusters[1].clock_ghz == Approx(1.8));
  // devices/cores.yaml: Cortex-A55 8 FP32 FLOP, 16 FP16 FLOP and 32 int8 dot ops per cycle.
  CHECK(clusters[1].fp32_flops_per_cycle == Approx(8));
  CHECK(clusters[1].int8_dot_ops_per_cycle == Approx(32));
  CHECK(clusters[1].rates_source == "devices/cores.yaml (Cortex-A55)");

  SECTION("three kinds: prime, performance, efficiency; an unknown core keeps the measured rates") {
    groups.insert(groups.begin(), CoreGroup{{8}, 1024, 3.0, ""});
    groups[1].capacity = 900;
    clusters = probed_clusters(groups, 9, "some SoC", 2.35, 15.0, 60.0);
    REQUIRE(clusters.size() == 3);
    CHECK(clusters[0].kind == "prime");
    CHECK(clusters[0].core == "some SoC");
    CHECK(clusters[1].kind == "performance");
    CHECK(clusters[2].kind == "efficiency");
  }
  SECTION("groups that miss cores the process sees: one cluster of every core") {
    clusters = probed_clusters(groups, 12, "some SoC", 2.35, 15.0, 60.0);
    REQUIRE(clusters.size() == 1);
    CHECK(clusters[0].cores == 12u);
    CHECK(clusters[0].clock_ghz == Approx(2.35));
  }
  SECTION("one kind of core: one cluster named after it") {
    clusters = probed_clusters({{{0, 1}, std::nullopt, 3.0, "Cortex-A72"}}, 2, "unknown CPU", 1.5, 8.0, 8.0);
    REQUIRE(clusters.size() == 1);
    CHECK(clusters[0].core == "Cortex-A72");
    CHECK(clusters[0].clock_ghz == Approx(1.5));
  }
}
