#include "engine/engine.hpp"

#include <algorithm>
#include <chrono>
#include <new>

#include "engine/gguf/gguf_writer.hpp"
#include "types/weight_format.hpp"
#include "engine/kv/kv_pages.hpp"
#include "engine/model/prepare.hpp"
#include "engine/model/transformer.hpp"
#include "engine/source/model_source.hpp"
#include "engine/quant/kernel_table.hpp"
#include "engine/runtime/memory_stats.hpp"
#include "engine/sampling/sampler.hpp"
#include "engine/speculative/draft.hpp"
#include "engine/speculative/speculative.hpp"

namespace trilemma::engine {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

constexpr int k_max_batch = 64;  // tokens per forward chunk; also the sliding ring's slack

Error usage(const std::string& where, const std::string& message) { return make_error(ErrorKind::usage, "", where, message); }

// The kernel columns the matmuls use, by weight bytes: "avx512vnni", "avx512vnni+avx2" (e.g.
// x4 tiles plus f32 fallbacks on avx2), "avx2+scalar" (a format without an avx2 column), ...
std::string kernels_used(const Model& m, Isa isa) {
  std::vector<std::pair<std::uint64_t, Isa>> used;  // bytes per ISA
  const auto note = [&](const Matrix& w) {
    const FormatKernels& k = *find_kernels(w.type);
    const bool avx512 = w.repacked() || select_rows(k, isa) != nullptr || (isa == Isa::avx512vnni && k.dot_avx512 != nullptr);
    const Isa column = avx512 ? Isa::avx512vnni : dot_isa(k, isa == Isa::avx512vnni ? Isa::avx2 : isa);
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

KvConfig kv_config(const KvOptions& kv, const ModelShape& s, int capacity, Isa isa) {
  KvConfig c;
  c.layers = int(s.layers), c.heads = int(s.heads), c.kv_heads = int(s.kv_heads), c.head_dim = int(s.head_dim);
  c.capacity = capacity;
  c.format = kv.format, c.strategy = kv.strategy, c.options = kv.options;
  c.max_rewrite = k_max_batch;
  c.isa = isa;
  return c;
}

struct PlainRun {
  std::vector<int> tokens;
  std::string text;
  double ttft_ms = 0, prefill_tok_s = 0, decode_tok_s = 0;
};

// Prefill the prompt in one batch, then sample and decode one token at a time.
Result<PlainRun> plain_decode(Transformer& tf, const Tokenizer& tok, const std::vector<int>& prompt, const GenerateOptions& o,
                              const std::function<void(std::string_view)>& on_text) {
  PlainRun r;
  const int n_prompt = int(prompt.size());
  const int capacity = tf.cache().capacity();
  Sampler sampler(o.temperature, o.top_p, o.seed);
  const auto start = Clock::now();
  TRILEMMA_TRY(prefill_logits, tf.forward(prompt, 0));
  r.prefill_tok_s = n_prompt / (ms_since(start) / 1000.0);
  std::span<const float> logits = prefill_logits;
  int prev = prompt.back();
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
    if (pos + 1 >= capacity || int(r.tokens.size()) >= o.steps) break;
    const auto t0 = Clock::now();
    TRILEMMA_TRY(step_logits, tf.forward({&next, 1}, pos));
    decode_ms += ms_since(t0);
    ++decoded;
    logits = step_logits;
  }
  r.decode_tok_s = decoded > 0 ? decoded / (decode_ms / 1000.0) : 0.0;
  return r;
}

Result<GenerateReport> generate_impl(const GenerateOptions& o, const std::function<void(std::string_view)>& on_text) {
  if (o.steps < 0) return usage("steps", "must be >= 0");
  if (!(o.temperature >= 0)) return usage("temperature", "must be >= 0");
  if (!(o.top_p > 0 && o.top_p <= 1)) return usage("top_p", "must be in (0, 1]");
  if (o.context < 0) return usage("context", "must be >= 0");
  const bool speculative = o.draft != DraftKind::none;
  if (speculative && o.draft_len < 1) return usage("draft_len", "must be >= 1");
  if (!speculative && o.measure_baseline) return usage("measure_baseline", "applies to speculative decoding only");
  const std::uint64_t runtime_bytes = current_rss_bytes();
  ThreadPool pool(o.threads);
  const Isa isa = detect_isa(o.force_scalar);
  const ModelSource source{o.model_path, o.tokenizer_path, o.synthetic_shape, o.synthetic_name,
                           WeightChoice{o.weights, o.weights_by_tensor}};
  TRILEMMA_TRY(loaded, load_model(source, pool));
  pack_for_isa(loaded.model, isa, pool);
  const Model& m = loaded.model;
  const Tokenizer& tok = loaded.tokenizer;

  GenerateReport r;
  r.synthetic = m.synthetic;
  r.weights = o.recipe ? std::string(info(*o.recipe).name) : m.weights_name();
  r.fallbacks = m.fallbacks;
  r.kernels = kernels_used(m, isa);
  r.threads = pool.size();
  r.weight_bytes = m.weight_bytes();
  r.kv = describe(o.kv);
  r.prompt_tokens = tok.encode(o.prompt, tok.add_bos(), false);
  if (o.prompt_tokens > 0) {
    const std::size_t bos = tok.add_bos() ? 1 : 0;
    if (r.prompt_tokens.size() <= bos) return usage("prompt", "the prompt encodes to no tokens, so it cannot be repeated to --prompt-tokens");
    if (o.prompt_tokens > int(m.shape.context))
      return usage("prompt", std::to_string(o.prompt_tokens) + " tokens exceed the model's context of " + std::to_string(m.shape.context));
    std::string text = o.prompt;
    while (r.prompt_tokens.size() < std::size_t(o.prompt_tokens)) {  // doubling: a few encodes
      text += " " + text;
      r.prompt_tokens = tok.encode(text, tok.add_bos(), false);
    }
    r.prompt_tokens.resize(std::size_t(o.prompt_tokens));
  }
  const int n_prompt = int(r.prompt_tokens.size());
  if (n_prompt == 0)
    return usage("prompt", "the prompt encodes to no tokens and the model adds no BOS token to start from: give a non-empty --prompt");
  // In 64 bits: --steps near INT_MAX must not wrap the context negative.
  const std::int64_t wanted = o.context > 0 ? o.context : std::int64_t(n_prompt) + o.steps + (speculative ? o.draft_len : 0);
  const int capacity = int(std::min<std::int64_t>(m.shape.context, wanted));
  if (n_prompt > capacity)
    return usage("prompt", std::to_string(n_prompt) + " tokens exceed the context of " + std::to_string(capacity));
  const KvConfig kvc = kv_config(o.kv, m.shape, capacity, isa);
  TRILEMMA_TRY(cache, make_kv_cache(kvc));
  Transformer tf(m, pool, isa, std::move(cache), k_max_batch);
  std::uint64_t draft_kv = 0, draft_scratch = 0, draft_spilled = 0;

  if (!speculative) {
    TRILEMMA_TRY(run, plain_decode(tf, tok, r.prompt_tokens, o, on_text));
    r.tokens = std::move(run.tokens);
    r.text = std::move(run.text);
    r.ttft_ms = run.ttft_ms, r.prefill_tok_s = run.prefill_tok_s, r.decode_tok_s = run.decode_tok_s;
  } else {
    double baseline_step_ms = 0;
    if (o.measure_baseline) {
      TRILEMMA_TRY(base_cache, make_kv_cache(kvc));
      Transformer base(m, pool, isa, std::move(base_cache), k_max_batch);
      TRILEMMA_TRY(run, plain_decode(base, tok, r.prompt_tokens, o, nullptr));
      r.baseline_decode_tok_s = run.decode_tok_s;
      r.baseline_tokens = std::move(run.tokens);
      if (run.decode_tok_s > 0) baseline_step_ms = 1000.0 / run.decode_tok_s;
    }
    DraftSpec spec;
    spec.kind = o.draft;
    spec.model = ModelSource{o.draft_model_path, o.draft_tokenizer_path ? o.draft_tokenizer_path : o.tokenizer_path,
                             o.draft_synthetic_shape, "draft", std::nullopt};
    spec.weights = o.draft_weights;
    spec.layers = o.draft_layers;
    TRILEMMA_TRY(draft, make_draft(spec, loaded, source, pool, isa));
    TRILEMMA_TRY(draft_cache, make_kv_cache(kv_config(o.kv, draft.model->shape, capacity, isa)));
    Transformer dtf(*draft.model, pool, isa, std::move(draft_cache), k_max_batch);
    SpeculativeParams sp;
    sp.draft_len = o.draft_len, sp.steps = o.steps, sp.temperature = o.temperature, sp.top_p = o.top_p, sp.seed = o.seed;
    sp.stop_tokens = {tok.eos(), tok.bos()};
    int prev = r.prompt_tokens.back();
    TRILEMMA_TRY(run, speculative_decode(tf, dtf, r.prompt_tokens, sp, [&](int t) {
      const std::string piece = tok.decode(prev, t);
      r.text += piece;
      if (on_text) on_text(piece);
      prev = t;
    }));
    r.tokens = run.tokens;
    r.ttft_ms = run.first_token_ms;
    r.prefill_tok_s = n_prompt / (run.prefill_ms / 1000.0);
    r.decode_tok_s = run.decode_ms > 0 ? double(run.tokens.size()) / (run.decode_ms / 1000.0) : 0.0;
    r.draft = draft.description;
    r.acceptance_rate = run.acceptance_rate();
    r.tokens_per_pass = run.tokens_per_pass();
    r.target_passes = run.rounds, r.drafted = run.drafted, r.accepted = run.accepted;
    const double draft_step_ms = run.draft_calls > 0 ? run.draft_ms / run.draft_calls : 0.0;
    const double target_step_ms = baseline_step_ms > 0 ? baseline_step_ms : (run.rounds > 0 ? run.target_ms / run.rounds : 0.0);
    r.draft_cost_ratio = target_step_ms > 0 ? draft_step_ms / target_step_ms : 0.0;
    if (r.baseline_decode_tok_s && *r.baseline_decode_tok_s > 0) {
      r.speculative_speedup = r.decode_tok_s / *r.baseline_decode_tok_s;
      r.predicted_speedup = speculative_speedup_model(r.acceptance_rate, o.draft_len, r.draft_cost_ratio);
    }
    const KvStats ds = dtf.cache().stats();
    draft_kv = ds.allocated_bytes, draft_spilled = ds.spilled_bytes, draft_scratch = dtf.scratch_bytes();
    r.memory.draft_weights = draft.extra_weight_bytes;
  }
  const KvStats ks = tf.cache().stats();
  r.kv_allocated_bytes = ks.allocated_bytes, r.kv_used_bytes = ks.used_bytes, r.kv_spilled_bytes = ks.spilled_bytes;
  r.kv_slow_read_bytes = ks.slow_read_bytes, r.kv_slow_write_bytes = ks.slow_write_bytes;
  r.memory.weights = m.resident_weight_bytes(!r.prompt_tokens.empty() || !r.tokens.empty());
  r.memory.kv_resident = ks.allocated_bytes + draft_kv;
  r.memory.kv_spilled = ks.spilled_bytes + draft_spilled;
  r.memory.scratch = tf.scratch_bytes() + draft_scratch;
  r.memory.runtime = runtime_bytes;
  r.peak_rss_bytes = r.memory.peak_rss = peak_rss_bytes();
  return r;
}

Result<ExportReport> export_impl(const ExportOptions& o) {
  if (o.output.empty()) return usage("output", "missing");
  for (const auto& [tensor, t] : o.weights_by_tensor)
    if (info(t).gguf_id == k_no_gguf_id)
      return usage("weights", tensor + ": " + std::string(info(t).name) + " has no GGUF type id; export " + export_type_names());
  if (info(o.weights).gguf_id == k_no_gguf_id)
    return usage("weights", std::string(info(o.weights).name) + " has no GGUF type id; export " + export_type_names());
  ThreadPool pool(o.threads);
  TRILEMMA_TRY(loaded, load_model({o.model_path, o.tokenizer_path, o.synthetic_shape, o.synthetic_name,
                                   WeightChoice{o.weights, o.weights_by_tensor}},
                                  pool));
  const Model& m = loaded.model;
  const Tokenizer& tok = loaded.tokenizer;
  const ModelShape& s = m.shape;

  gguf::GgufWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("general.name", m.synthetic ? m.title + " (synthetic weights)" : m.title);
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
  if (o.recipe && info(*o.recipe).llama_ftype) {  // the recipe's file type (Q4_K_M = 15)
    w.add_uint32("general.file_type", *info(*o.recipe).llama_ftype);
  } else {
    for (const auto& f : weight_formats())  // a trilemma-only type has no llama.cpp file type
      if (f.engine_type == o.weights && f.llama_ftype) w.add_uint32("general.file_type", *f.llama_ftype);
  }
  tok.write_to(w);

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

std::string describe(const KvOptions& kv) {
  return std::string(info(kv.format).name) + " " + std::string(info(kv.strategy).name) + describe_strategy_options(kv.strategy, kv.options);
}

Result<GenerateReport> generate(const GenerateOptions& options, const std::function<void(std::string_view)>& on_text) {
  try {
    return generate_impl(options, on_text);
  } catch (const std::bad_alloc&) {
    return make_error(ErrorKind::memory, "", "", "out of memory while loading or running the model");
  }
}

Result<ExportReport> export_gguf(const ExportOptions& options) {
  try {
    return export_impl(options);
  } catch (const std::bad_alloc&) {
    return make_error(ErrorKind::memory, options.output.string(), "", "out of memory while preparing the export");
  }
}

bool has_kernels(TensorType type) { return find_kernels(type) != nullptr; }

std::string export_type_names() {
  std::string out;
  for (const auto& t : tensor_types())
    if (t.gguf_id != k_no_gguf_id && has_kernels(t.type) && find_kernels(t.type)->quantize != nullptr &&
        t.type != TensorType::q8_k)  // q8_k holds activations, never weights (ggml has no q8_k weights)
      out += (out.empty() ? "" : ", ") + std::string(t.name);
  return out;
}

}  // namespace trilemma::engine
