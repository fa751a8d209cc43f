#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "engine/quant/blocks.hpp"
#include "engine/quant/cpu_features.hpp"
#include "engine/quant/fp16.hpp"
#include "engine/quant/kernel_table.hpp"
#include "engine/quant/kernels.hpp"
#include "engine/quant/q8_panel.hpp"

using namespace trilemma;
using namespace trilemma::engine;

namespace {

std::vector<float> normal(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

struct Encoded {
  std::vector<std::byte> bytes;
  std::vector<float> decoded;
};

Encoded encode(TensorType type, const std::vector<float>& x) {
  const FormatKernels* k = find_kernels(type);
  Encoded e{std::vector<std::byte>(tensor_bytes(type, x.size())), std::vector<float>(x.size())};
  k->quantize(x.data(), e.bytes.data(), std::int64_t(x.size()));
  k->dequantize(e.bytes.data(), e.decoded.data(), std::int64_t(x.size()));
  return e;
}

// Every SIMD level this CPU runs (avx512vnni machines also test their avx2 columns, dotprod
// machines their neon columns).
std::vector<Isa> compiled_isas() {
  std::vector<Isa> out;
  const Isa best = detect_isa();
  if (best == Isa::avx512vnni) out.push_back(Isa::avx2);
  if (best == Isa::dotprod) out.push_back(Isa::neon);
  if (best != Isa::scalar) out.push_back(best);
  return out;
}

// `tokens` tokens of activations (Q8_0 unless `type` says otherwise; seeds seed, seed + 1, ...)
// and their panel, which points into `act_rows` (the AMX strips read the Q8_0 rows, the Q4_K
// strips the Q8_K rows; only Q8_0 rows are packed into the panel's arrays).
std::vector<Encoded> panel_tokens(std::int64_t n, std::uint32_t seed, Q8Panel& panel, std::vector<std::byte>& act_rows, int tokens = 9,
                                  TensorType type = TensorType::q8_0) {
  std::vector<Encoded> acts;
  act_rows.clear();
  for (std::uint32_t j = 0; j < std::uint32_t(tokens); ++j) {
    acts.push_back(encode(type, normal(std::size_t(n), seed + j)));
    act_rows.insert(act_rows.end(), acts.back().bytes.begin(), acts.back().bytes.end());
  }
  if (type == TensorType::q8_0) pack_q8_panel(act_rows.data(), acts[0].bytes.size(), tokens, n / 32, panel);
  panel.tokens = tokens, panel.rows = act_rows.data(), panel.row_stride = acts[0].bytes.size();
  return acts;
}

// A panel kernel (x4 tile or x16 strip) over `rows` weight rows, called as run(t0, nt, out) with
// out[r + j * rows] = dot(row r, token t0 + j): for 1..max_nt tokens from t0 = 0 and 1 every result
// matches the `_ref` dot, equals the same token run alone bit for bit (batch invariance: decode
// = prefill), and nothing is written past the nt tokens asked for.
void check_panel_kernel(const FormatKernels& row, const std::vector<Encoded>& w, const std::vector<Encoded>& acts, int rows,
                        std::int64_t n, int max_nt, const std::function<void(int, int, float*)>& run) {
  std::vector<float> single(std::size_t(rows) * acts.size());
  for (std::size_t t = 0; t < acts.size(); ++t) run(int(t), 1, &single[t * std::size_t(rows)]);
  for (int t0 : {0, 1}) {
    for (int nt = 1; nt <= std::min(max_nt, int(acts.size()) - t0); ++nt) {
      CAPTURE(t0, nt);
      std::vector<float> out(std::size_t(rows * max_nt), -1.0f);
      run(t0, nt, out.data());
      for (int r = 0; r < rows; ++r) {
        for (int j = 0; j < nt; ++j) {
          const Encoded& a = acts[std::size_t(t0 + j)];
          double magnitude = 0;
          for (std::int64_t i = 0; i < n; ++i) magnitude += std::fabs(double(w[std::size_t(r)].decoded[i]) * a.decoded[i]);
          const float ref = row.dot_ref(w[std::size_t(r)].bytes.data(), a.bytes.data(), n);
          CHECK(std::fabs(out[std::size_t(r + j * rows)] - ref) <= row.dot_tolerance * magnitude + 1e-6);
          CHECK(std::memcmp(&out[std::size_t(r + j * rows)], &single[std::size_t(r + (t0 + j) * rows)], sizeof(float)) == 0);
        }
      }
      for (std::size_t i = std::size_t(rows * nt); i < out.size(); ++i) CHECK(out[i] == -1.0f);
    }
  }
}

// Two columns that claim the same bits give them on random rows of 1, 2, 5 and 22 blocks.
void check_same_bits(const FormatKernels& row, DotFn first, DotFn second, std::uint32_t seed_base) {
  for (const int blocks : {1, 2, 5, 22}) {
    const std::int64_t n = std::int64_t(blocks) * info(row.weight).block_elems;
    CAPTURE(n);
    for (std::uint32_t seed = 1; seed <= 4; ++seed) {
      const Encoded w = encode(row.weight, normal(std::size_t(n), seed_base + seed));
      const Encoded a = encode(row.activation, normal(std::size_t(n), seed_base + 100u + seed));
      const float x = first(w.bytes.data(), a.bytes.data(), n), y = second(w.bytes.data(), a.bytes.data(), n);
      CHECK(std::memcmp(&x, &y, sizeof(float)) == 0);
    }
  }
}

}  // namespace

TEST_CASE("quant::format_kernels: block structs match the shared tensor-type table", "[quant]") {
  CHECK(info(TensorType::q8_0).block_bytes == sizeof(BlockQ8_0));
  CHECK(info(TensorType::q4_0).block_bytes == sizeof(BlockQ4_0));
  CHECK(info(TensorType::q4_1).block_bytes == sizeof(BlockQ4_1));
  CHECK(info(TensorType::q5_0).block_bytes == sizeof(BlockQ5_0));
  CHECK(info(TensorType::q5_1).block_bytes == sizeof(BlockQ5_1));
  CHECK(info(TensorType::iq4_nl).block_bytes == sizeof(BlockIq4Nl));
  CHECK(info(TensorType::q4_k).block_bytes == sizeof(BlockQ4K));
  CHECK(info(TensorType::q5_k).block_bytes == sizeof(BlockQ5K));
  CHECK(info(TensorType::q6_k).block_bytes == sizeof(BlockQ6K));
  CHECK(info(TensorType::tq3_t).block_bytes == sizeof(BlockTq3));
  CHECK(info(TensorType::tq2_t).block_bytes == sizeof(BlockTq2));
  CHECK(info(TensorType::tq3_t).block_elems == k_qk_t);
  for (const auto& row : format_kernels()) {
    CAPTURE(info(row.weight).name);
    CHECK(info(row.weight).block_elems % info(row.activation).block_elems == 0);
  }
}

TEST_CASE("quant::format_kernels: every SIMD column matches its _ref twin on 1, 2, 3 and 128 blocks", "[quant]") {
  const auto isas = compiled_isas();
  for (const auto& row : format_kernels()) {
    const std::uint32_t block = info(row.weight).block_elems;
    const auto* act = find_kernels(row.activation);
    REQUIRE(act != nullptr);
    std::vector<std::int64_t> lengths;
    for (int blocks : {1, 2, 3, 128}) lengths.push_back(std::int64_t(blocks) * block);
    if (block == 1) lengths.insert(lengths.end(), {7, 8, 9, 37, 1000});  // float tails
    for (const std::int64_t n : lengths) {
      const std::uint32_t seed = 1234u + std::uint32_t(n);
      CAPTURE(info(row.weight).name, n, seed);
      const Encoded w = encode(row.weight, normal(std::size_t(n), seed));
      const Encoded a = encode(row.activation, normal(std::size_t(n), seed + 1));
      double exact = 0, magnitude = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        exact += double(w.decoded[i]) * a.decoded[i];
        magnitude += std::fabs(double(w.decoded[i]) * a.decoded[i]);
      }
      const float ref = row.dot_ref(w.bytes.data(), a.bytes.data(), n);
      // The reference dot is the dot of the dequantized rows (float rounding aside).
      CHECK(std::fabs(ref - exact) <= 1e-5 * magnitude + 1e-6);
      for (const Isa isa : isas) {
        if (select_dot(row, isa) == row.dot_ref) continue;
        CAPTURE(isa_name(isa));
        const float simd = select_dot(row, isa)(w.bytes.data(), a.bytes.data(), n);
        CHECK(std::fabs(simd - ref) <= row.dot_tolerance * magnitude + 1e-6);
      }
    }
  }
}

TEST_CASE("quant::format_kernels: every multi-token dot gives each token the single dot's bits, for 1..4 tokens", "[quant]") {
  int checked = 0;
  for (const auto& row : format_kernels()) {
    for (const Isa isa : compiled_isas()) {
      const DotMultiFn multi = select_dot_multi(row, isa);
      if (multi == nullptr) continue;
      const std::int64_t n = 3 * std::int64_t(info(row.weight).block_elems);
      const Encoded w = encode(row.weight, normal(std::size_t(n), 99));
      std::vector<Encoded> tokens;
      for (int t = 0; t < k_dot_multi_tokens; ++t) tokens.push_back(encode(row.activation, normal(std::size_t(n), 100u + unsigned(t))));
      const std::size_t stride = tokens[0].bytes.size();
      std::vector<std::byte> packed;  // the tokens back to back, as the matmul holds them
      for (const auto& t : tokens) packed.insert(packed.end(), t.bytes.begin(), t.bytes.end());
      for (int nt = 1; nt <= k_dot_multi_tokens; ++nt) {
        CAPTURE(info(row.weight).name, isa_name(isa), nt);
        float out[k_dot_multi_tokens];
        multi(w.bytes.data(), packed.data(), stride, nt, n, out);
        for (int t = 0; t < nt; ++t) {
          const float single = select_dot(row, isa)(w.bytes.data(), tokens[std::size_t(t)].bytes.data(), n);
          CHECK(std::memcmp(&out[t], &single, sizeof(float)) == 0);
        }
      }
      ++checked;
    }
  }
#if defined(__x86_64__)
  if (detect_isa() != Isa::scalar) CHECK(checked >= 5);  // q2_k .. q6_k on this CPU
#endif
}

TEST_CASE("quant::format_kernels: the AVX-512 k-quant dots give the AVX2 dots' bits", "[quant]") {
  // They claim the same integer lanes and the same float steps (simd/avx512/dot_k_avx512vnni.cpp),
  // so a host with AVX-512 and one without decode to the same logits.
  if (detect_isa() != Isa::avx512vnni) {
    WARN("skipped: this CPU (or TRILEMMA_ISA) has no AVX-512 VNNI, so the AVX-512 columns cannot run");
    return;
  }
  int checked = 0;
  for (const auto& row : format_kernels()) {
    if (row.dot_avx512 == nullptr) continue;
    CAPTURE(info(row.weight).name);
    REQUIRE(row.dot_avx2 != nullptr);
    REQUIRE(row.dot_multi_avx512 != nullptr);
    check_same_bits(row, row.dot_avx2, row.dot_avx512, 700);
    ++checked;
  }
  CHECK(checked == 3);  // q4_k, q5_k, q6_k
}

TEST_CASE("quant::format_kernels: the dotprod k-quant and 32-weight dots give the NEON dots' bits", "[quant]") {
  // One loop (simd/neon/k_quant_neon.hpp, block32_neon.hpp) over two ways to sum 16 int8
  // products: exact integers either way, so a phone with SDOT and a Cortex-A53 decode to the
  // same logits. Q8_0 and Q4_0 are apart: their dotprod dots chain blocks as the i8mm rows do.
  if (detect_isa() != Isa::dotprod) {
    WARN("skipped: not an aarch64 CPU with asimddp (this one: " << isa_name(detect_isa()) << "), so the dotprod columns cannot run");
    return;
  }
  int checked = 0;
  for (const auto& row : format_kernels()) {
    if (row.dot_dotprod == nullptr || row.weight == TensorType::q8_0 || row.weight == TensorType::q4_0) continue;
    CAPTURE(info(row.weight).name);
    REQUIRE(row.dot_neon != nullptr);
    check_same_bits(row, row.dot_neon, row.dot_dotprod, 900);
    ++checked;
  }
  CHECK(checked == 11);  // q2_k .. q6_k, q4_1, q5_0, q5_1, iq4_nl, tq3_t, tq2_t
}

TEST_CASE("quant::format_kernels: the i8mm rows give every (row, token) the dotprod dot's bits, tails included", "[quant]") {
  // SMMLA takes two rows and two tokens; odd rows and tokens fall back to the dot. Every lane
  // runs the dot's integers and float steps, so a prompt's rows equal decode's dots
  // (simd/neon_i8mm). Blocks are 32 codes (q8_0, q4_0) or 256 (q4_k, q6_k).
  for (const auto& row : format_kernels()) CHECK(select_rows_i8mm(row, Isa::neon) == nullptr);
  if (detect_isa() != Isa::dotprod || !i8mm_rows()) {
    WARN("skipped: not an aarch64 CPU with i8mm (this one: " << isa_name(detect_isa()) << "), so the i8mm rows cannot run");
    return;
  }
  int checked = 0;
  for (const auto& row : format_kernels()) {
    const RowsQ8Fn rows_fn = select_rows_i8mm(row, Isa::dotprod);
    if (rows_fn == nullptr) continue;
    REQUIRE(row.dot_dotprod != nullptr);
    const std::int64_t block = std::int64_t(info(row.weight).block_elems);
    for (const std::int64_t blocks : {1, 2, 3, 8}) {  // one chain, both, an odd block last
      const std::int64_t n = blocks * block;
      std::vector<Encoded> w, acts;
      std::vector<std::byte> w_rows, a_rows;
      for (std::uint32_t r = 0; r < 5; ++r) {
        w.push_back(encode(row.weight, normal(std::size_t(n), 1000 + r)));
        w_rows.insert(w_rows.end(), w.back().bytes.begin(), w.back().bytes.end());
      }
      for (std::uint32_t t = 0; t < 7; ++t) {
        acts.push_back(encode(row.activation, normal(std::size_t(n), 2000 + t)));
        a_rows.insert(a_rows.end(), acts.back().bytes.begin(), acts.back().bytes.end());
      }
      const std::size_t w_stride = w[0].bytes.size(), a_stride = acts[0].bytes.size();
      for (int rows = 1; rows <= 5; ++rows)
        for (int nt = 1; nt <= 7; ++nt) {
          CAPTURE(info(row.weight).name, blocks, rows, nt);
          const std::size_t out_stride = std::size_t(rows) + 1;  // a gap the kernel must not write
          std::vector<float> out(out_stride * 8, -7.0f);
          rows_fn(w_rows.data(), w_stride, rows, a_rows.data(), a_stride, nt, n, out.data(), out_stride);
          for (int t = 0; t < 8; ++t)
            for (std::size_t r = 0; r < out_stride; ++r) {
              const float v = out[r + std::size_t(t) * out_stride];
              if (t >= nt || r >= std::size_t(rows)) {
                CHECK(v == -7.0f);
                continue;
              }
              const float dot = row.dot_dotprod(w[r].bytes.data(), acts[std::size_t(t)].bytes.data(), n);
              CHECK(std::memcmp(&v, &dot, sizeof(float)) == 0);
              const float ref = row.dot_ref(w[r].bytes.data(), acts[std::size_t(t)].bytes.data(), n);
              double magnitude = 0;
              for (std::int64_t i = 0; i < n; ++i) magnitude += std::fabs(double(w[r].decoded[std::size_t(i)]) * acts[std::size_t(t)].decoded[std::size_t(i)]);
              CHECK(std::fabs(v - ref) <= row.dot_tolerance * magnitude + 1e-6);
            }
        }
    }
    ++checked;
  }
  CHECK(checked == 4);  // q8_0, q4_0, q4_k, q6_k
}

TEST_CASE("quant::format_kernels: every AVX-512 quantizer writes the reference's bytes", "[quant]") {
  if (detect_isa() != Isa::avx512vnni) {
    WARN("skipped: this CPU (or TRILEMMA_ISA) has no AVX-512 VNNI, so the AVX-512 quantizers cannot run");
    return;
  }
  int checked = 0;
  for (const auto& row : format_kernels()) {
    if (row.quantize_avx512 == nullptr) continue;
    CAPTURE(info(row.weight).name);
    const std::int64_t block = info(row.weight).block_elems, n = 7 * block;
    std::vector<std::vector<float>> inputs;
    for (std::uint32_t seed = 1; seed <= 8; ++seed) inputs.push_back(normal(std::size_t(n), 900u + seed));
    // Blocks the scale and rounding rules single out: all zero; the largest magnitude twice with
    // both signs (the first wins); products on exact halves (ties to even); a NaN (code 0, never
    // the maximum); an infinity (the block stores zeros); tiny values near the float minimum.
    std::vector<float> special(std::size_t(n), 0.0f);
    for (std::int64_t j = block; j < 2 * block; ++j) special[std::size_t(j)] = float(j % 7) - 3.0f;
    special[std::size_t(block + 5)] = -9.0f, special[std::size_t(block + 9)] = 9.0f;
    for (std::int64_t j = 2 * block; j < 3 * block; ++j)  // halves of both signs
      special[std::size_t(j)] = (float(j % 255) - 127.0f) * (j % 4 < 2 ? 0.5f : -0.5f);
    special[std::size_t(2 * block)] = 127.0f;  // scale -1: every other product is an exact half
    for (std::int64_t j = 3 * block; j < 4 * block; ++j) special[std::size_t(j)] = 0.25f * float(j % 5);
    special[std::size_t(3 * block + 3)] = std::nanf("");
    special[std::size_t(3 * block + 1)] = 5.0f;  // q8_0's running maximum restarts after the NaN
    for (std::int64_t j = 4 * block; j < 5 * block; ++j) special[std::size_t(j)] = 1.0f;
    special[std::size_t(4 * block + 1)] = -INFINITY;
    for (std::int64_t j = 5 * block; j < 6 * block; ++j) special[std::size_t(j)] = 1e-38f * float(j % 3 + 1);
    inputs.push_back(special);
    for (const auto& x : inputs) {
      const std::size_t bytes = tensor_bytes(row.weight, std::uint64_t(n));
      std::vector<std::byte> ref(bytes, std::byte{0x55}), simd(bytes, std::byte{0xAA});
      row.quantize(x.data(), ref.data(), n);
      row.quantize_avx512(x.data(), simd.data(), n);
      CHECK(ref == simd);
    }
    ++checked;
  }
  CHECK(checked >= 1);  // q8_k, the k-quants' activations
}

TEST_CASE("quant::q8_panel: the AVX-512 packer writes the reference's panel", "[quant]") {
  if (detect_isa() != Isa::avx512vnni) {
    WARN("skipped: this CPU (or TRILEMMA_ISA) has no AVX-512 VNNI, so the AVX-512 packer cannot run");
    return;
  }
  REQUIRE(select_pack_q8_panel_token(Isa::avx512vnni) != &pack_q8_panel_token);
  REQUIRE(select_pack_q8_panel_token(Isa::avx2) == &pack_q8_panel_token);
  const int tokens = 3;
  for (const std::int64_t n : {128, 256, 2048}) {
    CAPTURE(n);
    std::vector<std::byte> rows;
    for (int t = 0; t < tokens; ++t) {
      auto x = normal(std::size_t(n), 40u + std::uint32_t(t));
      for (std::int64_t j = 0; j < n; j += 37) x[std::size_t(j)] *= 40.0f;  // codes at +-127 beside small ones
      const auto e = encode(TensorType::q8_0, x);
      rows.insert(rows.end(), e.bytes.begin(), e.bytes.end());
    }
    const std::size_t stride = rows.size() / tokens;
    // Every code value once, both extremes included, in the last token's first 8 blocks.
    auto* blocks = reinterpret_cast<BlockQ8_0*>(rows.data() + 2 * stride);
    for (int j = 0; j < 256; ++j) blocks[j / 32].qs[j % 32] = std::int8_t(j - 128);
    Q8Panel ref, simd;
    resize_q8_panel(ref, tokens, n / 32);
    resize_q8_panel(simd, tokens, n / 32);
    std::fill(simd.s8.begin(), simd.s8.end(), std::int8_t(0x55));
    std::fill(simd.init.begin(), simd.init.end(), 0x55);
    for (int t = tokens - 1; t >= 0; --t) {  // any order: tokens are packed concurrently
      pack_q8_panel_token(rows.data() + std::size_t(t) * stride, t, ref);
      select_pack_q8_panel_token(Isa::avx512vnni)(rows.data() + std::size_t(t) * stride, t, simd);
    }
    CHECK(ref.s8 == simd.s8);
    CHECK(ref.u8 == simd.u8);
    CHECK(ref.init == simd.init);
    CHECK(ref.zero == simd.zero);
    CHECK(std::memcmp(ref.dy.data(), simd.dy.data(), ref.dy.size() * sizeof(float)) == 0);
    // The block-major copy the AMX strips load: block b of token t, the row's codes.
    for (int t = 0; t < tokens; ++t)
      for (std::int64_t b = 0; b < n / 32; ++b) {
        const auto& block = reinterpret_cast<const BlockQ8_0*>(rows.data() + std::size_t(t) * stride)[b];
        CHECK(std::memcmp(ref.tile_codes_of(b, t), block.qs, 32) == 0);
        CHECK(std::memcmp(simd.tile_codes_of(b, t), block.qs, 32) == 0);
      }
  }
}

TEST_CASE("quant::format_kernels: round-trip rms error stays within each row's bound", "[quant]") {
  for (const auto& row : format_kernels()) {
    const std::int64_t n = 128 * 256;
    const auto x = normal(std::size_t(n), 77);
    CAPTURE(info(row.weight).name);
    const Encoded e = encode(row.weight, x);
    double err = 0, ref = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      err += double(x[i] - e.decoded[i]) * (x[i] - e.decoded[i]);
      ref += double(x[i]) * x[i];
    }
    const double rel_rms = std::sqrt(err / ref);
    CAPTURE(rel_rms);
    CHECK(rel_rms <= row.roundtrip_rms);
    if (row.roundtrip_rms == 0.0f) CHECK(err == 0.0);
  }
}

TEST_CASE("quant::q8_0 / q4_0: per-element error bounds and ggml's scale rules", "[quant]") {
  const auto x = normal(32 * 64, 5);
  const Encoded q8 = encode(TensorType::q8_0, x);
  const Encoded q4 = encode(TensorType::q4_0, x);
  for (std::size_t b = 0; b < x.size() / 32; ++b) {
    float amax = 0, max = 0;
    for (std::size_t j = 0; j < 32; ++j)
      if (std::fabs(x[32 * b + j]) > amax) amax = std::fabs(x[32 * b + j]), max = x[32 * b + j];
    const auto* b8 = reinterpret_cast<const BlockQ8_0*>(q8.bytes.data()) + b;
    const auto* b4 = reinterpret_cast<const BlockQ4_0*>(q4.bytes.data()) + b;
    CHECK(b8->d == fp32_to_fp16(amax / 127.0f));
    CHECK(b4->d == fp32_to_fp16(max / -8.0f));
    for (std::size_t j = 0; j < 32; ++j) {
      const std::size_t i = 32 * b + j;
      CHECK(std::fabs(x[i] - q8.decoded[i]) <= amax / 127.0f * (0.5f + 127.0f / 2048.0f));
      CHECK(std::fabs(x[i] - q4.decoded[i]) <= amax / 8.0f * (1.0f + 16.0f / 2048.0f));
    }
  }
}

TEST_CASE("quant::q8_0 / q4_0: NaN and infinite inputs give defined levels (fuzz finding, issue 14)", "[quant]") {
  // A crafted model's activations overflow to inf and NaN; converting those to int was
  // undefined (UBSan: "-nan is outside the range of representable values of type 'int'").
  std::vector<float> x(64, 1.0f);
  x[3] = std::nanf("");
  x[40] = INFINITY;
  BlockQ8_0 q8[2];
  BlockQ4_0 q4[2];
  quantize_row_q8_0(x.data(), q8, 64);
  quantize_row_q4_0(x.data(), q4, 64);
  // NaN clamps to the top level: block 0's scale is NaN, so all its levels are +127; in block 1
  // the scale is inf (id 0), so only the inf element (inf * 0 = NaN) is +127.
  for (const auto q : q8[0].qs) CHECK(q == 127);
  for (int j = 0; j < 32; ++j) CHECK(q8[1].qs[j] == (j == 8 ? 127 : 0));
  // Q4_0 block 0: scale from the finite maximum (1.0), so 1.0 -> level 0 and NaN -> 15.
  for (int j = 0; j < 16; ++j) CHECK((q4[0].qs[j] & 15) == (j == 3 ? 15 : 0));
  // Finite blocks are untouched by the guard: the first block's finite values still decode to 1.
  std::vector<float> finite(32, 1.0f);
  quantize_row_q8_0(finite.data(), q8, 32);
  CHECK(q8[0].qs[0] == 127);
}

TEST_CASE("quant: a block whose largest value is subnormal quantizes to defined levels (fuzz finding, issue 45)", "[quant]") {
  // Its scale's inverse overflows to inf, so x * id is inf: converting that to a level was
  // undefined (UBSan: "inf is outside the range of representable values of type 'int'").
  for (const auto& k : format_kernels()) {
    // Whole blocks of at least 32 values: a format of one-value blocks (F32, F16) still gets all three.
    const std::int64_t block = info(k.weight).block_elems;
    const std::int64_t n = block * ((32 + block - 1) / block);
    std::vector<float> x(std::size_t(n), 0.0f);
    x[0] = 1e-39f, x[1] = -2e-39f, x[2] = 5e-40f;
    std::vector<std::byte> bytes(tensor_bytes(k.weight, std::size_t(n)));
    std::vector<float> back(static_cast<std::size_t>(n));
    CAPTURE(info(k.weight).name);
    k.quantize(x.data(), bytes.data(), n);
    k.dequantize(bytes.data(), back.data(), n);
    for (const float v : back) CHECK((std::isfinite(v) && std::fabs(v) <= 4e-39f));
  }
}

TEST_CASE("quant::tq3_t / tq2_t: error at most half a step plus fp16 rounding of the scales", "[quant]") {
  const auto x = normal(64 * 64, 9);
  for (const auto& [type, levels] : {std::pair{TensorType::tq3_t, 7}, std::pair{TensorType::tq2_t, 3}}) {
    CAPTURE(info(type).name);
    const Encoded e = encode(type, x);
    for (std::size_t b = 0; b < x.size() / 64; ++b) {
      float lo = x[64 * b], hi = x[64 * b];
      for (std::size_t j = 0; j < 64; ++j) lo = std::min(lo, x[64 * b + j]), hi = std::max(hi, x[64 * b + j]);
      const float step = (hi - lo) / float(levels);
      for (std::size_t j = 0; j < 64; ++j) {
        const std::size_t i = 64 * b + j;
        CHECK(std::fabs(x[i] - e.decoded[i]) <= step * (0.5f + float(levels) / 1024.0f) + (std::fabs(lo) + std::fabs(hi)) / 1024.0f);
      }
    }
  }
}

TEST_CASE("quant::fp16: round to nearest even, as ggml", "[quant]") {
  CHECK(fp32_to_fp16(1.0f) == 0x3C00);
  CHECK(fp32_to_fp16(65504.0f) == 0x7BFF);
  CHECK(fp32_to_fp16(1e6f) == 0x7C00);                  // overflow -> inf
  CHECK(fp32_to_fp16(std::ldexp(1.0f, -24)) == 0x0001);  // smallest subnormal
  CHECK(fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);      // tie -> even
  CHECK(fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);  // tie -> even
  for (std::uint32_t h = 0; h < 0x7C00; ++h) REQUIRE(fp32_to_fp16(fp16_to_fp32(std::uint16_t(h))) == h);
  CHECK(fp32_to_bf16(1.0f) == 0x3F80);
  CHECK(bf16_to_fp32(0x3F80) == 1.0f);
}

TEST_CASE("quant::detect_isa: force_scalar and TRILEMMA_FORCE_SCALAR pick the _ref column", "[quant]") {
  CHECK(detect_isa(true) == Isa::scalar);
  ::setenv("TRILEMMA_FORCE_SCALAR", "1", 1);
  CHECK(detect_isa() == Isa::scalar);
  ::unsetenv("TRILEMMA_FORCE_SCALAR");
  const FormatKernels* q8 = find_kernels(TensorType::q8_0);
  CHECK(select_dot(*q8, Isa::scalar) == q8->dot_ref);
  CHECK(find_kernels(TensorType::iq2_xxs) == nullptr);  // a format the engine has no kernels for
}

TEST_CASE("quant::detect_isa: the column follows what the CPU reports, and TRILEMMA_ISA only lowers it", "[quant]") {
  const auto& cpu = cpu_features();
  const Isa best = detect_isa();
#if defined(__aarch64__)
  // Under qemu -cpu cortex-a53 the kernel reports no asimddp: the NEON column; -cpu max has it.
  CHECK(best == (cpu.dotprod ? Isa::dotprod : Isa::neon));
  ::setenv("TRILEMMA_ISA", "neon", 1);
  CHECK(detect_isa() == Isa::neon);
  ::unsetenv("TRILEMMA_ISA");
  const FormatKernels* q4 = find_kernels(TensorType::q4_0);
  CHECK(select_dot(*q4, Isa::neon) == q4->dot_neon);
  CHECK(select_dot(*q4, Isa::dotprod) == q4->dot_dotprod);
  // A format without a dotprod column keeps its NEON dot under dotprod.
  const FormatKernels* f16 = find_kernels(TensorType::f16);
  CHECK(dot_isa(*f16, Isa::dotprod) == Isa::neon);
#elif defined(__x86_64__)
  if (cpu.avx512f && cpu.avx512bw && cpu.avx512vl && cpu.avx512vnni && cpu.avx2 && cpu.fma && cpu.f16c)
    CHECK(best == Isa::avx512vnni);
  else if (cpu.avx2 && cpu.fma && cpu.f16c)
    CHECK(best == Isa::avx2);
  else
    CHECK(best == Isa::scalar);
  ::setenv("TRILEMMA_ISA", "dotprod", 1);  // never raises the choice above the CPU's
  CHECK(detect_isa() == best);
  ::unsetenv("TRILEMMA_ISA");
#endif
  WARN("kernel column on this CPU: " << isa_name(best));
}

TEST_CASE("quant::format_kernels: every x4 tile matches the _ref dots for 1..8 tokens and 1..9 rows, and a token's result does not depend on the token count", "[quant]") {
  for (const auto& row : format_kernels()) {
    const TileFn tile = select_tile(row, detect_isa());
    if (tile == nullptr) continue;
    REQUIRE(row.pack_x4 != nullptr);
    for (int groups : {1, 2, 3, 16}) {  // x4 rows are multiples of 128 weights
      const std::int64_t n = std::int64_t(groups) * k_x4_elems;
      CAPTURE(info(row.weight).name, n);
      // 9 weight rows packed as a matrix: 64-byte aligned code rows, then the scales.
      constexpr int rows = 9;
      std::vector<Encoded> w;
      for (int r = 0; r < rows; ++r) w.push_back(encode(row.weight, normal(std::size_t(n), 99 + std::uint32_t(r))));
      const std::size_t code_bytes = x4_code_bytes(w[0].bytes.size(), n / 32);
      struct alignas(64) Line { std::uint8_t b[64]; };
      std::vector<Line> lines(rows * code_bytes / 64);
      auto* codes = reinterpret_cast<std::uint8_t*>(lines.data());  // all rows, not one Line's 64 bytes
      std::vector<std::uint16_t> scales(std::size_t(rows * n / 32));
      for (int r = 0; r < rows; ++r)
        row.pack_x4(w[std::size_t(r)].bytes.data(), codes + std::size_t(r) * code_bytes, &scales[std::size_t(r * n / 32)], n);
      Q8Panel panel;
      std::vector<std::byte> act_rows;
      const auto acts = panel_tokens(n, 100, panel, act_rows);
      check_panel_kernel(row, w, acts, rows, n, 8, [&](int t0, int nt, float* out) {
        tile(codes, code_bytes, scales.data(), std::size_t(n / 32), rows, panel, t0, nt, out, rows);
      });
    }
  }
}

// `strips` strips of 16 random rows of n weights of `row`'s format in the x16 layout (seeds
// seed, seed + 1, ... per row), with the rows as encoded.
namespace {
struct X16Strips {
  struct alignas(64) Line { std::uint8_t b[64]; };
  std::vector<Encoded> w;
  std::vector<Line> code_lines, scale_lines;
  const std::uint8_t* codes() const { return reinterpret_cast<const std::uint8_t*>(code_lines.data()); }
  const std::uint16_t* scales() const { return reinterpret_cast<const std::uint16_t*>(scale_lines.data()); }
};
}  // namespace
X16Strips make_x16_strips(const FormatKernels& row, std::int64_t n, int strips, std::uint32_t seed) {
  const int rows = strips * k_x16_rows;
  const std::int64_t blocks = n / 32;
  X16Strips out;
  std::vector<std::byte> ggml;
  for (int r = 0; r < rows; ++r) {
    out.w.push_back(encode(row.weight, normal(std::size_t(n), seed + std::uint32_t(r))));
    ggml.insert(ggml.end(), out.w.back().bytes.begin(), out.w.back().bytes.end());
  }
  const std::size_t row_bytes = out.w[0].bytes.size(), strip_bytes = x16_strip_code_bytes(row_bytes, blocks);
  out.code_lines.resize((std::size_t(strips) * strip_bytes + 63) / 64);  // Q6_K strips are 3104 bytes per super-block
  out.scale_lines.resize((std::size_t(rows * blocks) * 2 + 63) / 64);
  auto* codes = reinterpret_cast<std::uint8_t*>(out.code_lines.data());
  auto* scales = reinterpret_cast<std::uint16_t*>(out.scale_lines.data());
  for (int s = 0; s < strips; ++s)
    row.pack_x16(ggml.data() + std::size_t(s * k_x16_rows) * row_bytes, row_bytes, codes + std::size_t(s) * strip_bytes,
                 scales + std::size_t(s * k_x16_rows) * std::size_t(blocks), n);
  return out;
}

TEST_CASE("quant::format_kernels: every x16 strip (VNNI and AMX) matches the _ref dots for 1..19 tokens and 1, 9 or 17 strips, and a token's result does not depend on the token count", "[quant]") {
  // The AMX strips fall back to the VNNI ones below 4 tokens, so check_panel_kernel's "same bits
  // as the token alone" also checks AMX against VNNI bit for bit.
  if (detect_isa() != Isa::avx512vnni) {
    WARN("skipped: no x16 strip kernel on this CPU (" << isa_name(detect_isa()) << "): nothing to compare");
    return;
  }
  if (!amx_tiles()) WARN("AMX strips not checked: this CPU, its OS or TRILEMMA_AMX=0 does not allow AMX-INT8 tiles");
  int checked = 0;
  for (const auto& row : format_kernels()) {
    std::vector<std::pair<const char*, StripFn>> columns;
    if (row.strip_x16_avx512 != nullptr) columns.emplace_back("avx512vnni", row.strip_x16_avx512);
    if (row.strip_x16_amx != nullptr && amx_tiles()) columns.emplace_back("amx", row.strip_x16_amx);
    if (columns.empty()) continue;
    REQUIRE(row.pack_x16 != nullptr);
    CHECK(select_strip(row, Isa::avx512vnni) == columns.back().second);
    for (int groups : {1, 3, 16}) {  // rows of multiples of 128 weights (of super-blocks for Q4_K)
      const std::int64_t n = std::int64_t(groups) * std::max<std::int64_t>(k_x4_elems, info(row.weight).block_elems), blocks = n / 32;
      // 9 strips of 2048-weight Q8_0 rows (32 KiB each) span two of the VNNI kernel's L2 blocks;
      // odd counts leave the AMX kernel a lone strip after its pairs.
      for (int strips : {1, 9, 17}) {
        if (strips == 17 && groups != 16) continue;
        const int rows = strips * k_x16_rows;
        const X16Strips x16 = make_x16_strips(row, n, strips, 199);
        Q8Panel panel;
        std::vector<std::byte> act_rows;
        const auto acts = panel_tokens(n, 300, panel, act_rows, 20, row.activation);  // VNNI slabs of 8, 8 and 3; AMX 16 and a padded 3
        for (const auto& named : columns) {  // not a structured binding: clang 14 cannot capture one in the lambda
          const char* column = named.first;
          const StripFn strip = named.second;
          CAPTURE(info(row.weight).name, column, n, strips);
          check_panel_kernel(row, x16.w, acts, rows, n, 19, [&](int t0, int nt, float* out) {
            strip(x16.codes(), x16.scales(), blocks, strips, panel, t0, nt, out, std::size_t(rows));
          });
        }
      }
    }
    checked += int(columns.size());
  }
  CHECK(checked == (amx_tiles() ? 7 : 4));  // q8_0, q4_0 and q4_k, each on VNNI (and AMX); q6_k on VNNI
}

TEST_CASE("quant::format_kernels: the Q4_K and Q6_K strips give the _ref dot's bits", "[quant]") {
  if (detect_isa() != Isa::avx512vnni) {
    WARN("skipped: no x16 strip kernel on this CPU (" << isa_name(detect_isa()) << "): nothing to compare");
    return;
  }
  for (const TensorType type : {TensorType::q4_k, TensorType::q6_k})
  for (const std::int64_t n : {256, 1280}) {
    const FormatKernels& row = *find_kernels(type);
    REQUIRE(row.strip_x16_avx512 != nullptr);
    const int strips = 2, rows = strips * k_x16_rows, tokens = 11;
    const X16Strips x16 = make_x16_strips(row, n, strips, 808);
    Q8Panel panel;
    std::vector<std::byte> act_rows;
    const auto acts = panel_tokens(n, 900, panel, act_rows, tokens, TensorType::q8_k);
    std::vector<float> out(std::size_t(rows * tokens));
    row.strip_x16_avx512(x16.codes(), x16.scales(), n / 32, strips, panel, 0, tokens, out.data(), std::size_t(rows));
    for (int r = 0; r < rows; ++r)
      for (int t = 0; t < tokens; ++t) {
        CAPTURE(info(type).name, n, r, t);
        const float ref = row.dot_ref(x16.w[std::size_t(r)].bytes.data(), acts[std::size_t(t)].bytes.data(), n);
        CHECK(std::memcmp(&out[std::size_t(r + t * rows)], &ref, sizeof(float)) == 0);
      }
  }
}

TEST_CASE("quant::format_kernels: the AMX strips give the VNNI strips' bits over several 64-token passes and a short last slab", "[quant]") {
  if (detect_isa() != Isa::avx512vnni || !amx_tiles()) {
    WARN("skipped: this CPU, its OS or TRILEMMA_AMX=0 does not allow AMX-INT8 tiles, so the AMX strips cannot run");
    return;
  }
  int checked = 0;
  for (const auto& row : format_kernels()) {
    if (row.strip_x16_amx == nullptr) continue;
    CAPTURE(info(row.weight).name);
    const std::int64_t n = 3 * std::max<std::int64_t>(k_x4_elems, info(row.weight).block_elems), blocks = n / 32;
    const int strips = 3, rows = strips * k_x16_rows;  // a pair and a lone strip
    const X16Strips x16 = make_x16_strips(row, n, strips, 500);
    Q8Panel panel;
    std::vector<std::byte> act_rows;
    panel_tokens(n, 600, panel, act_rows, 150, row.activation);
    for (const int nt : {16, 64, 65, 149}) {  // one slab; one pass; a pass and 1 token; two passes and a 21-token tail
      CAPTURE(nt);
      std::vector<float> vnni(std::size_t(rows * nt), -1.0f), amx(vnni.size(), -2.0f);
      row.strip_x16_avx512(x16.codes(), x16.scales(), blocks, strips, panel, 1, nt, vnni.data(), std::size_t(rows));
      row.strip_x16_amx(x16.codes(), x16.scales(), blocks, strips, panel, 1, nt, amx.data(), std::size_t(rows));
      CHECK(std::memcmp(vnni.data(), amx.data(), vnni.size() * sizeof(float)) == 0);
    }
    ++checked;
  }
  CHECK(checked == 3);  // q8_0, q4_0, q4_k
}

TEST_CASE("quant::format_kernels: every rows x tokens kernel matches the _ref dots, and a (row, token) result does not depend on the blocking", "[quant]") {
  bool any = false;
  for (const auto& row : format_kernels()) {
    const RowsFn rows_fn = select_rows(row, detect_isa());
    if (rows_fn == nullptr) continue;
    any = true;
    REQUIRE(row.activation == TensorType::f32);
    // Lengths with every tail: under one chunk, one chunk, odd chunk counts, masked ends.
    for (std::int64_t n : {std::int64_t(7), std::int64_t(16), std::int64_t(33), std::int64_t(48), std::int64_t(100), std::int64_t(2048)}) {
      CAPTURE(info(row.weight).name, n);
      constexpr int rows = 9, tokens = 8;
      std::vector<Encoded> w;
      std::vector<std::byte> matrix;
      for (int r = 0; r < rows; ++r) {
        w.push_back(encode(row.weight, normal(std::size_t(n), 7 + std::uint32_t(r))));
        matrix.insert(matrix.end(), w.back().bytes.begin(), w.back().bytes.end());
      }
      const std::size_t row_bytes = w[0].bytes.size();
      std::vector<float> x;
      for (int t = 0; t < tokens; ++t) {
        const auto a = normal(std::size_t(n), 70 + std::uint32_t(t));
        x.insert(x.end(), a.begin(), a.end());
      }
      // Decode's call: one row, one token at a time.
      std::vector<float> single(std::size_t(rows * tokens));
      for (int r = 0; r < rows; ++r)
        for (int t = 0; t < tokens; ++t)
          rows_fn(matrix.data() + std::size_t(r) * row_bytes, row_bytes, 1, &x[std::size_t(t) * std::size_t(n)], std::size_t(n), 1, n,
                  &single[std::size_t(r + t * rows)], rows);
      for (int nt = 1; nt <= tokens; ++nt) {
        CAPTURE(nt);
        std::vector<float> out(std::size_t(rows * tokens), -1.0f);
        rows_fn(matrix.data(), row_bytes, rows, x.data(), std::size_t(n), nt, n, out.data(), rows);
        for (int r = 0; r < rows; ++r)
          for (int t = 0; t < nt; ++t) {
            double magnitude = 0;
            for (std::int64_t i = 0; i < n; ++i) magnitude += std::fabs(double(w[std::size_t(r)].decoded[std::size_t(i)]) * x[std::size_t(t * n + i)]);
            const float ref = row.dot_ref(w[std::size_t(r)].bytes.data(), &x[std::size_t(t) * std::size_t(n)], n);
            CHECK(std::fabs(out[std::size_t(r + t * rows)] - ref) <= row.dot_tolerance * magnitude + 1e-6);
            CHECK(std::memcmp(&out[std::size_t(r + t * rows)], &single[std::size_t(r + t * rows)], sizeof(float)) == 0);
          }
        for (std::size_t i = std::size_t(rows * nt); i < out.size(); ++i) CHECK(out[i] == -1.0f);  // nothing beyond nt tokens
      }
    }
  }
  if (!any) WARN("this CPU has no rows x tokens kernel (AVX-512): nothing to compare");
}

TEST_CASE("quant::q8_0: codes are roundf(x / d), ties away from zero", "[quant]") {
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = float(j - 16) * 0.25f;  // amax 4: d = 4 / 127
  x[31] = 4.0f;
  BlockQ8_0 b;
  quantize_row_q8_0(x, &b, 32);
  const float id = 1.0f / (4.0f / 127.0f);
  for (int j = 0; j < 32; ++j) CHECK(b.qs[j] == std::int8_t(std::roundf(x[j] * id)));
  CHECK(b.qs[0] == -127);
  // Exact halves round away from zero, as roundf.
  float halves[32] = {};
  halves[0] = 127.0f;
  halves[1] = 0.5f;
  halves[2] = -0.5f;
  halves[3] = 2.5f;
  quantize_row_q8_0(halves, &b, 32);
  CHECK(b.qs[1] == 1);
  CHECK(b.qs[2] == -1);
  CHECK(b.qs[3] == 3);
}

TEST_CASE("quant::q4_1 / q5_0 / q5_1 / iq4_nl: hand-built blocks decode as ggml-common.h lays them out", "[quant]") {
  // Element j < 16 is the low nibble of qs[j], element j >= 16 the high nibble of qs[j - 16];
  // the fifth bit of element j is bit j of qh (little endian).
  const std::uint16_t d = fp32_to_fp16(0.5f), m = fp32_to_fp16(-2.0f);
  std::uint8_t qs[16];
  for (int j = 0; j < 16; ++j) qs[j] = std::uint8_t(j | ((15 - j) << 4));
  const std::uint8_t qh[4] = {0x01, 0x00, 0x00, 0x80};  // element 0 and element 31
  auto nib = [](int j) { return j < 16 ? j : 15 - (j - 16); };
  auto fifth = [](int j) { return j == 0 || j == 31 ? 16 : 0; };
  float out[32];

  BlockQ4_1 b41{d, m, {}};
  std::memcpy(b41.qs, qs, 16);
  dequantize_row_q4_1(&b41, out, 32);
  for (int j = 0; j < 32; ++j) CHECK(out[j] == 0.5f * float(nib(j)) - 2.0f);

  BlockQ5_0 b50{d, {}, {}};
  std::memcpy(b50.qh, qh, 4), std::memcpy(b50.qs, qs, 16);
  dequantize_row_q5_0(&b50, out, 32);
  for (int j = 0; j < 32; ++j) CHECK(out[j] == 0.5f * float(nib(j) + fifth(j) - 16));

  BlockQ5_1 b51{d, m, {}, {}};
  std::memcpy(b51.qh, qh, 4), std::memcpy(b51.qs, qs, 16);
  dequantize_row_q5_1(&b51, out, 32);
  for (int j = 0; j < 32; ++j) CHECK(out[j] == 0.5f * float(nib(j) + fifth(j)) - 2.0f);

  BlockIq4Nl bnl{d, {}};
  std::memcpy(bnl.qs, qs, 16);
  dequantize_row_iq4_nl(&bnl, out, 32);
  CHECK(out[0] == 0.5f * -127);   // level 0
  CHECK(out[15] == 0.5f * 113);   // level 15
  CHECK(out[16] == 0.5f * 113);   // high nibble of qs[0]: 15
  CHECK(out[8] == 0.5f * 1);      // level 8
}

namespace {

// ggml's dequantize_row_q2_K / q3_K walk, spelled independently of quant_ref_k_low.cpp: two
// halves of 128, each four shifts of the same 32 qs bytes, 16 codes per scale; Q3_K's high
// bit mask moves one bit per shift across both halves and its scales come from the 32-bit
// kmask shuffle of the 12 packed bytes.
std::vector<float> ggml_walk_q2_k(const BlockQ2K& b) {
  std::vector<float> y;
  const float d = fp16_to_fp32(b.d), dmin = fp16_to_fp32(b.dmin);
  int is = 0;
  for (int n = 0; n < 256; n += 128)
    for (int shift = 0; shift < 8; shift += 2)
      for (int half = 0; half < 2; ++half, ++is)
        for (int l = 0; l < 16; ++l)
          y.push_back(d * float(b.scales[is] & 0xF) * float((b.qs[n / 4 + 16 * half + l] >> shift) & 3) -
                      dmin * float(b.scales[is] >> 4));
  return y;
}

std::vector<float> ggml_walk_q3_k(const BlockQ3K& b) {
  std::uint32_t aux[4];
  std::memcpy(aux, b.scales, 12);
  const std::uint32_t tmp = aux[2], k1 = 0x03030303u, k2 = 0x0f0f0f0fu;
  aux[2] = ((aux[0] >> 4) & k2) | (((tmp >> 4) & k1) << 4);
  aux[3] = ((aux[1] >> 4) & k2) | (((tmp >> 6) & k1) << 4);
  aux[0] = (aux[0] & k2) | ((tmp & k1) << 4);
  aux[1] = (aux[1] & k2) | (((tmp >> 2) & k1) << 4);
  std::int8_t scales[16];
  std::memcpy(scales, aux, 16);
  std::vector<float> y;
  const float d = fp16_to_fp32(b.d);
  int is = 0, m = 1;
  for (int n = 0; n < 256; n += 128)
    for (int shift = 0; shift < 8; shift += 2, m <<= 1)
      for (int half = 0; half < 2; ++half, ++is)
        for (int l = 0; l < 16; ++l) {
          const int low = (b.qs[n / 4 + 16 * half + l] >> shift) & 3;
          y.push_back(d * float(scales[is] - 32) * float(low - ((b.hmask[16 * half + l] & m) ? 0 : 4)));
        }
  return y;
}

}  // namespace

TEST_CASE("quant::q2_k / q3_k: random blocks decode as ggml's dequantize_row walks them", "[quant]") {
  std::mt19937 rng(2026);
  for (int trial = 0; trial < 50; ++trial) {
    CAPTURE(trial);
    BlockQ2K b2{};
    BlockQ3K b3{};
    auto fill = [&](void* p, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) static_cast<std::uint8_t*>(p)[i] = std::uint8_t(rng());
    };
    fill(b2.scales, sizeof b2.scales), fill(b2.qs, sizeof b2.qs);
    fill(b3.hmask, sizeof b3.hmask), fill(b3.qs, sizeof b3.qs), fill(b3.scales, sizeof b3.scales);
    b2.d = fp32_to_fp16(0.01f * float(trial + 1)), b2.dmin = fp32_to_fp16(0.003f * float(trial + 1));
    b3.d = fp32_to_fp16(-0.02f * float(trial + 1));
    // Equal up to a fused multiply-add (aarch64 compilers contract d * sc * q - dmin * m).
    auto same = [](const float* ours, const std::vector<float>& ggml) {
      for (int e = 0; e < 256; ++e)
        if (std::fabs(ours[e] - ggml[std::size_t(e)]) > 1e-6f * (1.0f + std::fabs(ggml[std::size_t(e)]))) return false;
      return true;
    };
    float out[256];
    dequantize_row_q2_k(&b2, out, 256);
    CHECK(same(out, ggml_walk_q2_k(b2)));
    dequantize_row_q3_k(&b3, out, 256);
    CHECK(same(out, ggml_walk_q3_k(b3)));
  }
}
