// AVX-512 twin of pack_q8_panel_token (quant/q8_panel.cpp): every prompt token's Q8_0
// activations regrouped for the x4 tiles and x16 strips, once per matrix input. The scalar
// packer took 9% of a 512-token q4_0 prefill. Compiled with -mavx512f -mavx512bw -mavx512vl
// -mf16c; called only on CPUs whose ISA is avx512vnni (the only ones that run the panel
// kernels). Writes the reference's bytes (tested): the codes are moved, not computed; the
// zero-point sums are exact integer sums, whatever their order.
#include <immintrin.h>

#include "engine/quant/blocks.hpp"
#include "engine/quant/q8_panel.hpp"

namespace trilemma::engine {

void pack_q8_panel_token_avx512(const std::byte* row, int t, Q8Panel& out) {
  const auto* y = reinterpret_cast<const BlockQ8_0*>(row);
  const std::size_t g_count = std::size_t(out.groups);
  const __m512i ones8 = _mm512_set1_epi8(1), ones16 = _mm512_set1_epi16(1), flip = _mm512_set1_epi8(char(0x80));
  for (std::size_t g = 0; g < g_count; ++g) {
    const std::size_t at = std::size_t(t) * g_count + g;
    const BlockQ8_0* b = y + 4 * g;
    const auto codes = [&](int k) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[k].qs)); };
    for (int k = 0; k < 4; ++k)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.tile_codes_of(std::int64_t(4 * g) + k, t)), codes(k));
    // [b0 lo, b0 hi, b1 lo, b1 hi] and [b2 lo, b2 hi, b3 lo, b3 hi], 16 codes per 128-bit lane
    const __m512i b01 = _mm512_inserti64x4(_mm512_castsi256_si512(codes(0)), codes(1), 1);
    const __m512i b23 = _mm512_inserti64x4(_mm512_castsi256_si512(codes(2)), codes(3), 1);
    const __m512i lo = _mm512_shuffle_i64x2(b01, b23, _MM_SHUFFLE(2, 0, 2, 0));  // codes 0..15 of blocks 0..3
    const __m512i hi = _mm512_shuffle_i64x2(b01, b23, _MM_SHUFFLE(3, 1, 3, 1));  // codes 16..31
    _mm512_storeu_si512(&out.s8[at * 128], lo);
    _mm512_storeu_si512(&out.s8[at * 128 + 64], hi);
    _mm512_storeu_si512(&out.u8[at * 128], _mm512_xor_si512(lo, flip));  // q + 128 as a byte
    _mm512_storeu_si512(&out.u8[at * 128 + 64], _mm512_xor_si512(hi, flip));
    // int32 lane 4k + i sums codes 4i..4i+3 of block k's low half and the same of its high half.
    const __m512i sums = _mm512_madd_epi16(
        _mm512_add_epi16(_mm512_maddubs_epi16(ones8, lo), _mm512_maddubs_epi16(ones8, hi)), ones16);
    const __m512i init = _mm512_mullo_epi32(sums, _mm512_set1_epi32(-8));
    _mm512_storeu_si512(&out.init[at * 16], init);
    // Per block: four lanes summed (the whole block's zero point) and the fp16 scale.
    const __m512i pairs = _mm512_add_epi32(init, _mm512_shuffle_epi32(init, _MM_PERM_CDAB));
    const __m512i quads = _mm512_add_epi32(pairs, _mm512_shuffle_epi32(pairs, _MM_PERM_BADC));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(&out.zero[at * 4]),
                     _mm512_castsi512_si128(_mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), quads)));
    const __m128i d = _mm_setr_epi16(short(b[0].d), short(b[1].d), short(b[2].d), short(b[3].d), 0, 0, 0, 0);
    _mm_storeu_ps(&out.dy[at * 4], _mm_cvtph_ps(d));
  }
}

}  // namespace trilemma::engine
