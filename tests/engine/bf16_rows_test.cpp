// The bf16 panel (quant/bf16_panel.hpp) and the AMX-BF16 f16 rows (simd/amx/rows_f16_amx.cpp):
// the packers against each other and the split's definition, the kernel against the f32 dot and
// against itself on one token.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "engine/quant/bf16_panel.hpp"
#include "engine/quant/fp16.hpp"
#include "engine/quant/kernel_table.hpp"

using namespace trilemma;
using namespace trilemma::engine;

namespace {

std::vector<float> scaled_normal(std::size_t n, std::uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

float from_bf16(std::uint16_t h) {
  const std::uint32_t b = std::uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

}  // namespace

TEST_CASE("quant::bf16_panel: the halves rebuild every f16 exactly and an f32 within 2^-16", "[quant]") {
  int checked = 0;
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float w = fp16_to_fp32(std::uint16_t(h));
    if (!std::isfinite(w)) continue;
    const float rebuilt = from_bf16(bf16_hi(w)) + from_bf16(bf16_lo(w));
    if (rebuilt != w) FAIL("f16 " << h << " = " << w << " rebuilds as " << rebuilt);
    ++checked;
  }
  CHECK(checked == 63488);  // every finite half: 2^16 minus 2 x 1024 inf/NaN codes
  for (const float x : scaled_normal(4096, 3, 10.0f)) {
    const double rebuilt = double(from_bf16(bf16_hi(x))) + double(from_bf16(bf16_lo(x)));
    CHECK(std::fabs(rebuilt - double(x)) <= std::ldexp(std::fabs(double(x)), -16));
  }
}

TEST_CASE("quant::bf16_panel: the AVX-512 packer writes the reference's panel", "[quant]") {
  if (detect_isa() != Isa::avx512vnni) {
    WARN("skipped: this CPU (or TRILEMMA_ISA) has no AVX-512, so the AVX-512 bf16 packer cannot run");
    return;
  }
  // Through the dispatcher, so the test links where the AVX-512 twin is not built (aarch64).
  const PackBf16TokenFn pack_avx512 = select_pack_bf16_panel_token(Isa::avx512vnni);
  REQUIRE(pack_avx512 != nullptr);
  REQUIRE(pack_avx512 != &pack_bf16_panel_token);
  REQUIRE(select_pack_bf16_panel_token(Isa::avx2) == &pack_bf16_panel_token);
  for (const std::int64_t n : {7, 32, 33, 100, 2048}) {
    const int tokens = 19;  // a whole slab and a short one
    CAPTURE(n);
    const auto x = scaled_normal(std::size_t(n) * tokens, 11, 3.0f);
    Bf16Panel ref, simd;
    resize_bf16_panel(ref, tokens, n);
    resize_bf16_panel(simd, tokens, n);
    REQUIRE(ref.data.size() == std::size_t((tokens + 15) / 16) * std::size_t((n + 31) / 32) * 1024);
    for (int t = tokens - 1; t >= 0; --t) {  // any order: tokens are packed concurrently
      pack_bf16_panel_token(&x[std::size_t(t) * std::size_t(n)], t, ref);
      pack_avx512(&x[std::size_t(t) * std::size_t(n)], t, simd);
    }
    CHECK(std::memcmp(ref.data.data(), simd.data.data(), ref.data.size() * 2) == 0);
    // The layout: token 17, element n - 1 at (slab 1, k-step, half, row p, column 1, pair slot).
    const std::int64_t k = n - 1;
    const std::size_t at = std::size_t((k % 32) / 2) * 32 + 1 * 2 + std::size_t(k % 2);
    CHECK(ref.tile(1, k / 32, 0)[at] == bf16_hi(x[std::size_t(17 * n + k)]));
    CHECK(ref.tile(1, k / 32, 1)[at] == bf16_lo(x[std::size_t(17 * n + k)]));
  }
}

TEST_CASE("quant::rows_amx: the AMX-BF16 f16 rows match the f32 dots, and a (row, token) result does not depend on the batch", "[quant]") {
  const FormatKernels& f16 = *find_kernels(TensorType::f16);
  const PanelRowsFn rows_fn = select_rows_amx(f16, detect_isa());
  if (rows_fn == nullptr) {
    WARN("skipped: this CPU, its OS or TRILEMMA_AMX=0 does not allow AMX-BF16 tiles");
    return;
  }
  // Rows: one strip, strips with a short last one (decode pairs them), several pairs; lengths
  // with every k-step tail; tokens: decode, a short slab, one slab, two and five slabs (a pass of
  // four and one more).
  for (const int rows : {16, 37, 70}) {
    for (const std::int64_t n : {7, 32, 33, 100, 2048}) {
      CAPTURE(rows, n);
      const std::size_t row_bytes = std::size_t(n) * 2;
      std::vector<std::uint16_t> w(std::size_t(rows) * std::size_t(n));
      const auto wf = scaled_normal(w.size(), 5);
      for (std::size_t i = 0; i < w.size(); ++i) w[i] = fp32_to_fp16(wf[i]);
      constexpr int tokens = 70;
      const auto x = scaled_normal(std::size_t(n) * tokens, 9);
      Bf16Panel panel;
      resize_bf16_panel(panel, tokens, n);
      for (int t = 0; t < tokens; ++t) pack_bf16_panel_token(&x[std::size_t(t) * std::size_t(n)], t, panel);
      // Decode's call: each token alone, as token 0 of a panel of one.
      std::vector<float> single(std::size_t(rows) * tokens);
      for (int t = 0; t < tokens; ++t) {
        Bf16Panel one;
        resize_bf16_panel(one, 1, n);
        pack_bf16_panel_token(&x[std::size_t(t) * std::size_t(n)], 0, one);
        rows_fn(w.data(), row_bytes, rows, one, 0, 1, &single[std::size_t(t) * std::size_t(rows)], std::size_t(rows));
      }
      for (const int nt : {1, 5, 16, 17, 64, 70}) {
        CAPTURE(nt);
        std::vector<float> out(std::size_t(rows + 3) * tokens, -1.0f);  // 3 guard columns per token
        rows_fn(w.data(), row_bytes, rows, panel, 0, nt, out.data(), std::size_t(rows + 3));
        int far = 0, differ = 0;
        for (int t = 0; t < tokens; ++t)
          for (int r = 0; r < rows + 3; ++r) {
            const float got = out[std::size_t(t) * std::size_t(rows + 3) + std::size_t(r)];
            if (t >= nt || r >= rows) {
              if (got != -1.0f) FAIL("wrote past the rows or tokens asked for: row " << r << ", token " << t);
              continue;
            }
            double magnitude = 0;
            for (std::int64_t i = 0; i < n; ++i)
              magnitude += std::fabs(double(fp16_to_fp32(w[std::size_t(r) * std::size_t(n) + std::size_t(i)])) * x[std::size_t(t) * std::size_t(n) + std::size_t(i)]);
            const float ref = f16.dot_ref(&w[std::size_t(r) * std::size_t(n)], &x[std::size_t(t) * std::size_t(n)], n);
            if (std::fabs(got - ref) > k_bf16_split_tolerance * magnitude + 1e-6) ++far;
            if (std::memcmp(&got, &single[std::size_t(t) * std::size_t(rows) + std::size_t(r)], 4) != 0) ++differ;
          }
        CHECK(far == 0);
        CHECK(differ == 0);
      }
    }
  }
}
