#include "memory/tensor_layout.hpp"

#include <cmath>

namespace trilemma::memory {
namespace {

// A row that is not a multiple of the wanted type's block takes llama.cpp's fallback
// (llama-quant.cpp, "using fallback quantization"): k- and i-quants of 256 go to a 32-element
// type of about the same bits, and anything still misfitting to F16. Checked against the files
// llama-quantize (build 10587) writes for stories260K's 64-wide rows
// (tests/memory/llama_quantize_recipes_test.cpp): Q2_K and Q3_K fall back to Q4_0 there (the
// source read in 2025 said IQ4_NL), and an untied token embedding falls back like any matrix.
// The i-quants' IQ4_NL is the source's word, not measured.
TensorType fallback(TensorType wanted) {
  using T = TensorType;
  switch (wanted) {
    case T::q2_k: case T::q3_k: return T::q4_0;
    case T::iq2_xxs: case T::iq2_xs: case T::iq2_s: case T::iq3_xxs: case T::iq3_s:
    case T::iq1_s: case T::iq1_m: case T::iq4_xs: return T::iq4_nl;
    case T::q4_k: return T::q5_0;
    case T::q5_k: return T::q5_1;
    case T::q6_k: return T::q8_0;
    default: return T::q8_0;
  }
}

TensorType fit(TensorType wanted, std::uint64_t row, bool& fell_back) {
  if (row % info(wanted).block_elems == 0) return wanted;
  fell_back = true;
  const TensorType next = fallback(wanted);
  return row % info(next).block_elems == 0 ? next : TensorType::f16;
}

void add(std::vector<PlannedTensor>& out, std::string name, TensorRole role, std::uint32_t layer, std::uint64_t row,
         std::uint64_t rows, std::uint64_t count, TensorType wanted) {
  PlannedTensor t{std::move(name), role, layer, row, rows, count, wanted, false};
  if (role != TensorRole::norm && role != TensorRole::bias) t.type = fit(wanted, row, t.fell_back);
  else t.type = TensorType::f32;
  out.push_back(std::move(t));
}

}  // namespace

std::vector<PlannedTensor> plan_tensors(const ModelShape& s, WeightFormat format) {
  const auto& r = info(format);
  std::vector<PlannedTensor> out;
  out.reserve(s.layers * 12 + 3);
  // A tied classifier is the token embedding: llama.cpp quantizes it with the output's type
  // (llama-quant.cpp: "quantize the token embeddings with the quantization of the output tensor").
  add(out, "token_embd.weight", TensorRole::embedding, 0, s.hidden, s.vocab, 1, s.tied_embeddings ? r.output : r.embedding);
  for (std::uint32_t i = 0; i < s.layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    const bool low_gqa = s.kv_heads > 0 && s.heads / s.kv_heads < 4;
    const TensorType v = selects_layer(r.attn_v_layers, i, s.layers) ? (low_gqa && r.attn_v_low_gqa ? *r.attn_v_low_gqa : r.attn_v)
                                                                    : r.attn_v_rest;
    const TensorType down = selects_layer(r.ffn_down_layers, i, s.layers) ? r.ffn_down : r.ffn_down_rest;
    add(out, p + "attn_norm.weight", TensorRole::norm, i, s.hidden, 1, 1, TensorType::f32);
    add(out, p + "attn_q.weight", TensorRole::attn_q, i, s.hidden, s.q_dim(), 1, r.bulk);
    add(out, p + "attn_k.weight", TensorRole::attn_k, i, s.hidden, s.kv_dim(), 1, r.bulk);
    add(out, p + "attn_v.weight", TensorRole::attn_v, i, s.hidden, s.kv_dim(), 1, v);
    add(out, p + "attn_output.weight", TensorRole::attn_output, i, s.q_dim(), s.hidden, 1, r.attn_output);
    if (s.attention_bias) add(out, p + "attn_qkv.bias", TensorRole::bias, i, s.q_dim() + 2ull * s.kv_dim(), 1, 1, TensorType::f32);
    add(out, p + "ffn_norm.weight", TensorRole::norm, i, s.hidden, 1, 1, TensorType::f32);
    if (s.is_moe()) {
      const std::uint64_t n = s.moe.experts + s.moe.shared_experts;
      add(out, p + "ffn_gate_inp.weight", TensorRole::router, i, s.hidden, s.moe.experts, 1, TensorType::f32);
      if (s.ffn_gated) add(out, p + "ffn_gate_exps.weight", TensorRole::ffn_gate, i, s.hidden, s.moe.expert_ffn, n, r.bulk);
      add(out, p + "ffn_up_exps.weight", TensorRole::ffn_up, i, s.hidden, s.moe.expert_ffn, n, r.bulk);
      add(out, p + "ffn_down_exps.weight", TensorRole::ffn_down, i, s.moe.expert_ffn, s.hidden, n, down);
    }
    if (s.ffn > 0) {
      if (s.ffn_gated) add(out, p + "ffn_gate.weight", TensorRole::ffn_gate, i, s.hidden, s.ffn, 1, r.bulk);
      add(out, p + "ffn_up.weight", TensorRole::ffn_up, i, s.hidden, s.ffn, 1, r.bulk);
      add(out, p + "ffn_down.weight", TensorRole::ffn_down, i, s.ffn, s.hidden, 1, down);
    }
  }
  add(out, "output_norm.weight", TensorRole::norm, 0, s.hidden, 1, 1, TensorType::f32);
  // A tied classifier reuses token_embd; it is stored once.
  if (!s.tied_embeddings) add(out, "output.weight", TensorRole::output, 0, s.hidden, s.vocab, 1, r.output);
  return out;
}

WeightBytes weight_bytes(const ModelShape& s, WeightFormat format) {
  WeightBytes w;
  double params = 0;
  for (const auto& t : plan_tensors(s, format)) {
    const double bytes = static_cast<double>(t.bytes());
    w.total += bytes;
    params += static_cast<double>(t.elems());
    if (t.role == TensorRole::embedding) {
      w.per_token += bytes / s.vocab;  // one row looked up
      if (s.tied_embeddings) w.per_token += bytes;  // and read whole as the classifier
      continue;
    }
    // Routed experts: a token reads experts_per_token of them (plus the shared ones).
    if (t.count > 1 && s.is_moe()) {
      const double used = double(s.moe.experts_per_token + s.moe.shared_experts) / double(t.count);
      w.per_token += bytes * used;
      continue;
    }
    w.per_token += bytes;
  }
  w.bits_per_weight = params > 0 ? 8.0 * w.total / params : 0;
  return w;
}

double loss_weighted_block_bits(const ModelShape& s, WeightFormat format, double slope) {
  double sum = 0, weights = 0, plain = 0;
  for (const auto& t : plan_tensors(s, format)) {
    if (t.role < TensorRole::attn_q || t.role > TensorRole::ffn_down) continue;
    const double elems = static_cast<double>(t.elems()), bits = 8.0 * static_cast<double>(t.bytes()) / elems;
    sum += elems * std::exp(slope * bits), plain += elems * bits, weights += elems;
  }
  if (weights == 0) return 0;
  return slope == 0 ? plain / weights : std::log(sum / weights) / slope;
}

}  // namespace trilemma::memory
