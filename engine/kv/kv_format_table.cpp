// The KV storage format table: one row per format in kv_formats() order (src/types/deployment.cpp).
// Store functions are the weight formats' reference quantizers, so a KV row is bit-identical to
// a weight row of the same format.
#include <algorithm>
#include <array>

#include "engine/kv/kv_format.hpp"
#include "types/deployment.hpp"

namespace trilemma::engine {
namespace {

void store_f32(const float* x, void* row, int n) { quantize_row_f32(x, row, n); }
void store_f16(const float* x, void* row, int n) { quantize_row_f16(x, row, n); }
void store_q8_0(const float* x, void* row, int n) { quantize_row_q8_0(x, row, n); }
void store_q4_0(const float* x, void* row, int n) { quantize_row_q4_0(x, row, n); }

#if defined(__x86_64__) || defined(_M_X64)
#define TRILEMMA_AVX2(fn) fn
#define TRILEMMA_AVX512(fn) fn
#else
#define TRILEMMA_AVX2(fn) nullptr
#define TRILEMMA_AVX512(fn) nullptr
#endif

constexpr std::array k_format_rows = {
    KvFormatKernels{TensorType::f32, store_f32, kv_dot_f32_ref, kv_axpy_f32_ref, kv_dot_f32_avx2, TRILEMMA_AVX2(kv_axpy_f32_avx2),
                    kv_scores_by_row<kv_dot_f32_ref>, kv_mix_by_row<kv_axpy_f32_ref>, TRILEMMA_AVX2(kv_scores_f32_avx2),
                    TRILEMMA_AVX2(kv_mix_f32_avx2), TRILEMMA_AVX512(kv_scores_f32_avx512), TRILEMMA_AVX512(kv_mix_f32_avx512),
                    TRILEMMA_AVX512(kv_mix_heads_f32_avx512), TRILEMMA_AVX512(kv_scores_heads_f32_avx512)},
    KvFormatKernels{TensorType::f16, store_f16, kv_dot_f16_ref, kv_axpy_f16_ref, kv_dot_f16_avx2, TRILEMMA_AVX2(kv_axpy_f16_avx2),
                    kv_scores_by_row<kv_dot_f16_ref>, kv_mix_by_row<kv_axpy_f16_ref>, TRILEMMA_AVX2(kv_scores_f16_avx2),
                    TRILEMMA_AVX2(kv_mix_f16_avx2), TRILEMMA_AVX512(kv_scores_f16_avx512), TRILEMMA_AVX512(kv_mix_f16_avx512),
                    TRILEMMA_AVX512(kv_mix_heads_f16_avx512), TRILEMMA_AVX512(kv_scores_heads_f16_avx512)},
    KvFormatKernels{TensorType::q8_0, store_q8_0, kv_dot_q8_0_ref, kv_axpy_q8_0_ref, TRILEMMA_AVX2(kv_dot_q8_0_avx2),
                    TRILEMMA_AVX2(kv_axpy_q8_0_avx2), kv_scores_by_row<kv_dot_q8_0_ref>, kv_mix_by_row<kv_axpy_q8_0_ref>,
                    TRILEMMA_AVX2(kv_scores_q8_0_avx2), TRILEMMA_AVX2(kv_mix_q8_0_avx2), TRILEMMA_AVX512(kv_scores_q8_0_avx512),
                    TRILEMMA_AVX512(kv_mix_q8_0_avx512)},
    KvFormatKernels{TensorType::q4_0, store_q4_0, kv_dot_q4_0_ref, kv_axpy_q4_0_ref, TRILEMMA_AVX2(kv_dot_q4_0_avx2),
                    TRILEMMA_AVX2(kv_axpy_q4_0_avx2), kv_scores_by_row<kv_dot_q4_0_ref>, kv_mix_by_row<kv_axpy_q4_0_ref>,
                    TRILEMMA_AVX2(kv_scores_q4_0_avx2), TRILEMMA_AVX2(kv_mix_q4_0_avx2), TRILEMMA_AVX512(kv_scores_q4_0_avx512),
                    TRILEMMA_AVX512(kv_mix_q4_0_avx512)},
};
#undef TRILEMMA_AVX2
#undef TRILEMMA_AVX512
static_assert(k_format_rows.size() == k_kv_format_count, "one row per KV format of kv_formats()");

}  // namespace

std::span<const KvFormatKernels> kv_format_kernels() { return k_format_rows; }

const KvFormatKernels* find_kv_format(TensorType type) {
  const auto it = std::find_if(k_format_rows.begin(), k_format_rows.end(), [&](const auto& r) { return r.type == type; });
  return it == k_format_rows.end() ? nullptr : &*it;
}

// The AVX2 column on x86 CPUs that have it (avx512vnni implies it), else the reference.
template <class Fn>
Fn pick(Fn avx2, Fn ref, Isa isa) {
  return (isa == Isa::avx2 || isa == Isa::avx512vnni) && avx2 != nullptr ? avx2 : ref;
}

KvDotFn select_kv_dot(const KvFormatKernels& k, Isa isa) { return pick(k.dot_avx2, k.dot_ref, isa); }
KvAxpyFn select_kv_axpy(const KvFormatKernels& k, Isa isa) { return pick(k.axpy_avx2, k.axpy_ref, isa); }
// Run kernels: the AVX-512 column where the ISA is avx512vnni and the format has one.
KvScoresFn select_kv_scores(const KvFormatKernels& k, Isa isa) {
  return isa == Isa::avx512vnni && k.scores_avx512 != nullptr ? k.scores_avx512 : pick(k.scores_avx2, k.scores_ref, isa);
}
KvMixFn select_kv_mix(const KvFormatKernels& k, Isa isa) {
  return isa == Isa::avx512vnni && k.mix_avx512 != nullptr ? k.mix_avx512 : pick(k.mix_avx2, k.mix_ref, isa);
}

KvMixHeadsFn select_kv_mix_heads(const KvFormatKernels& k, Isa isa) { return isa == Isa::avx512vnni ? k.mix_heads_avx512 : nullptr; }
KvScoresHeadsFn select_kv_scores_heads(const KvFormatKernels& k, Isa isa) {
  return isa == Isa::avx512vnni ? k.scores_heads_avx512 : nullptr;
}

std::uint64_t kv_row_bytes(TensorType type, int kv_dim) { return tensor_bytes(type, std::uint64_t(kv_dim)); }

}  // namespace trilemma::engine
