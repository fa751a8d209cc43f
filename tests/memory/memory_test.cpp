#include <catch2/catch.hpp>

#include <cmath>

#include "memory/memory_model.hpp"
#include "memory/tensor_layout.hpp"

using namespace trilemma;

namespace {
constexpr double k_gib = 1073741824.0;

ModelShape llama2_7b() {
  ModelShape s;
  s.layers = 32; s.hidden = 4096; s.heads = 32; s.kv_heads = 32; s.head_dim = 128;
  s.ffn = 11008; s.vocab = 32000; s.context = 4096;
  return s;
}
ModelShape llama3_8b() {
  ModelShape s = llama2_7b();
  s.kv_heads = 8; s.ffn = 14336; s.vocab = 128256; s.context = 8192;
  return s;
}
DeploymentConfig kv(TensorType type, std::uint32_t context) {
  DeploymentConfig c;
  c.kv_type = type;
  c.context = context;
  return c;
}
}  // namespace

TEST_CASE("memory::kv_bytes: Llama-2-7B FP16 KV at 8K context is 4 GiB", "[memory]") {
  // 2 x 32 layers x 32 heads x 128 x 8192 positions x 2 bytes
  CHECK(memory::kv_bytes(llama2_7b(), kv(TensorType::f16, 8192), 8192) == 4.0 * k_gib);
}

TEST_CASE("memory::kv_bytes: Llama-3-8B with 8 KV heads at 8K is 1 GiB", "[memory]") {
  CHECK(memory::kv_bytes(llama3_8b(), kv(TensorType::f16, 8192), 8192) == 1.0 * k_gib);
}

TEST_CASE("memory::kv_bytes: q8_0 and q4_0 KV carry their block scales", "[memory]") {
  const auto f16 = memory::kv_bytes(llama3_8b(), kv(TensorType::f16, 8192), 8192);
  CHECK(memory::kv_bytes(llama3_8b(), kv(TensorType::q8_0, 8192), 8192) == Approx(f16 * 34.0 / 64.0));
  CHECK(memory::kv_bytes(llama3_8b(), kv(TensorType::q4_0, 8192), 8192) == Approx(f16 * 18.0 / 64.0));
}

TEST_CASE("memory::kv_bytes: sliding window holds window + sinks, native windows per layer", "[memory]") {
  auto c = kv(TensorType::f16, 8192);
  c.kv_strategy = KvStrategy::sliding;
  c.kv_params.sliding = {1020, 4};
  CHECK(memory::kv_bytes(llama3_8b(), c, 8192) == 1.0 * k_gib * 1024 / 8192);
  // Gemma-2 style: half the layers hold at most 4096 positions.
  auto s = llama3_8b();
  s.sliding_window = 4096;
  s.sliding_window_layers = 16;
  CHECK(memory::kv_bytes(s, kv(TensorType::f16, 8192), 8192) == Approx(0.75 * k_gib));
}

TEST_CASE("memory::kv_bytes: paged KV rounds up to whole pages", "[memory]") {
  auto c = kv(TensorType::f16, 1000);
  c.kv_strategy = KvStrategy::paged;
  const double per_position = memory::kv_bytes(llama3_8b(), kv(TensorType::f16, 1), 1);
  CHECK(memory::kv_bytes(llama3_8b(), c, 1000) == Approx(1008 * per_position));  // 63 pages of 16
  CHECK(memory::kv_read_bytes(llama3_8b(), c, 1000) == Approx(1000 * per_position));
}

TEST_CASE("memory::weight_bytes: F16 Llama-2-7B is 2 bytes per parameter", "[memory]") {
  const auto w = memory::weight_bytes(llama2_7b(), WeightFormat::f16);
  CHECK(w.total == Approx(6738415616.0 * 2).epsilon(1e-4));  // norms stay f32: a 0.004% difference
  CHECK(w.bits_per_weight == Approx(16.0).epsilon(1e-4));
}

TEST_CASE("memory::weight_bytes: recipes land near llama.cpp's published bits per weight", "[memory]") {
  // llama.cpp tools/perplexity README, LLaMA-3-8B: Q8_0 8.50, Q6_K 6.57, Q5_K_M 5.70, Q4_K_M 4.89,
  // Q4_0 4.64 (Q6_K classifier). Our recipe simplifies llama_tensor_get_type: within 4%.
  const auto s = llama3_8b();
  CHECK(memory::weight_bytes(s, WeightFormat::q8_0).bits_per_weight == Approx(8.50).epsilon(0.01));
  CHECK(memory::weight_bytes(s, WeightFormat::q6_k).bits_per_weight == Approx(6.57).epsilon(0.01));
  CHECK(memory::weight_bytes(s, WeightFormat::q5_k_m).bits_per_weight == Approx(5.70).epsilon(0.04));
  CHECK(memory::weight_bytes(s, WeightFormat::q4_k_m).bits_per_weight == Approx(4.89).epsilon(0.04));
  CHECK(memory::weight_bytes(s, WeightFormat::q4_0).bits_per_weight == Approx(4.64).epsilon(0.04));
}

TEST_CASE("memory::weight_bytes: Mixtral stores every expert but a token reads two", "[memory]") {
  ModelShape s = llama3_8b();
  s.vocab = 32000; s.ffn = 0; s.context = 32768;
  s.moe = {8, 2, 0, 14336};
  const auto w = memory::weight_bytes(s, WeightFormat::f16);
  CHECK(w.total == Approx(46.7e9 * 2).epsilon(0.01));
  CHECK(w.per_token == Approx(12.75e9 * 2).epsilon(0.02));
}

TEST_CASE("memory::plan_tensors: rows that do not fill a block fall back", "[memory]") {
  ModelShape s;  // stories260K: FFN width 172 is no multiple of 32
  s.layers = 5; s.hidden = 64; s.heads = 8; s.kv_heads = 4; s.head_dim = 8; s.ffn = 172; s.vocab = 512;
  s.context = 512; s.tied_embeddings = true;
  int fell_back = 0;
  for (const auto& t : memory::plan_tensors(s, WeightFormat::q4_0))
    if (t.fell_back) {
      ++fell_back;
      CAPTURE(t.name);
      // ffn_down rows of 172 fit no block: F16. The tied embedding takes Q4_0's classifier
      // type, Q6_K, whose 256-blocks 64-wide rows do not fill: llama.cpp's Q8_0 fallback.
      if (t.role == memory::TensorRole::ffn_down) CHECK(t.type == TensorType::f16);
      else CHECK((t.role == memory::TensorRole::embedding && t.type == TensorType::q8_0));
    }
  CHECK(fell_back == 6);
}

TEST_CASE("memory::loss_weighted_block_bits: the embedding left out, fallbacks counted, low bits dominant", "[memory]") {
  // Llama-3-8B Q8_0: every block matrix is q8_0, 34 bytes per 32 weights, whatever the slope.
  CHECK(memory::loss_weighted_block_bits(llama3_8b(), WeightFormat::q8_0, 0) == Approx(8.5));
  CHECK(memory::loss_weighted_block_bits(llama3_8b(), WeightFormat::q8_0, -1) == Approx(8.5));
  // A 896-wide model (Qwen2.5-0.5B's rows): no row is a multiple of 256, so the k-quant recipe
  // falls back to 32-element types in every block matrix, and the blocks carry more bits than
  // Llama-3-8B's Q4_K_M blocks.
  ModelShape narrow = llama3_8b();
  narrow.hidden = 896, narrow.heads = 14, narrow.kv_heads = 2, narrow.head_dim = 64, narrow.ffn = 4864, narrow.layers = 24;
  const double wide = memory::loss_weighted_block_bits(llama3_8b(), WeightFormat::q4_k_m, 0);
  const double small = memory::loss_weighted_block_bits(narrow, WeightFormat::q4_k_m, 0);
  CHECK(small > wide + 0.5);
  // A negative slope weighs the low-bit matrices more: below the plain average of a mixed recipe.
  const double weighted = memory::loss_weighted_block_bits(llama3_8b(), WeightFormat::q4_k_m, -1.1);
  CHECK(weighted < wide);
  // Hand computed: one layer, 64 wide, FFN 172. At Q4_0 the attention (4 x 4096 weights) and
  // gate/up (2 x 11008) are q4_0 (4.5 bits); ffn_down's 172-long rows fit no 32-block and fall
  // back to f16 (11008 weights at 16 bits).
  ModelShape mixed;
  mixed.layers = 1, mixed.hidden = 64, mixed.heads = 1, mixed.kv_heads = 1, mixed.head_dim = 64, mixed.ffn = 172;
  mixed.vocab = 32, mixed.context = 16;
  const double low = 38400, high = 11008;
  CHECK(memory::loss_weighted_block_bits(mixed, WeightFormat::q4_0, 0) == Approx((low * 4.5 + high * 16) / (low + high)));
  CHECK(memory::loss_weighted_block_bits(mixed, WeightFormat::q4_0, -1) ==
        Approx(-std::log((low * std::exp(-4.5) + high * std::exp(-16.0)) / (low + high))));
}
