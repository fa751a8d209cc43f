// strip_bench: the x16 strip kernels (Q4_0, Q8_0, Q4_K, Q6_K; VNNI, and AMX where the CPU and OS allow
// it) against the kernels the matrix would run without strips (Q4_0 / Q8_0: the x4 tiles; k-quants:
// the ggml-layout multi-token dots, in Matmul's blocking) on the same weights and tokens,
// alternated run by run in one process, one thread (the prefill's inner loop without the pool).
// Prints the median time of each and their ratio; the noise of a shared host cancels in the
// ratio, not in the times. Shapes: TinyLlama-1.1B's FFN matrices (5632 x 2048 and 2048 x 5632).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/quant/blocks.hpp"
#include "engine/quant/cpu_features.hpp"
#include "engine/quant/kernel_table.hpp"
#include "engine/quant/kernels.hpp"
#include "engine/quant/q8_panel.hpp"
#include "engine/quant/x16_layout.hpp"
#include "engine/quant/x4_layout.hpp"
#include "types/tensor_type.hpp"

using namespace trilemma;
using namespace trilemma::engine;
using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Case {
  std::int64_t rows, cols;
  int tokens;
};

void run(TensorType type, const Case& c, int runs) {
  const FormatKernels& k = *find_kernels(type);
  const std::int64_t blocks = c.cols / 32;
  const std::size_t row_bytes = tensor_bytes(type, std::uint64_t(c.cols));
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> x(std::size_t(c.cols));
  std::vector<std::byte> ggml(row_bytes * std::size_t(c.rows));
  for (std::int64_t r = 0; r < c.rows; ++r) {
    for (auto& v : x) v = normal(rng);
    k.quantize(x.data(), ggml.data() + std::size_t(r) * row_bytes, c.cols);
  }
  // The baseline: x4 tiles where the format has them, else the multi-token dot over rows in
  // ~16 KiB blocks and groups of k_dot_multi_tokens tokens (engine/model/matmul.cpp).
  const bool tiles = k.pack_x4 != nullptr;
  const std::size_t code_bytes = tiles ? x4_code_bytes(row_bytes, blocks) : 0;
  auto* x4_codes = static_cast<std::uint8_t*>(std::aligned_alloc(64, std::max<std::size_t>(64, code_bytes * std::size_t(c.rows))));
  std::vector<std::uint16_t> x4_scales(std::size_t(c.rows * blocks));
  for (std::int64_t r = 0; tiles && r < c.rows; ++r)
    k.pack_x4(ggml.data() + std::size_t(r) * row_bytes, x4_codes + std::size_t(r) * code_bytes, &x4_scales[std::size_t(r * blocks)], c.cols);
  const std::int64_t strips = c.rows / k_x16_rows;
  auto* x16_codes = static_cast<std::uint8_t*>(std::aligned_alloc(64, x16_strip_code_bytes(row_bytes, blocks) * std::size_t(strips)));
  auto* x16_scales = static_cast<std::uint16_t*>(std::aligned_alloc(64, std::size_t(c.rows * blocks) * 2));
  for (std::int64_t s = 0; s < strips; ++s)
    k.pack_x16(ggml.data() + std::size_t(s * k_x16_rows) * row_bytes, row_bytes, x16_codes + std::size_t(s) * x16_strip_code_bytes(row_bytes, blocks),
                        x16_scales + std::size_t(s * k_x16_rows * blocks), c.cols);
  const FormatKernels& ak = *find_kernels(k.activation);
  const std::size_t act_bytes = tensor_bytes(k.activation, std::uint64_t(c.cols));
  std::vector<std::byte> acts(act_bytes * std::size_t(c.tokens));
  for (int t = 0; t < c.tokens; ++t) {
    for (auto& v : x) v = normal(rng);
    ak.quantize(x.data(), acts.data() + std::size_t(t) * act_bytes, c.cols);
  }
  Q8Panel panel;  // Q4_K's strips read only the activation rows
  if (k.activation == TensorType::q8_0) pack_q8_panel(acts.data(), act_bytes, c.tokens, blocks, panel);
  panel.tokens = c.tokens, panel.rows = acts.data(), panel.row_stride = act_bytes;
  const std::int64_t multi_block = std::clamp<std::int64_t>(std::int64_t(16384 / row_bytes), 1, k_x16_rows);
  std::vector<float> y4(std::size_t(c.rows * c.tokens)), y16(y4.size()), yamx(y4.size());
  std::vector<double> t4, t16, tamx;
  const bool amx = k.strip_x16_amx != nullptr && amx_tiles();
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    if (tiles) {
      for (int t = 0; t < c.tokens; t += 8)
        k.tile_x4_avx512(x4_codes, code_bytes, x4_scales.data(), std::size_t(blocks), int(c.rows), panel, t, std::min(8, c.tokens - t),
                         y4.data() + std::size_t(t * c.rows), std::size_t(c.rows));
    } else {
      float out[k_dot_multi_tokens];
      for (std::int64_t r0 = 0; r0 < c.rows; r0 += multi_block)
        for (int t = 0; t < c.tokens; t += k_dot_multi_tokens) {
          const int nt = std::min(k_dot_multi_tokens, c.tokens - t);
          for (std::int64_t r = r0; r < std::min(c.rows, r0 + multi_block); ++r) {
            k.dot_multi_avx512(ggml.data() + std::size_t(r) * row_bytes, acts.data() + std::size_t(t) * act_bytes, act_bytes, nt, c.cols, out);
            for (int j = 0; j < nt; ++j) y4[std::size_t((t + j) * c.rows + r)] = out[j];
          }
        }
    }
    t4.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    t0 = Clock::now();
    k.strip_x16_avx512(x16_codes, x16_scales, blocks, int(strips), panel, 0, c.tokens, y16.data(), std::size_t(c.rows));
    t16.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    if (!amx) continue;
    t0 = Clock::now();
    k.strip_x16_amx(x16_codes, x16_scales, blocks, int(strips), panel, 0, c.tokens, yamx.data(), std::size_t(c.rows));
    tamx.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < y4.size(); ++i) worst = std::max(worst, double(std::fabs(y4[i] - y16[i]))), scale = std::max(scale, double(std::fabs(y4[i])));
  const double macs = double(c.rows) * double(c.cols) * c.tokens;
  std::printf("%s %5lld x %5lld, %3d tokens: %s %8.3f ms (%5.1f GMAC/s)  x16 strip %8.3f ms (%5.1f GMAC/s)  base/x16 %.2fx  max |diff| %.2g of max |y| %.3g\n",
              std::string(info(type).name).c_str(), static_cast<long long>(c.rows), static_cast<long long>(c.cols), c.tokens, tiles ? "x4 tile" : "ggml dot", median(t4) * 1e3, macs / median(t4) / 1e9,
              median(t16) * 1e3, macs / median(t16) / 1e9, median(t4) / median(t16), worst, scale);
  if (amx)
    std::printf("%*s AMX strip %8.3f ms (%5.1f GMAC/s)  VNNI/AMX %.2fx  same bits as VNNI: %s\n", 28, "", median(tamx) * 1e3,
                macs / median(tamx) / 1e9, median(t16) / median(tamx), std::memcmp(y16.data(), yamx.data(), y16.size() * sizeof(float)) == 0 ? "yes" : "NO");
  std::free(x4_codes), std::free(x16_codes), std::free(x16_scales);
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 9;
  if (detect_isa() != Isa::avx512vnni) {
    std::printf("strip_bench: skipped, this CPU has no AVX-512 VNNI (kernels: %s)\n", std::string(isa_name(detect_isa())).c_str());
    return 0;
  }
  std::printf("strip_bench: Q8_0 (Q4_K: Q8_K) activations, 1 thread, median of %d alternated runs; AMX strips: %s\n", runs,
              amx_tiles() ? "measured" : "not measured (no AMX-INT8 permitted on this CPU/OS, or TRILEMMA_AMX=0)");
  for (const TensorType type : {TensorType::q4_0, TensorType::q8_0, TensorType::q4_k, TensorType::q6_k})
    for (const Case& c : {Case{5632, 2048, 64}, Case{2048, 5632, 64}, Case{5632, 2048, 16}, Case{5632, 2048, 8}, Case{5632, 2048, 4}, Case{5632, 2048, 1}, Case{32000, 2048, 1}})
      run(type, c, runs);
}
