// How the VNNI strip kernels (simd/avx512/strip_avx512vnni.cpp, strip_k_avx512vnni.cpp) walk a
// call: strips against slabs of up to 8 tokens, a slab's token count a template argument.
#pragma once
#include <algorithm>
#include <cstddef>

namespace trilemma::engine {

inline constexpr int k_strip_slab = 8;

// fn.template operator()<n>() for n = nt (1 <= nt <= 8): the slab kernels keep a token's
// accumulators in registers, so the count is a compile-time constant.
template <class Fn>
[[gnu::always_inline]] inline void with_slab_tokens(int nt, Fn&& fn) {
  switch (nt) {
    case 1: fn.template operator()<1>(); break;
    case 2: fn.template operator()<2>(); break;
    case 3: fn.template operator()<3>(); break;
    case 4: fn.template operator()<4>(); break;
    case 5: fn.template operator()<5>(); break;
    case 6: fn.template operator()<6>(); break;
    case 7: fn.template operator()<7>(); break;
    default: fn.template operator()<8>(); break;
  }
}

// Codes of the strips that take every token slab in turn before the next strips: they stay in
// L2 (1-2 MiB per core on the AVX-512 hosts) while the slabs pass, so a long prompt reads the
// weights from memory once, not once per 8 tokens (a 5632 x 2048 Q8_0 matrix is 11 MiB).
inline constexpr std::size_t k_l2_strip_bytes = 256 << 10;

// slab(s, t, n): strip s against tokens t .. t + n - 1, for `count` strips of `strip_bytes` and nt tokens.
template <class Slab>
void for_strip_slabs(int count, std::size_t strip_bytes, int nt, Slab&& slab) {
  const int per_block = int(std::max<std::size_t>(1, k_l2_strip_bytes / strip_bytes));
  for (int s0 = 0; s0 < count; s0 += per_block)
    for (int t = 0; t < nt; t += k_strip_slab)
      for (int s = s0; s < std::min(count, s0 + per_block); ++s) slab(s, t, std::min(k_strip_slab, nt - t));
}

}  // namespace trilemma::engine
