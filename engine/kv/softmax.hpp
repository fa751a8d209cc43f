// The softmax of attention scores, in place: s[t] = exp(s[t] - max) / sum. One column per ISA,
// picked like the KV format kernels. _ref is llama2.c run.c's loop (std::exp, left-to-right
// sum, one division per score), which the scalar engine must keep reproducing; _avx2 evaluates
// exp as a polynomial eight scores at a time (within 2 ulp of std::exp, tested against it) and
// sums in eight lanes. Both depend only on the scores, not on how positions were split into
// runs, so every KV strategy still gets the same bits for the same positions.
#pragma once
#include "engine/quant/kernel_table.hpp"

namespace trilemma::engine {

using SoftmaxFn = void (*)(float* scores, int n);  // REQUIRES: n >= 1

void softmax_ref(float* scores, int n);
void softmax_avx2(float* scores, int n);  // simd/avx2/softmax_avx2.cpp (x86-64 builds only)

SoftmaxFn select_softmax(Isa isa);

}  // namespace trilemma::engine
