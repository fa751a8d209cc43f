// Block layouts of the quantized formats. ggml's (ggml-common.h) are reproduced byte for byte;
// trilemma's tq3_t / tq2_t are specified in docs/formats.md. Sizes are pinned against the
// shared tensor-type table so the two can never drift apart.
#pragma once
#include <cstdint>
#include <cstring>

#include "types/tensor_type.hpp"

namespace trilemma::engine {

inline constexpr int k_qk8_0 = 32;
inline constexpr int k_qk4_0 = 32;
inline constexpr int k_qk_k = 256;   // super-block of the k-quants
inline constexpr int k_qk_t = 64;    // tq3_t / tq2_t

// x = d * q, q in [-127, 127]
struct BlockQ8_0 {
  std::uint16_t d;  // fp16 scale
  std::int8_t qs[k_qk8_0];
};
// x = d * (q - 8); qs[j] holds element j (low nibble) and element j + 16 (high nibble)
struct BlockQ4_0 {
  std::uint16_t d;
  std::uint8_t qs[k_qk4_0 / 2];
};
// x = d * q + m, q in [0, 15]; nibbles as Q4_0
struct BlockQ4_1 {
  std::uint16_t d, m;
  std::uint8_t qs[k_qk4_0 / 2];
};
// x = d * (q - 16), q in [0, 31]: the low four bits as Q4_0's nibbles, the fifth bit of element j
// at bit j of qh (a little-endian 32-bit word)
struct BlockQ5_0 {
  std::uint16_t d;
  std::uint8_t qh[4];
  std::uint8_t qs[k_qk4_0 / 2];
};
// x = d * q + m, q in [0, 31]; bits as Q5_0
struct BlockQ5_1 {
  std::uint16_t d, m;
  std::uint8_t qh[4];
  std::uint8_t qs[k_qk4_0 / 2];
};
// x = d * k_iq4nl_values[q], q in [0, 15]; nibbles as Q4_0
struct BlockIq4Nl {
  std::uint16_t d;
  std::uint8_t qs[k_qk4_0 / 2];
};
// IQ4_NL's 16 levels (ggml-common.h kvalues_iq4nl): denser near zero, where weights cluster.
inline constexpr std::int8_t k_iq4nl_values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                   1,    13,   25,  38,  53,  69,  89,  113};
// Q2_K and Q3_K: 16 sub-blocks of 16. Element e = 128h + 32j + l (h < 2, j < 4, l < 32) has
// its two low bits at bits 2j of qs[32h + l] and its sub-block scale at index e / 16.
// Q2_K: x = d * (scales[t] & 15) * q - dmin * (scales[t] >> 4), q in [0, 3].
struct BlockQ2K {
  std::uint8_t scales[k_qk_k / 16];
  std::uint8_t qs[k_qk_k / 4];
  std::uint16_t d, dmin;
};
// Q3_K: x = d * (s[t] - 32) * (q - 4), q in [0, 7]: the low two bits as Q2_K's, the third at
// bit 4h + j of hmask[l]. The 16 six-bit s[t] are packed in 12 bytes (q3_k_scales).
struct BlockQ3K {
  std::uint8_t hmask[k_qk_k / 8];
  std::uint8_t qs[k_qk_k / 4];
  std::uint8_t scales[12];
  std::uint16_t d;
};
// Q3_K's sixteen 6-bit scales, unbiased (s[t] - 32): low nibbles of bytes 0..7 for t < 8, their
// high nibbles for t >= 8, and the two top bits from bytes 8..11 (ggml's dequantize_row_q3_K
// kmask shuffle, spelled byte by byte).
inline void q3_k_scales(const std::uint8_t* packed, int out[16]) {
  for (int t = 0; t < 16; ++t) {
    const int low = t < 8 ? packed[t] & 0xF : packed[t - 8] >> 4;
    const int high = (packed[8 + t % 4] >> (2 * (t / 4))) & 3;
    out[t] = (low | (high << 4)) - 32;
  }
}
// The same sixteen scales, still biased by 32, as four little-endian words of bytes (ggml's
// kmask shuffle), for the SIMD dots, which take them straight into a register.
inline void q3_k_scale_words(const std::uint8_t* packed, std::uint32_t r[4]) {
  std::uint32_t w[3];
  std::memcpy(w, packed, 12);
  const std::uint32_t four = 0x0f0f0f0fu, two = 0x03030303u;
  r[0] = (w[0] & four) | ((w[2] & two) << 4);
  r[1] = (w[1] & four) | (((w[2] >> 2) & two) << 4);
  r[2] = ((w[0] >> 4) & four) | (((w[2] >> 4) & two) << 4);
  r[3] = ((w[1] >> 4) & four) | (((w[2] >> 6) & two) << 4);
}
// 8 sub-blocks of 32: x = d * sc[j] * q - dmin * m[j], q in [0, 15]; sc, m are 6-bit packed in
// `scales` (get_scale_min_k4). qs[32*p + l] holds elements 64p + l (low) and 64p + 32 + l (high).
struct BlockQ4K {
  std::uint16_t d, dmin;
  std::uint8_t scales[12];
  std::uint8_t qs[k_qk_k / 2];
};
// Sub-block j's 6-bit scale and min of a Q4_K / Q5_K block (ggml's get_scale_min_k4).
inline void k_scale_min(int j, const std::uint8_t* q, std::uint8_t& d, std::uint8_t& m) {
  if (j < 4) {
    d = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    d = std::uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = std::uint8_t((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
  }
}
// All eight 6-bit scales and mins of a Q4_K / Q5_K block at once, as the bytes of four
// little-endian words: bytes 0-7 the scales, 8-15 the mins (k_scale_min for j = 0..7).
inline void k_scales_mins(const std::uint8_t* q, std::uint32_t r[4]) {
  std::uint32_t w[3];
  std::memcpy(w, q, 12);
  const std::uint32_t six = 0x3f3f3f3fu, four = 0x0f0f0f0fu, two = 0x03030303u;
  r[0] = w[0] & six;
  r[1] = (w[2] & four) | (((w[0] >> 6) & two) << 4);
  r[2] = w[1] & six;
  r[3] = ((w[2] >> 4) & four) | (((w[1] >> 6) & two) << 4);
}
// As Q4_K with a fifth bit: qh[l] bit 2p is element 64p + l's, bit 2p+1 is element 64p+32+l's.
struct BlockQ5K {
  std::uint16_t d, dmin;
  std::uint8_t scales[12];
  std::uint8_t qh[k_qk_k / 8];
  std::uint8_t qs[k_qk_k / 2];
};
// 16 sub-blocks of 16: x = d * scales[j] * (q - 32), q in [0, 63]: 4 low bits in ql, 2 high in qh.
struct BlockQ6K {
  std::uint8_t ql[k_qk_k / 2];
  std::uint8_t qh[k_qk_k / 4];
  std::int8_t scales[k_qk_k / 16];
  std::uint16_t d;
};
// The k-quants' activations (ggml's block_q8_K): x = d * q with one f32 scale per 256, and
// the sums of each 16 codes, so a k-quant dot sums a whole super-block in integers and takes
// its min terms (dmin * m_t * sum of activations) without touching the codes again.
struct BlockQ8K {
  float d;
  std::int8_t qs[k_qk_k];
  std::int16_t bsums[k_qk_k / 16];
};
// trilemma INT3: x = d * q + m, q in [0, 7]. Low two bits of element i at bits 2*(i/16) of
// ql[i % 16]; the high bit at bit i % 8 of qh[i / 8]. 28 bytes per 64 weights.
struct BlockTq3 {
  std::uint16_t d, m;
  std::uint8_t ql[k_qk_t / 4];
  std::uint8_t qh[k_qk_t / 8];
};
// trilemma INT2: x = d * q + m, q in [0, 3], packed as tq3_t's ql. 20 bytes per 64 weights.
struct BlockTq2 {
  std::uint16_t d, m;
  std::uint8_t qs[k_qk_t / 4];
};

// The shared table's block_bytes is runtime data; kernel_table_test checks it equals these.
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 && sizeof(BlockQ5_1) == 24 && sizeof(BlockIq4Nl) == 18);
static_assert(sizeof(BlockQ2K) == 84 && sizeof(BlockQ3K) == 110 && sizeof(BlockQ8K) == 292);
static_assert(sizeof(BlockQ4K) == 144 && sizeof(BlockQ5K) == 176 && sizeof(BlockQ6K) == 210);
static_assert(sizeof(BlockTq3) == 28 && sizeof(BlockTq2) == 20);

}  // namespace trilemma::engine
