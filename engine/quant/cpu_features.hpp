// What this CPU and its OS allow, read once from cpuid and XCR0 (x86) or the kernel's HWCAP
// bits (aarch64): the kernel table and the host probe pick their instructions from it. An
// instruction set counts only when the OS saves its registers (XCR0 for AVX and AVX-512), so a
// kernel chosen here cannot fault with SIGILL. Written out rather than with
// __builtin_cpu_supports, which clang 14 lacks for f16c and avxvnni.
#pragma once

namespace trilemma::engine {

struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false;                     // with OS support for AVX state
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512vnni = false;  // with OS support for AVX-512 state
  bool avxvnni = false;
  bool avx512fp16 = false;   // Sapphire Rapids and later Intel server cores (Golden Cove and after)
  // AMX-TILE + AMX-INT8, the tile state enabled in XCR0 (bits 17-18) and this process granted
  // the tile data by the kernel (Linux's arch_prctl(ARCH_REQ_XCOMP_PERM)); without the permission
  // the first tile instruction faults, so all three are required.
  bool amx_int8 = false;
  bool amx_bf16 = false;     // the same, with AMX-BF16 (TDPBF16PS)
  bool amd = false;          // vendor "AuthenticAMD"
  unsigned family = 0;       // x86 display family (AMD 19h: Zen 3/4, 1Ah: Zen 5)
  bool neon = false, dotprod = false, i8mm = false;  // aarch64
};

const CpuFeatures& cpu_features();

}  // namespace trilemma::engine
