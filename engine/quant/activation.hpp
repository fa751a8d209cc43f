// The FFN's gate: h[i] = silu(h[i]) * g[i], silu(x) = x / (1 + exp(-x)). One column per ISA:
// _ref is llama2.c run.c's loop (std::exp), which the scalar engine must keep reproducing;
// _avx2 takes eight elements at a time with avx2::exp_ps (within a few ulp of _ref, tested).
#pragma once
#include <cstddef>

#include "engine/quant/kernel_table.hpp"

namespace trilemma::engine {

using SwigluFn = void (*)(float* h, const float* up, std::size_t n);  // h: w1 x (through SiLU), up: w3 x

void swiglu_ref(float* h, const float* up, std::size_t n);
void swiglu_avx2(float* h, const float* up, std::size_t n);  // simd/avx2/activation_avx2.cpp (x86-64 builds only)

SwigluFn select_swiglu(Isa isa);

}  // namespace trilemma::engine
