#include "engine/runtime/peak_compute.hpp"

#include "engine/quant/cpu_features.hpp"

#include <chrono>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace trilemma::engine {
namespace {

// Twelve accumulators: FMA latency 4 cycles x 2 pipes needs 8 in flight; 12 leaves margin for
// cores with longer latency or more pipes without spilling registers (16 or 32 architectural).
constexpr int k_acc = 12;

// Accumulator k starts at k: identical accumulators would be one computation to the compiler,
// which then runs a single chain (and the kernel measures latency, not throughput).
// f32: a <- a * m + c converges to c / (1 - m) and never overflows or goes denormal.
constexpr float k_m = 0.5f, k_c = 1.0f;

double f32_expected(std::uint64_t iterations, int lanes) {
  double sum = 0;
  for (int k = 0; k < k_acc; ++k) {
    float a = float(k);
    // Each sequence reaches the fixed point (2.0) in ~30 steps and stays there exactly.
    for (std::uint64_t i = 0; i < iterations && i < 200; ++i) a = a * k_m + k_c;
    sum += a;
  }
  return sum * lanes;
}

double scalar_f32(std::uint64_t iterations) {
  float a[k_acc];
  for (int k = 0; k < k_acc; ++k) a[k] = float(k);
  for (std::uint64_t i = 0; i < iterations; ++i)
    for (int k = 0; k < k_acc; ++k) a[k] = a[k] * k_m + k_c;
  double s = 0;
  for (float v : a) s += v;
  return s;
}
double scalar_f32_expected(std::uint64_t n) { return f32_expected(n, 1); }

// int8: every lane adds 4 products of 1 x 1 (a dot instruction's width) per iteration.
double int8_expected(std::uint64_t iterations, int lanes, int accumulators = k_acc) {
  return lanes * (accumulators * (accumulators - 1) / 2.0 + 4.0 * double(iterations) * accumulators);
}

double scalar_int8(std::uint64_t iterations) {
  std::int32_t a[k_acc];
  for (int k = 0; k < k_acc; ++k) a[k] = k;
  volatile std::int8_t one = 1;  // not a constant the compiler can fold the loop with
  const std::int8_t x = one;
  for (std::uint64_t i = 0; i < iterations; ++i)
    for (int k = 0; k < k_acc; ++k) {
      a[k] += x * x + x * x + x * x + x * x;
      asm volatile("" : "+r"(a[k]));  // no closed form for the loop
    }
  double s = 0;
  for (auto v : a) s += v;
  return s;
}
double scalar_int8_expected(std::uint64_t n) { return int8_expected(n, 1); }

#if defined(__x86_64__)
#define TRILEMMA_REPEAT12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

__attribute__((target("avx512f"))) double avx512_f32(std::uint64_t iterations) {
  const __m512 m = _mm512_set1_ps(k_m), c = _mm512_set1_ps(k_c);
#define DECL(k) __m512 a##k = _mm512_set1_ps(float(k));
  TRILEMMA_REPEAT12(DECL)
#undef DECL
  for (std::uint64_t i = 0; i < iterations; ++i) {
#define STEP(k) a##k = _mm512_fmadd_ps(a##k, m, c);
    TRILEMMA_REPEAT12(STEP)
#undef STEP
  }
  __m512 s = _mm512_setzero_ps();
#define SUM(k) s = _mm512_add_ps(s, a##k);
  TRILEMMA_REPEAT12(SUM)
#undef SUM
  alignas(64) float out[16];
  _mm512_store_ps(out, s);
  double t = 0;
  for (float v : out) t += v;
  return t;
}
double avx512_f32_expected(std::uint64_t n) { return f32_expected(n, 16); }

__attribute__((target("avx2,fma"))) double avx2_f32(std::uint64_t iterations) {
  const __m256 m = _mm256_set1_ps(k_m), c = _mm256_set1_ps(k_c);
#define DECL(k) __m256 a##k = _mm256_set1_ps(float(k));
  TRILEMMA_REPEAT12(DECL)
#undef DECL
  for (std::uint64_t i = 0; i < iterations; ++i) {
#define STEP(k) a##k = _mm256_fmadd_ps(a##k, m, c);
    TRILEMMA_REPEAT12(STEP)
#undef STEP
  }
  __m256 s = _mm256_setzero_ps();
#define SUM(k) s = _mm256_add_ps(s, a##k);
  TRILEMMA_REPEAT12(SUM)
#undef SUM
  alignas(32) float out[8];
  _mm256_store_ps(out, s);
  double t = 0;
  for (float v : out) t += v;
  return t;
}
double avx2_f32_expected(std::uint64_t n) { return f32_expected(n, 8); }

__attribute__((target("avx512f,avx512vnni"))) double avx512vnni_int8(std::uint64_t iterations) {
  const __m512i ones = _mm512_set1_epi8(1);
#define DECL(k) __m512i a##k = _mm512_set1_epi32(k);
  TRILEMMA_REPEAT12(DECL)
#undef DECL
  for (std::uint64_t i = 0; i < iterations; ++i) {
#define STEP(k) a##k = _mm512_dpbusd_epi32(a##k, ones, ones);
    TRILEMMA_REPEAT12(STEP)
#undef STEP
  }
  // Lane by lane in double: the int32 sum of all accumulators would overflow.
  double t = 0;
  alignas(64) std::int32_t out[16];
#define SUM(k) _mm512_store_si512(out, a##k); for (auto v : out) t += v;
  TRILEMMA_REPEAT12(SUM)
#undef SUM
  return t;
}
double avx512vnni_int8_expected(std::uint64_t n) { return int8_expected(n, 16); }

__attribute__((target("avx2,avxvnni"))) double avxvnni_int8(std::uint64_t iterations) {
  const __m256i ones = _mm256_set1_epi8(1);
#define DECL(k) __m256i a##k = _mm256_set1_epi32(k);
  TRILEMMA_REPEAT12(DECL)
#undef DECL
  for (std::uint64_t i = 0; i < iterations; ++i) {
#define STEP(k) a##k = _mm256_dpbusd_avx_epi32(a##k, ones, ones);
    TRILEMMA_REPEAT12(STEP)
#undef STEP
  }
  double t = 0;
  alignas(32) std::int32_t out[8];
#define SUM(k) _mm256_store_si256(reinterpret_cast<__m256i*>(out), a##k); for (auto v : out) t += v;
  TRILEMMA_REPEAT12(SUM)
#undef SUM
  return t;
}
double avxvnni_int8_expected(std::uint64_t n) { return int8_expected(n, 8); }

// AVX2 without VNNI, as llama.cpp's x86 kernels do it: u8 x s8 pairs summed to i16
// (maddubs), pairs of those to i32 (madd), added to the accumulator: 3 instructions for 32 MACs.
// Six accumulators, each with its own operand register that an empty asm marks as changed
// every iteration, so the multiplies are neither hoisted out of the loop nor shared.
__attribute__((target("avx2"))) double avx2_int8(std::uint64_t iterations) {
  const __m256i ones16 = _mm256_set1_epi16(1);
  __m256i b0 = _mm256_set1_epi8(1), b1 = b0, b2 = b0, b3 = b0, b4 = b0, b5 = b0;
  __m256i a0 = _mm256_set1_epi32(0), a1 = _mm256_set1_epi32(1), a2 = _mm256_set1_epi32(2), a3 = _mm256_set1_epi32(3),
          a4 = _mm256_set1_epi32(4), a5 = _mm256_set1_epi32(5);
  for (std::uint64_t i = 0; i < iterations; ++i) {
    asm volatile("" : "+x"(b0), "+x"(b1), "+x"(b2), "+x"(b3), "+x"(b4), "+x"(b5));
#define STEP(k) a##k = _mm256_add_epi32(a##k, _mm256_madd_epi16(_mm256_maddubs_epi16(b##k, b##k), ones16));
    STEP(0) STEP(1) STEP(2) STEP(3) STEP(4) STEP(5)
#undef STEP
  }
  double t = 0;
  alignas(32) std::int32_t out[8];
  for (const __m256i& a : {a0, a1, a2, a3, a4, a5}) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(out), a);
    for (auto v : out) t += v;
  }
  return t;
}
double avx2_int8_expected(std::uint64_t n) { return int8_expected(n, 8, 6); }
#undef TRILEMMA_REPEAT12
#endif

#if defined(__aarch64__)
double neon_f32(std::uint64_t iterations) {
  const float32x4_t m = vdupq_n_f32(k_m), c = vdupq_n_f32(k_c);
  float32x4_t a[k_acc];
  for (int k = 0; k < k_acc; ++k) a[k] = vdupq_n_f32(float(k));
  for (std::uint64_t i = 0; i < iterations; ++i)
    for (int k = 0; k < k_acc; ++k) a[k] = vfmaq_f32(c, a[k], m);
  float32x4_t s = vdupq_n_f32(0);
  for (auto& v : a) s = vaddq_f32(s, v);
  return vaddvq_f32(s);
}
double neon_f32_expected(std::uint64_t n) { return f32_expected(n, 4); }

__attribute__((target("arch=armv8.2-a+dotprod"))) double neon_sdot_int8(std::uint64_t iterations) {
  const int8x16_t ones = vdupq_n_s8(1);
  int32x4_t a[k_acc];
  for (int k = 0; k < k_acc; ++k) a[k] = vdupq_n_s32(k);
  for (std::uint64_t i = 0; i < iterations; ++i)
    for (int k = 0; k < k_acc; ++k) a[k] = vdotq_s32(a[k], ones, ones);
  double t = 0;
  for (auto& v : a) t += double(vaddlvq_s32(v));  // widening: the int32 total would overflow
  return t;
}
double neon_sdot_int8_expected(std::uint64_t n) { return int8_expected(n, 4); }

// ARMv8.0 without dotprod: widening multiply-accumulate, 8 MACs an instruction; two of them
// per lane group make the 4 products per int32 lane the other kernels count.
double neon_smlal_int8(std::uint64_t iterations) {
  const int8x8_t ones = vdup_n_s8(1);
  int16x8_t a[k_acc];
  int32x4_t wide[k_acc];
  for (auto& v : a) v = vdupq_n_s16(0);
  for (int k = 0; k < k_acc; ++k) wide[k] = vdupq_n_s32(k);
  for (std::uint64_t i = 0; i < iterations; ++i) {
    for (int k = 0; k < k_acc; ++k) a[k] = vmlal_s8(vmlal_s8(a[k], ones, ones), ones, ones);
    if ((i & 1023) == 1023)  // fold into int32 before int16 overflows
      for (int k = 0; k < k_acc; ++k) wide[k] = vpadalq_s16(wide[k], a[k]), a[k] = vdupq_n_s16(0);
  }
  double t = 0;
  for (int k = 0; k < k_acc; ++k) t += double(vaddlvq_s32(vpadalq_s16(wide[k], a[k])));
  return t;
}
double neon_smlal_int8_expected(std::uint64_t n) { return int8_expected(n, 4); }
#endif

#if defined(__x86_64__)
// 512-bit instructions a core issues per cycle. AMD family 19h with AVX-512 is Zen 4, which runs
// them on its two 256-bit pipes (one a cycle); family 1Ah is Zen 5 (two full-width pipes). Intel
// server cores since Skylake-SP have two 512-bit FMA units; through Ice Lake they issue 512-bit
// VNNI on port 0 only. Cores with AVX512-FP16 (Sapphire Rapids and later) issue it on both: a
// 2-vCPU Xeon VM with AMX and AVX512-FP16 measured 1.78x the one-port figure (942.9 G int8
// ops/s per core at a measured 4.14 GHz, 2026-12-04), 0.89 of two ports as its FMA reaches 0.93.
int zmm_pipes(bool vnni) {
  const auto& cpu = cpu_features();
  if (cpu.amd) return cpu.family >= 0x1a ? 2 : 1;
  return vnni && !cpu.avx512fp16 ? 1 : 2;
}
#endif

}  // namespace

PeakKernel scalar_peak_kernel(PeakPath path) {
  if (path == PeakPath::f32_fma) return {"scalar", 1, 2.0 * k_acc, 2, 2, scalar_f32, scalar_f32_expected};
  return {"scalar", 1, 8.0 * k_acc, 2, 8, scalar_int8, scalar_int8_expected};
}

// Pipes: two 256-bit FMA pipes on x86 since Haswell and Zen 2, 512-bit as zmm_pipes says;
// 256-bit VNNI issues twice a cycle; maddubs + madd share the two multiply ports (one 32-MAC
// group a cycle); Cortex-A76 and later big cores have two 128-bit NEON FMA / SDOT pipes (A55:
// one); smlal pairs take one.
PeakKernel peak_kernel(PeakPath path) {
#if defined(__x86_64__)
  // cpu_features() counts an instruction set only when the OS saves its registers (XCR0).
  const auto& cpu = cpu_features();
  const bool avx512 = cpu.avx512f;
  const bool avx2 = cpu.avx2 && cpu.fma;
  if (path == PeakPath::f32_fma) {
    if (avx512) return {"avx512 fma", 16, 2.0 * 16 * k_acc, zmm_pipes(false), 2, avx512_f32, avx512_f32_expected};
    if (avx2) return {"avx2 fma", 8, 2.0 * 8 * k_acc, 2, 2, avx2_f32, avx2_f32_expected};
  } else {
    if (avx512 && cpu.avx512vnni)
      return {"avx512-vnni dpbusd", 16, 8.0 * 16 * k_acc, zmm_pipes(true), 8, avx512vnni_int8, avx512vnni_int8_expected};
    if (avx2 && cpu.avxvnni)
      return {"avx-vnni dpbusd", 8, 8.0 * 8 * k_acc, 2, 8, avxvnni_int8, avxvnni_int8_expected};
    if (avx2) return {"avx2 maddubs", 8, 8.0 * 8 * 6, 1, 8, avx2_int8, avx2_int8_expected};
  }
#elif defined(__aarch64__)
  if (path == PeakPath::f32_fma) return {"neon fma", 4, 2.0 * 4 * k_acc, 2, 2, neon_f32, neon_f32_expected};
  if (cpu_features().dotprod) return {"neon sdot", 4, 8.0 * 4 * k_acc, 2, 8, neon_sdot_int8, neon_sdot_int8_expected};
  return {"neon smlal", 4, 8.0 * 4 * k_acc, 1, 8, neon_smlal_int8, neon_smlal_int8_expected};
#endif
  return scalar_peak_kernel(path);
}

double measure_clock_ghz(std::uint64_t adds) {
#if defined(__x86_64__) || defined(__aarch64__)
  std::uint64_t x = 0;
  const std::uint64_t one = 1, loops = adds / 64;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t i = 0; i < loops; ++i) {
    // 64 dependent adds; the loop counter is a separate chain the core runs alongside.
#if defined(__x86_64__)
#define ADD8 "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
#else
#define ADD8 "add %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\t"
#endif
    asm volatile(ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 ADD8 : "+r"(x) : "r"(one));
#undef ADD8
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (x != loops * 64 || s <= 0) return 0;
  return double(loops * 64) / s / 1e9;
#else
  (void)adds;
  return 0;
#endif
}

}  // namespace trilemma::engine
