// Matrix products with weights in any table format: y[t][r] = W_r . x_t for the tokens t of
// a batch. Activations are quantized once per distinct activation format (Q8_0 for integer
// weights, f32 for float weights) and shared by every matrix that reads the same input.
// Rows are split across the pool; each task runs its rows against all tokens, so a weight row
// is read from memory once per batch (prefill reuses it across the prompt's tokens).
#pragma once
#include <cstddef>
#include <span>
#include <vector>

#include "engine/model/model.hpp"
#include "engine/quant/bf16_panel.hpp"
#include "engine/quant/kernel_table.hpp"
#include "engine/quant/q8_panel.hpp"
#include "engine/runtime/thread_pool.hpp"

namespace trilemma::engine {

struct MatmulJob {
  const Matrix* w;
  float* y;  // [n][w->rows]
};

// Which floats a call must give. `decode`: a token's results are the one-token call's bit for
// bit, whatever the batch (decode, speculative verification, anything compared with decode).
// `any`: faster kernels whose floats differ slightly may run (a prompt's prefill): today the
// AMX-BF16 f16 rows (simd/amx/rows_f16_amx.cpp), from k_min_tile_tokens tokens on.
enum class Bits { decode, any };

class Matmul {
 public:
  // Below this many tokens the f32 FMA rows run even under Bits::any (decode's own path).
  static constexpr int k_min_tile_tokens = 16;
  Matmul(ThreadPool& pool, Isa isa) : m_pool(pool), m_isa(isa) {}
  // x: [n][cols]; every job's matrix has `cols` columns. REQUIRES: kernels exist for each type.
  void run(const float* x, int n, std::int64_t cols, std::span<const MatmulJob> jobs, Bits bits = Bits::decode);
  Isa isa() const { return m_isa; }
  std::uint64_t scratch_bytes() const;

 private:
  ThreadPool& m_pool;
  Isa m_isa;
  // Quantized activations, one buffer per activation format a call needs: f32 (f16/f32 rows),
  // q8_0 (32-element formats), q8_k (k-quants); a file may mix all three in one call.
  static constexpr int k_max_activation_formats = 3;
  std::vector<std::byte> m_act[k_max_activation_formats];
  // Per activation format: Q8_0 activations regrouped for the tiles and strips; for Q8_K (the
  // k-quant strips) only its `rows`, the quantized activations themselves.
  Q8Panel m_panel[k_max_activation_formats];
  // The f32 input split into bf16 halves for the AMX-BF16 float rows (quant/bf16_panel.hpp),
  // packed only when a job uses them.
  Bf16Panel m_bf16;
};

}  // namespace trilemma::engine
