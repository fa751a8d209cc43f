// AVX-512 twins of the AVX2 Q4_K / Q5_K / Q6_K dots against Q8_K (the `dot_avx512` and
// `dot_multi_avx512` columns of quant/kernel_table.cpp). Compiled with -mavx512f -mavx512bw
// -mavx512vl -mavx512vnni; called only when the CPU has them.
//
// The AVX2 dots (simd/avx2/dot_avx2.cpp) spend three instructions per 32 codes and token
// (maddubs, madd by the sub-block's scale, add). Here a 512-bit register holds two sub-blocks
// (64 codes), and vpdpwssd fuses the scale multiply with the add: two instructions per 64
// codes and token. The unpacking (nibble planes by one variable shift, the scales by one
// permute) is shared by up to k_dot_multi_tokens tokens.
//
// Same bits as the AVX2 dot: every integer product and sum is exact (no saturation: a code
// pair times two activations is at most 2 * 63 * 127), and at the end of a super-block the
// two 256-bit halves of the int32 sums are added, which leaves in each lane exactly the sum
// the AVX2 dot's lane holds (lane k: bytes 4k..4k+3 of every 32-code piece). From there the
// float steps are the AVX2 dot's, in its order. So decode, prefill and an AVX2-only host give
// the same logits, and the kernel-table test compares the two bit for bit. (Q4_K matrices whose
// rows fill strips of 16 run the x16 strips instead, simd/avx512/strip_k_avx512vnni.cpp, whose
// results are the `_ref` dot's bits: here Q4_K serves the matrices left in ggml layout.)
//
// Nothing here includes the AVX2 helper headers: an inline function compiled with AVX-512
// flags in this file could be the copy the linker keeps for an AVX2-only caller.
#include <immintrin.h>

#include <array>
#include <cstring>
#include <type_traits>

#include "engine/quant/blocks.hpp"
#include "engine/quant/kernels.hpp"

namespace trilemma::engine {
namespace {

const BlockQ8K* token_block(const BlockQ8K* y, std::size_t stride, int t, std::int64_t i) {
  return reinterpret_cast<const BlockQ8K*>(reinterpret_cast<const std::byte*>(y) + std::size_t(t) * stride) + i;
}

// The AVX2 dots' reduction tree (simd/avx2/multi_token.hpp reduce), so the float is theirs.
float reduce(__m256 acc, __m128 acc_min) {
  __m128 s = _mm_add_ps(_mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1)), acc_min);
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

// The 512-bit int32 sums folded to the AVX2 dot's 8 lanes.
__m256i fold(__m512i v) { return _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1)); }

// int16 lanes 0-15 = a, lanes 16-31 = b: per-half counts for vpsrlvw and per-half picks for vpermw.
__m512i halves16(std::int16_t a, std::int16_t b) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(a)), _mm256_set1_epi16(b), 1);
}

// Lane tables of the four-token steps, as data (a namespace-scope vector constant would be
// built at start-up, before the CPU check, and a function-local one checks a guard per call).
template <class T, int N, class F>
constexpr std::array<T, N> lane_table(F lane) {
  std::array<T, N> v{};
  for (int l = 0; l < N; ++l) v[std::size_t(l)] = T(lane(l));
  return v;
}
alignas(64) constexpr auto k_fold_lo = lane_table<std::int32_t, 16>([](int l) { return l < 8 ? l : l + 8; });  // lanes 0-7 of a, of b
alignas(64) constexpr auto k_fold_hi = lane_table<std::int32_t, 16>([](int l) { return l < 8 ? l + 8 : l + 16; });
alignas(64) constexpr auto k_spread01 = lane_table<std::int32_t, 16>([](int l) { return l / 8; });
alignas(64) constexpr auto k_spread23 = lane_table<std::int32_t, 16>([](int l) { return 2 + l / 8; });
alignas(64) constexpr auto k_spread4 = lane_table<std::int32_t, 16>([](int l) { return l / 4; });
alignas(64) constexpr auto k_even = lane_table<std::int32_t, 16>([](int l) { return 2 * l; });
alignas(64) constexpr auto k_odd = lane_table<std::int32_t, 16>([](int l) { return 2 * l + 1; });
// int16 lane l of 32 picks min (l % 16) / 2 (lanes 8-15 of the scales-and-mins vector).
alignas(64) constexpr auto k_min_pick = lane_table<std::int16_t, 32>([](int l) { return 8 + (l % 16) / 2; });
template <class T, std::size_t N>
__m512i load(const std::array<T, N>& table) {
  return _mm512_load_si512(table.data());
}

// The float steps of each super-block, token by token (any NT): the AVX2 dot's, in its order.
// Sums of each 16 activations pairwise (the Q4_K / Q5_K min term) are per token too.
template <int NT>
struct TokenSums {
  __m256 acc[NT];
  __m128 acc_min[NT];
  TokenSums() {
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps(), acc_min[t] = _mm_setzero_ps();
  }
  // acc[t] += y_t.d * d * isum[t], lane by lane.
  [[gnu::always_inline]] void add(const __m512i (&isum)[NT], const BlockQ8K* y, std::size_t stride, std::int64_t i, float d) {
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t)
      acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(token_block(y, stride, t, i)->d * d), _mm256_cvtepi32_ps(fold(isum[t])), acc[t]);
  }
  // acc_min[t] lane k -= y_t.d * dmin * (m_2k * s_2k + m_2k+1 * s_2k+1), s_j the sum of sub-block j's activations.
  [[gnu::always_inline]] void add_mins(__m256i scales_mins, const BlockQ8K* y, std::size_t stride, std::int64_t i, float dmin) {
    const __m128i mins8 = _mm256_extracti128_si256(scales_mins, 1);
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) {
      const BlockQ8K* yt = token_block(y, stride, t, i);
      const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(yt->bsums));
      const __m128i sums32 = _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
      acc_min[t] = _mm_fmadd_ps(_mm_set1_ps(-yt->d * dmin), _mm_cvtepi32_ps(_mm_madd_epi16(sums32, mins8)), acc_min[t]);
    }
  }
  void finish(float* out) const {
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) out[t] = reduce(acc[t], acc_min[t]);
  }
};

// The same for four tokens, with the same lanes and the same float operations on each (so the
// same bits), but two tokens per register: the per-token steps were a third of prefill's time.
// acc[r] lanes 8u..8u+7 are token 2r+u's acc; acc_min lanes 4t..4t+3 are token t's.
struct FourTokenSums {
  __m512 acc[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
  __m512 acc_min = _mm512_setzero_ps();

  [[gnu::always_inline]] static __m128 token_d(const BlockQ8K* y, std::size_t stride, std::int64_t i) {
    return _mm_setr_ps(token_block(y, stride, 0, i)->d, token_block(y, stride, 1, i)->d, token_block(y, stride, 2, i)->d,
                       token_block(y, stride, 3, i)->d);
  }
  [[gnu::always_inline]] void add(const __m512i (&isum)[4], const BlockQ8K* y, std::size_t stride, std::int64_t i, float d) {
    const __m512i lo = load(k_fold_lo), hi = load(k_fold_hi), spread[2] = {load(k_spread01), load(k_spread23)};
    const __m512 ydd = _mm512_castps128_ps512(_mm_mul_ps(token_d(y, stride, i), _mm_set1_ps(d)));  // y_t.d * d
#pragma GCC unroll 2
    for (int r = 0; r < 2; ++r) {
      // The two tokens' folds side by side: integer sums, so the order of the adds is free.
      const __m512i f = _mm512_add_epi32(_mm512_permutex2var_epi32(isum[2 * r], lo, isum[2 * r + 1]),
                                         _mm512_permutex2var_epi32(isum[2 * r], hi, isum[2 * r + 1]));
      acc[r] = _mm512_fmadd_ps(_mm512_permutexvar_ps(spread[r], ydd), _mm512_cvtepi32_ps(f), acc[r]);
    }
  }
  [[gnu::always_inline]] void add_mins(__m256i scales_mins, const BlockQ8K* y, std::size_t stride, std::int64_t i, float dmin) {
    const __m512i even = load(k_even), odd = load(k_odd), spread4 = load(k_spread4);
    // Min j in int16 lanes 2j, 2j + 1 of each half, so one madd gives m_j * s_j in int32 lane j per token.
    const __m512i mins = _mm512_permutexvar_epi16(load(k_min_pick), _mm512_castsi256_si512(scales_mins));
    const auto bsums = [&](int t) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(token_block(y, stride, t, i)->bsums)); };
    const __m512i a = _mm512_madd_epi16(_mm512_inserti64x4(_mm512_castsi256_si512(bsums(0)), bsums(1), 1), mins);
    const __m512i b = _mm512_madd_epi16(_mm512_inserti64x4(_mm512_castsi256_si512(bsums(2)), bsums(3), 1), mins);
    // Adjacent lanes added: lane 4t + k = m_2k * s_2k + m_2k+1 * s_2k+1 of token t, exactly the AVX2 madd's.
    const __m512i sums = _mm512_add_epi32(_mm512_permutex2var_epi32(a, even, b), _mm512_permutex2var_epi32(a, odd, b));
    // y_t.d * -dmin is -(y_t.d * dmin): the same float as the AVX2 dot's -y_t.d * dmin.
    const __m512 ydm = _mm512_castps128_ps512(_mm_mul_ps(token_d(y, stride, i), _mm_set1_ps(-dmin)));
    acc_min = _mm512_fmadd_ps(_mm512_permutexvar_ps(spread4, ydm), _mm512_cvtepi32_ps(sums), acc_min);
  }
  void finish(float* out) const {
    alignas(64) float a[2][16], m[16];
    _mm512_store_ps(a[0], acc[0]);
    _mm512_store_ps(a[1], acc[1]);
    _mm512_store_ps(m, acc_min);
    for (int t = 0; t < 4; ++t) out[t] = reduce(_mm256_load_ps(a[t / 2] + 8 * (t % 2)), _mm_load_ps(m + 4 * t));
  }
};

template <int NT>
using SuperBlockSums = std::conditional_t<NT == 4, FourTokenSums, TokenSums<NT>>;

// Decode (one token) streams each row once: the weights a few super-blocks ahead are requested
// now (rows lie back to back, so the stream runs on into the next row; a prefetch past the
// matrix's end is harmless). Prefill reuses a row across tokens from L1 and needs none. On a
// 2-vCPU Xeon (session 22) Q4_K decode went from 39% to 85% of the read bandwidth (8.9 -> 18.9
// tok/s, TinyLlama shape, alternated), Q6_K from 44% to 79%. The AVX2 dots have the same
// (simd/avx2/multi_token.hpp), kept apart so no inline copy crosses compile flags.
constexpr int k_prefetch_bytes = 2048;
template <int NT, class Block>
[[gnu::always_inline]] inline void prefetch_ahead(const Block* b) {
  if constexpr (NT == 1) _mm_prefetch(reinterpret_cast<const char*>(b) + k_prefetch_bytes, _MM_HINT_T0);
}

// Q4_K / Q5_K: register p holds sub-blocks 2p (low nibbles of qs[32p..32p+31]) and 2p + 1
// (their high nibbles); their activations are qs[64p..64p+63] of each token's block.
template <class Block, int NT>
void dot_k_quant(const Block* b, const BlockQ8K* y, std::size_t stride, std::int64_t blocks, float* out) {
  constexpr bool q5 = sizeof(Block) == sizeof(BlockQ5K);
  const __m512i low4 = _mm512_set1_epi8(0x0F), ones8 = _mm512_set1_epi8(1), nibble_shift = halves16(0, 4);
  SuperBlockSums<NT> sums;
  for (std::int64_t i = 0; i < blocks; ++i) {
    prefetch_ahead<NT>(b + i);
    // Scales in bytes 0-7, mins in 8-15: blocks.hpp k_scales_mins spelled out here, since a
    // copy of that inline function compiled in this file could serve the AVX2 and scalar callers.
    std::uint32_t words[4];
    std::uint32_t w[3];
    std::memcpy(w, b[i].scales, 12);
    words[0] = w[0] & 0x3f3f3f3fu;
    words[1] = (w[2] & 0x0f0f0f0fu) | (((w[0] >> 6) & 0x03030303u) << 4);
    words[2] = w[1] & 0x3f3f3f3fu;
    words[3] = ((w[2] >> 4) & 0x0f0f0f0fu) | (((w[1] >> 6) & 0x03030303u) << 4);
    const __m256i sm = _mm256_cvtepu8_epi16(_mm_setr_epi32(int(words[0]), int(words[1]), int(words[2]), int(words[3])));
    const __m512i sm512 = _mm512_castsi256_si512(sm);
    __m512i qh;
    if constexpr (q5) qh = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qh)));
    __m512i isum[NT];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) isum[t] = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      const __m512i v = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qs + 32 * p)));
      __m512i q = _mm512_and_si512(_mm512_srlv_epi16(v, nibble_shift), low4);
      if constexpr (q5)  // bit 2p of qh[l] is sub-block 2p's fifth bit, bit 2p + 1 sub-block 2p + 1's
        q = _mm512_or_si512(q, _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(qh, halves16(std::int16_t(2 * p), std::int16_t(2 * p + 1))), ones8), 4));
      const __m512i scale = _mm512_permutexvar_epi16(halves16(std::int16_t(2 * p), std::int16_t(2 * p + 1)), sm512);
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        const __m512i qy = _mm512_loadu_si512(token_block(y, stride, t, i)->qs + 64 * p);
        isum[t] = _mm512_dpwssd_epi32(isum[t], _mm512_maddubs_epi16(q, qy), scale);
      }
    }
    sums.add(isum, y, stride, i, _cvtsh_ss(b[i].d));
    sums.add_mins(sm, y, stride, i, _cvtsh_ss(b[i].dmin));
  }
  sums.finish(out);
}

// Q6_K: register (h, m) holds codes 128h + 64m .. +63, i.e. the AVX2 dot's pieces k = 2m and
// 2m + 1 of half h: low nibbles of ql[64h..64h+63] (m = 0) or their high nibbles (m = 1), and
// two bits of qh[32h..32h+31] shifted by 2k. AVX-512 has no byte sign instruction, so the
// signed code c - 32 enters as maddubs(c, y) - maddubs(32, y): the same int16 pair sums as
// the AVX2 dot's sign trick (Q8_K codes are within [-127, 127]). Four scales per register,
// one per 16 codes.
template <int NT>
void dot_q6_k(const BlockQ6K* b, const BlockQ8K* y, std::size_t stride, std::int64_t blocks, float* out) {
  const __m512i low4 = _mm512_set1_epi8(0x0F), low2 = _mm512_set1_epi8(3), k32 = _mm512_set1_epi8(32);
  __m512i pick[4];  // int16 lane l of register (h, m) takes scale 4 * (2h + m) + l / 8
  for (int r = 0; r < 4; ++r) {
    std::int16_t lanes[32];
    for (int l = 0; l < 32; ++l) lanes[l] = std::int16_t(4 * r + l / 8);
    pick[r] = _mm512_loadu_si512(lanes);
  }
  SuperBlockSums<NT> sums;
  for (std::int64_t i = 0; i < blocks; ++i) {
    prefetch_ahead<NT>(b + i);
    const __m512i scales16 =
        _mm512_castsi256_si512(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b[i].scales))));
    __m512i isum[NT];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) isum[t] = _mm512_setzero_si512();
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m512i l = _mm512_loadu_si512(b[i].ql + 64 * h);
      const __m512i hb = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b[i].qh + 32 * h)));
#pragma GCC unroll 2
      for (int m = 0; m < 2; ++m) {
        const __m512i lows = _mm512_and_si512(m == 0 ? l : _mm512_srli_epi16(l, 4), low4);
        const __m512i high = _mm512_slli_epi16(
            _mm512_and_si512(_mm512_srlv_epi16(hb, halves16(std::int16_t(4 * m), std::int16_t(4 * m + 2))), low2), 4);
        const __m512i c = _mm512_or_si512(lows, high);
        const __m512i scale = _mm512_permutexvar_epi16(pick[2 * h + m], scales16);
#pragma GCC unroll 4
        for (int t = 0; t < NT; ++t) {
          const __m512i qy = _mm512_loadu_si512(token_block(y, stride, t, i)->qs + 128 * h + 64 * m);
          const __m512i prod = _mm512_sub_epi16(_mm512_maddubs_epi16(c, qy), _mm512_maddubs_epi16(k32, qy));
          isum[t] = _mm512_dpwssd_epi32(isum[t], prod, scale);
        }
      }
    }
    sums.add(isum, y, stride, i, _cvtsh_ss(b[i].d));
  }
  sums.finish(out);  // no min term: acc_min stays 0, as the AVX2 dot's
}

// kernel.template operator()<NT>() for nt = 1..k_dot_multi_tokens.
template <class Kernel>
void for_token_count(int nt, Kernel&& kernel) {
  static_assert(k_dot_multi_tokens == 4);
  switch (nt) {
    case 1: return kernel.template operator()<1>();
    case 2: return kernel.template operator()<2>();
    case 3: return kernel.template operator()<3>();
    default: return kernel.template operator()<4>();
  }
}

}  // namespace

float dot_q4_k_q8_k_avx512vnni(const void* w, const void* a, std::int64_t n) {
  float out;
  dot_k_quant<BlockQ4K, 1>(static_cast<const BlockQ4K*>(w), static_cast<const BlockQ8K*>(a), 0, n / k_qk_k, &out);
  return out;
}
void dot_multi_q4_k_q8_k_avx512vnni(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out) {
  for_token_count(nt, [&]<int NT>() { dot_k_quant<BlockQ4K, NT>(static_cast<const BlockQ4K*>(w), static_cast<const BlockQ8K*>(a), a_stride, n / k_qk_k, out); });
}
float dot_q5_k_q8_k_avx512vnni(const void* w, const void* a, std::int64_t n) {
  float out;
  dot_k_quant<BlockQ5K, 1>(static_cast<const BlockQ5K*>(w), static_cast<const BlockQ8K*>(a), 0, n / k_qk_k, &out);
  return out;
}
void dot_multi_q5_k_q8_k_avx512vnni(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out) {
  for_token_count(nt, [&]<int NT>() { dot_k_quant<BlockQ5K, NT>(static_cast<const BlockQ5K*>(w), static_cast<const BlockQ8K*>(a), a_stride, n / k_qk_k, out); });
}
float dot_q6_k_q8_k_avx512vnni(const void* w, const void* a, std::int64_t n) {
  float out;
  dot_q6_k<1>(static_cast<const BlockQ6K*>(w), static_cast<const BlockQ8K*>(a), 0, n / k_qk_k, &out);
  return out;
}
void dot_multi_q6_k_q8_k_avx512vnni(const void* w, const void* a, std::size_t a_stride, int nt, std::int64_t n, float* out) {
  for_token_count(nt, [&]<int NT>() { dot_q6_k<NT>(static_cast<const BlockQ6K*>(w), static_cast<const BlockQ8K*>(a), a_stride, n / k_qk_k, out); });
}

}  // namespace trilemma::engine
