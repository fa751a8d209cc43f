#include "engine/quant/cpu_features.hpp"

#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

namespace trilemma::engine {
namespace {

#if defined(__x86_64__)
unsigned long long xcr0() {
  unsigned eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}

// Asks Linux for the AMX tile data state (XFEATURE_XTILEDATA = 18) for this process; granted
// once, it holds for every thread. Other kernels: no permission, no AMX.
bool request_amx_permission() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  constexpr int k_arch_req_xcomp_perm = 0x1023, k_xfeature_xtiledata = 18;
  return syscall(SYS_arch_prctl, k_arch_req_xcomp_perm, k_xfeature_xtiledata) == 0;
#else
  return false;
#endif
}
#endif

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return f;
  const unsigned max_leaf = a;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4), std::memcpy(vendor + 4, &d, 4), std::memcpy(vendor + 8, &c, 4);
  f.amd = std::strcmp(vendor, "AuthenticAMD") == 0;
  __get_cpuid(1, &a, &b, &c, &d);
  const unsigned base = (a >> 8) & 0xf;
  f.family = base == 0xf ? base + ((a >> 20) & 0xff) : base;
  const bool osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
  const unsigned long long x = osxsave ? xcr0() : 0;
  const bool os_avx = osxsave && avx && (x & 0x6) == 0x6;       // XMM and YMM state
  const bool os_avx512 = os_avx && (x & 0xe0) == 0xe0;          // opmask, ZMM_Hi256, Hi16_ZMM
  f.fma = os_avx && ((c >> 12) & 1);
  f.f16c = os_avx && ((c >> 29) & 1);
  if (max_leaf >= 7) {
    __get_cpuid_count(7, 0, &a, &b, &c, &d);
    f.avx2 = os_avx && ((b >> 5) & 1);
    f.avx512f = os_avx512 && ((b >> 16) & 1);
    f.avx512bw = os_avx512 && ((b >> 30) & 1);
    f.avx512vl = os_avx512 && ((b >> 31) & 1);
    f.avx512vnni = os_avx512 && ((c >> 11) & 1);
    f.avx512fp16 = os_avx512 && ((d >> 23) & 1);
    const bool amx_cpu = ((d >> 24) & 1) && ((d >> 25) & 1);  // AMX-TILE, AMX-INT8
    const bool os_amx = osxsave && (x & 0x60000) == 0x60000;   // XTILECFG, XTILEDATA
    f.amx_int8 = f.avx512f && f.avx512bw && f.avx512vl && amx_cpu && os_amx && request_amx_permission();
    f.amx_bf16 = f.amx_int8 && ((d >> 22) & 1);
    __get_cpuid_count(7, 1, &a, &b, &c, &d);
    f.avxvnni = os_avx && ((a >> 4) & 1);
  }
#elif defined(__aarch64__)
  f.neon = true;
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
#if defined(HWCAP_ASIMDDP)
  f.dotprod = hw & HWCAP_ASIMDDP;
#endif
#if defined(HWCAP2_I8MM)
  f.i8mm = hw2 & HWCAP2_I8MM;
#endif
  (void)hw, (void)hw2;
#endif
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

}  // namespace trilemma::engine
