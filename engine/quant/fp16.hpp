// Scalar IEEE half and bfloat16 conversions, bit-exact with ggml's reference conversions
// (ggml-impl.h: ggml_compute_fp32_to_fp16 / fp16_to_fp32, ggml_compute_fp32_to_bf16):
// round to nearest even, NaN kept quiet. Safe without -ffast-math only.
#pragma once
#include <bit>
#include <cstdint>

namespace trilemma::engine {

inline float fp16_to_fp32(std::uint16_t h) {
  const std::uint32_t w = std::uint32_t(h) << 16;
  const std::uint32_t sign = w & 0x80000000u;
  const std::uint32_t two_w = w + w;
  const float normalized = std::bit_cast<float>((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  const float denormalized = std::bit_cast<float>((two_w >> 17) | (126u << 23)) - 0.5f;
  const std::uint32_t result =
      sign | (two_w < (1u << 27) ? std::bit_cast<std::uint32_t>(denormalized) : std::bit_cast<std::uint32_t>(normalized));
  return std::bit_cast<float>(result);
}

inline std::uint16_t fp32_to_fp16(float f) {
  float base = (__builtin_fabsf(f) * 0x1.0p+112f) * 0x1.0p-110f;
  const std::uint32_t w = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t shl1_w = w + w;
  const std::uint32_t sign = w & 0x80000000u;
  std::uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = std::bit_cast<float>((bias >> 1) + 0x07800000u) + base;
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(base);
  const std::uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
  const std::uint32_t mantissa_bits = bits & 0x00000FFFu;
  const std::uint32_t nonsign = exp_bits + mantissa_bits;
  return std::uint16_t((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

inline float bf16_to_fp32(std::uint16_t h) { return std::bit_cast<float>(std::uint32_t(h) << 16); }

inline std::uint16_t fp32_to_bf16(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((u >> 16) | 64);  // quiet NaN
  return std::uint16_t((u + (0x7fffu + ((u >> 16) & 1u))) >> 16);
}

}  // namespace trilemma::engine
