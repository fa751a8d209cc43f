#include "engine/engine.hpp"

#include <algorithm>
#include <chrono>
#include <new>

#include "engine/gguf/gguf_writer.hpp"
#include "engine/kv/kv_cache.hpp"
#include "engine/model/prepare.hpp"
#include "engine/model/transformer.hpp"
#include "engine/model_source.hpp"
#include "engine/quant/kernel_table.hpp"
#include "engine/runtime/memory_stats.hpp"
#include "engine/sampling/sampler.hpp"

namespace trilemma::engine {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

Error usage(const std::string& where, const std::string& message) { return make_error(ErrorKind::usage, "", where, message); }

// The kernel columns the matmuls use, by weight bytes: "avx512vnni", "avx512vnni+avx2" (e.g.
// x4 tiles plus f32 fallbacks on avx2), "avx2+scalar" (a format without an avx2 column), ...
std::string kernels_used(const Model& m, Isa isa) {
  std::vector<std::pair<std::uint64_t, Isa>> used;  // bytes per ISA
  const auto note = [&](const Matrix& w) {
    const FormatKernels& k = *find_kernels(w.type);
    const Isa column = w.x4 ? Isa::avx512vnni : dot_isa(k, isa == Isa::avx512vnni ? Isa::avx2 : isa);
    auto it = std::find_if(used.begin(), used.end(), [&](const auto& u) { return u.second == column; });
    if (it == used.end()) used.emplace_back(w.bytes(), column);
    else it->first += w.bytes();
  };
  note(m.classifier);
  for (const auto& l : m.layers)
    for (const Matrix* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w2, &l.w3}) note(*w);
  std::sort(used.begin(), used.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (const auto& u : used) out += (out.empty() ? "" : "+") + std::string(isa_name(u.second));
  return out;
}

Result<GenerateReport> generate_impl(const GenerateOptions& o, const std::function<void(std::string_view)>& on_text) {
  if (o.steps < 0) return usage("steps", "must be >= 0");
  if (!(o.temperature >= 0)) return usage("temperature", "must be >= 0");
  if (!(o.top_p > 0 && o.top_p <= 1)) return usage("top_p", "must be in (0, 1]");
  ThreadPool pool(o.threads);
  const Isa isa = detect_isa(o.force_scalar);
  TRILEMMA_TRY(loaded, load_model({o.model_path, o.tokenizer_path, o.synthetic_shape, o.synthetic_name, o.weights}, pool));
  pack_for_isa(loaded.model, isa, pool);
  const Model& m = loaded.model;
  const Tokenizer& tok = loaded.tokenizer;

  GenerateReport r;
  r.synthetic = m.synthetic;
  r.weights = m.weights_name();
  r.fallbacks = m.fallbacks;
  r.kernels = kernels_used(m, isa);
  r.threads = pool.size();
  r.weight_bytes = m.weight_bytes();
  r.prompt_tokens = tok.encode(o.prompt, true, false);
  const int n_prompt = int(r.prompt_tokens.size());
  if (n_prompt > int(m.shape.context))
    return usage("prompt", std::to_string(n_prompt) + " tokens exceed the model's context of " + std::to_string(m.shape.context));
  const int capacity = std::min<int>(int(m.shape.context), n_prompt + o.steps);
  const auto& s = m.shape;
  Transformer tf(m, pool, isa,
                 std::make_unique<ContiguousKvCache>(int(s.layers), capacity, int(s.heads), int(s.kv_heads), int(s.head_dim),
                                                     select_dot(*find_kernels(TensorType::f32), isa)));
  Sampler sampler(o.temperature, o.top_p, o.seed);

  const auto start = Clock::now();
  TRILEMMA_TRY(prefill_logits, tf.forward(r.prompt_tokens, 0));
  const double prefill_ms = ms_since(start);
  r.prefill_tok_s = n_prompt / (prefill_ms / 1000.0);
  std::span<const float> logits = prefill_logits;
  int prev = r.prompt_tokens.back();
  double decode_ms = 0;
  int decoded = 0;
  for (int pos = n_prompt; pos < n_prompt + o.steps; ++pos) {
    const int next = sampler.sample(logits);
    if (r.tokens.empty()) r.ttft_ms = ms_since(start);
    if (next == tok.eos() || next == tok.bos()) break;
    r.tokens.push_back(next);
    const std::string piece = tok.decode(prev, next);
    r.text += piece;
    if (on_text) on_text(piece);
    prev = next;
    if (pos + 1 >= capacity) break;
    const auto t0 = Clock::now();
    TRILEMMA_TRY(step_logits, tf.forward({&next, 1}, pos));
    decode_ms += ms_since(t0);
    ++decoded;
    logits = step_logits;
  }
  r.decode_tok_s = decoded > 0 ? decoded / (decode_ms / 1000.0) : 0.0;
  r.peak_rss_bytes = peak_rss_bytes();
  return r;
}

Result<ExportReport> export_impl(const ExportOptions& o) {
  if (o.output.empty()) return usage("output", "missing");
  if (info(o.weights).gguf_id == k_no_gguf_id)
    return usage("weights", std::string(info(o.weights).name) + " has no GGUF type id; export f32, f16, q8_0 or q4_0");
  ThreadPool pool(o.threads);
  TRILEMMA_TRY(loaded, load_model({o.model_path, o.tokenizer_path, o.synthetic_shape, o.synthetic_name, o.weights}, pool));
  const Model& m = loaded.model;
  const Tokenizer& tok = loaded.tokenizer;
  const ModelShape& s = m.shape;

  gguf::GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("general.name", m.synthetic ? m.name + " (synthetic weights)" : m.name);
  w.add_uint32("llama.context_length", s.context);
  w.add_uint32("llama.embedding_length", s.hidden);
  w.add_uint32("llama.feed_forward_length", s.ffn);
  w.add_uint32("llama.block_count", s.layers);
  w.add_uint32("llama.attention.head_count", s.heads);
  w.add_uint32("llama.attention.head_count_kv", s.kv_heads);
  w.add_uint32("llama.attention.key_length", s.head_dim);
  w.add_uint32("llama.attention.value_length", s.head_dim);
  w.add_uint32("llama.rope.dimension_count", s.head_dim);
  w.add_float32("llama.rope.freq_base", float(s.rope_theta));
  w.add_float32("llama.attention.layer_norm_rms_epsilon", m.norm_eps);
  w.add_uint32("general.file_type", info(o.weights).gguf_id);
  w.add_string("tokenizer.ggml.model", "llama");
  w.add_string_array("tokenizer.ggml.tokens", tok.gguf_pieces());
  w.add_float_array("tokenizer.ggml.scores", tok.scores());
  w.add_int32_array("tokenizer.ggml.token_type", tok.token_types());
  w.add_uint32("tokenizer.ggml.bos_token_id", std::uint32_t(tok.bos()));
  w.add_uint32("tokenizer.ggml.eos_token_id", std::uint32_t(tok.eos()));
  w.add_uint32("tokenizer.ggml.unknown_token_id", 0);

  const auto matrix = [&](const std::string& name, const Matrix& x) {
    w.add_tensor(name, {std::uint64_t(x.cols), std::uint64_t(x.rows)}, x.type, {x.data, x.bytes()});
  };
  const auto norm = [&](const std::string& name, const float* x) {
    w.add_tensor(name, {s.hidden}, TensorType::f32, {reinterpret_cast<const std::byte*>(x), std::size_t(s.hidden) * 4});
  };
  matrix("token_embd.weight", m.token_embedding);
  norm("output_norm.weight", m.final_norm);
  if (!s.tied_embeddings) matrix("output.weight", m.classifier);
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    const LayerWeights& lw = m.layers[l];
    const std::string p = "blk." + std::to_string(l) + ".";
    matrix(p + "attn_q.weight", lw.wq);
    matrix(p + "attn_k.weight", lw.wk);
    matrix(p + "attn_v.weight", lw.wv);
    matrix(p + "attn_output.weight", lw.wo);
    norm(p + "attn_norm.weight", lw.attn_norm);
    matrix(p + "ffn_gate.weight", lw.w1);
    matrix(p + "ffn_down.weight", lw.w2);
    matrix(p + "ffn_up.weight", lw.w3);
    norm(p + "ffn_norm.weight", lw.ffn_norm);
  }
  TRILEMMA_TRY(written, w.write(o.output));
  (void)written;
  ExportReport r;
  r.synthetic = m.synthetic;
  r.fallbacks = m.fallbacks;
  std::error_code ec;
  r.file_bytes = std::filesystem::file_size(o.output, ec);
  return r;
}

}  // namespace

Result<GenerateReport> generate(const GenerateOptions& options, const std::function<void(std::string_view)>& on_text) {
  try {
    return generate_impl(options, on_text);
  } catch (const std::bad_alloc&) {
    return make_error(ErrorKind::io, "", "memory", "out of memory while loading or running the model");
  }
}

Result<ExportReport> export_gguf(const ExportOptions& options) {
  try {
    return export_impl(options);
  } catch (const std::bad_alloc&) {
    return make_error(ErrorKind::io, options.output.string(), "memory", "out of memory while preparing the export");
  }
}

}  // namespace trilemma::engine
