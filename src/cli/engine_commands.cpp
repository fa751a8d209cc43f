// `trilemma run` and `trilemma export`: the embedded engine, driven from plain option structs.
// A catalog id where a model file is expected runs synthetic weights of that shape (stated).
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

#include "cli/json_output.hpp"
#include "cli/log.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/engine_weights.hpp"
#include "cli/format.hpp"
#include "cli/signal_cleanup.hpp"
#include "devices/core_selection.hpp"
#include "devices/host_probe.hpp"
#include "engine/engine.hpp"
#include "io/atomic_write.hpp"
#include "memory/memory_model.hpp"
#include "memory/tensor_layout.hpp"
#include "models/catalog.hpp"
#include "solver/plan_document.hpp"

namespace trilemma::cli {
namespace {

using nlohmann::json;

struct Source {
  std::optional<std::filesystem::path> path;
  std::optional<ModelShape> shape;
  std::string name;
};

// A file path, or a catalog id (synthetic weights of its shape).
Result<Source> resolve_source(const std::string& model, const std::string& synthetic) {
  Source s;
  const std::string id = synthetic.empty() ? model : synthetic;
  std::error_code ec;
  if (synthetic.empty() && std::filesystem::exists(model, ec)) {
    s.path = model;
    return s;
  }
  auto m = models::resolve_model(id);
  if (!m.ok()) {
    if (synthetic.empty())
      return make_error(ErrorKind::input, model, "", "no such file, and not a catalog model: " + m.error().message);
    return m.error();
  }
  if (!m->path.empty()) {  // a GGUF given by path resolves to its file
    s.path = m->path;
    return s;
  }
  s.shape = m->shape;
  s.name = m->id;
  return s;
}

// The engine's weights for --weights on `src`: a recipe reads the model's shape (a synthetic
// shape, or a GGUF file's header); other names need none.
Result<EngineWeights> weights_for(const std::string& weights, const Source& src) {
  std::optional<ModelShape> shape = src.shape;
  if (!shape && is_engine_recipe(weights) && src.path && src.path->extension() == ".gguf") {
    TRILEMMA_TRY(m, models::resolve_model(src.path->string()));
    shape = m.shape;
  }
  return engine_weights(weights, shape);
}

// Fills the model-source fields that GenerateOptions and EvalOptions share; returns the weights
// chosen (empty name: as stored).
template <class Options>
Result<EngineWeights> set_source(Options& o, const std::string& model, const std::string& synthetic,
                                 const std::string& tokenizer, const std::string& weights) {
  if (model.empty() == synthetic.empty())
    return make_error(ErrorKind::usage, "--model", "", "give exactly one of --model or --synthetic");
  TRILEMMA_TRY(src, resolve_source(model, synthetic));
  o.model_path = src.path;
  o.synthetic_shape = src.shape;
  o.synthetic_name = src.name;
  if (!tokenizer.empty()) o.tokenizer_path = tokenizer;
  if (weights.empty()) return EngineWeights{};
  TRILEMMA_TRY(w, weights_for(weights, src));
  o.weights = w.all;
  o.weights_by_tensor = w.by_tensor;
  o.recipe = w.recipe;
  return w;
}

struct KvFlags {
  std::string format = "f32", strategy = "contiguous";
  int window = 0, sinks = 0, page_size = 16;
  double resident_mib = 0;
  void add(CLI::App* cmd) {
    cmd->add_option("--kv", format, "KV format: " + kv_format_names())->capture_default_str();
    cmd->add_option("--kv-strategy", strategy, kv_strategy_names())->capture_default_str();
    cmd->add_option("--window", window, "sliding: positions kept")->check(CLI::Range(0, int(k_max_context)));
    cmd->add_option("--sinks", sinks, "sliding: first tokens always kept")->check(CLI::Range(0, int(k_max_context)));
    cmd->add_option("--page-size", page_size, "positions per KV page")->capture_default_str()->check(
        CLI::Range(1, engine::k_max_page_positions));
    cmd->add_option("--kv-resident-mib", resident_mib, "offload: KV kept in memory, MiB")->check(CLI::Range(0.0, 1048576.0));
  }
  Result<engine::KvOptions> options() const {
    engine::KvOptions kv;
    const auto t = tensor_type_from_name(format);
    if (!t || !is_kv_format(*t)) return make_error(ErrorKind::usage, "--kv", "", "unknown KV format '" + format + "' (" + kv_format_names() + ")");
    const auto s = kv_strategy_from_name(strategy);
    if (!s)
      return make_error(ErrorKind::usage, "--kv-strategy", "",
                        "unknown KV strategy '" + strategy + "' (expected one of: " + kv_strategy_names() + ")");
    if (window < 0 || sinks < 0 || page_size <= 0 || resident_mib < 0)
      return make_error(ErrorKind::usage, "--window", "", "--window, --sinks, --kv-resident-mib must be >= 0, --page-size > 0");
    kv.format = *t;
    kv.strategy = *s;
    kv.options.sliding = {window, sinks};
    kv.options.page_positions = page_size;
    kv.options.offload.resident_bytes = static_cast<std::uint64_t>(resident_mib * 1048576.0);
    return kv;
  }
};

struct RunFlags {
  KvFlags kv;
  std::string draft = "none", draft_model, draft_tokenizer, draft_weights;
  int context = 0, draft_layers = 0, draft_len = 4;
  bool baseline = false;
  std::string model, tokenizer, synthetic, weights, prompt = "Once upon a time";
  int threads = 0, steps = 64, prompt_tokens = 0;
  std::string cores = "all";
  float temperature = 0, top_p = 1;
  std::uint64_t seed = 42;
  bool scalar = false, as_json = false, quiet = false, force = false;
};

// The weights a run will hold before it loads them: a synthetic shape at its weights type, or
// a file's bytes (mapped, then touched) plus a converted copy when --weights asks for one. A
// lower bound: KV and scratch come on top.
double weights_to_hold(const engine::GenerateOptions& o, const EngineWeights& w) {
  if (o.synthetic_shape) {
    if (w.recipe) return memory::weight_bytes(*o.synthetic_shape, *w.recipe).total;
    const TensorType t = o.weights.value_or(TensorType::f32);
    const auto c = count_parameters(*o.synthetic_shape);
    return c.total() * bits_per_element(t) / 8.0;
  }
  std::error_code ec;
  const double file = o.model_path ? double(std::filesystem::file_size(*o.model_path, ec)) : 0.0;
  if (ec) return 0;
  // A conversion keeps the file mapped and adds the converted copy (at most the file again).
  return o.weights || !o.weights_by_tensor.empty() ? 2 * file : file;
}

// --cores: pins the process before the engine starts its threads, which inherit the mask;
// --threads 0 then means one thread per chosen core.
Result<int> apply_cores(const std::string& spec, int threads) {
  auto cpus = devices::apply_core_selection(spec);
  if (!cpus.ok()) return cpus.error();
  return threads == 0 && !cpus->empty() ? int(cpus->size()) : threads;
}

// The KV cache and scratch a run will allocate, by the planner's formulas (the engine's own
// layout is within a few percent): 0 when the shape is not known before loading (a llama2.c file).
double cache_to_hold(const RunFlags& f, const engine::GenerateOptions& o) {
  std::optional<ModelShape> shape = o.synthetic_shape;
  if (!shape && o.model_path && o.model_path->extension() == ".gguf")
    if (auto m = models::resolve_model(o.model_path->string()); m.ok()) shape = m->shape;
  if (!shape) return 0;
  // The context: as given, else the prompt (at most a token per byte, BOS included) and the steps.
  const std::uint64_t prompt = f.prompt_tokens > 0 ? std::uint64_t(f.prompt_tokens) : f.prompt.size() + 1;
  const std::uint64_t wanted = f.context > 0 ? std::uint64_t(f.context) : prompt + std::uint64_t(f.steps) + std::uint64_t(f.draft_len);
  const auto context = std::uint32_t(std::min<std::uint64_t>({wanted, shape->context, k_max_context}));
  DeploymentConfig c;
  c.kv_type = o.kv.format;
  c.kv_strategy = o.kv.strategy;
  c.context = context;
  c.kv_params.sliding.window = std::uint32_t(std::max(0, o.kv.options.sliding.window));
  c.kv_params.sliding.sinks = std::uint32_t(std::max(0, o.kv.options.sliding.sinks));
  return memory::kv_bytes(*shape, c, context) + memory::scratch_bytes(*shape, 64, context, true);
}

// Refuses up front what cannot fit: loading an 8B f32 model on a 16 GB machine ends with the
// kernel killing the process (issue 14), and so does a 128K-token f32 cache in a 2 GiB container
// (reliability D13): weights, KV and scratch against what this process may still take.
Status check_weights_fit(const RunFlags& f, const engine::GenerateOptions& o, const EngineWeights& w) {
  const auto available = devices::available_memory_bytes();
  if (!available || f.force) return Ok{};
  const double weights = weights_to_hold(o, w), cache = cache_to_hold(f, o);
  if (weights + cache <= *available) return Ok{};
  return make_error(ErrorKind::infeasible, f.synthetic.empty() ? f.model : f.synthetic, "memory",
                    "the run needs " + gib(weights + cache) + " (weights " + gib(weights) + ", KV cache and scratch " +
                        gib(cache) + "), this process may take " + gib(*available) +
                        " (available memory, within its cgroup's limit): pick smaller weights (--weights q4_0), a "
                        "smaller --context or --kv, or --force to try anyway");
}

Status set_draft(engine::GenerateOptions& o, const RunFlags& f) {
  const auto draft = draft_kind_from_name(f.draft);
  if (!draft)
    return make_error(ErrorKind::usage, "--draft", "", "unknown draft kind '" + f.draft + "' (expected one of: " + draft_kind_names() + ")");
  o.draft = *draft;
  if (!f.draft_model.empty()) {
    TRILEMMA_TRY(d, resolve_source(f.draft_model, ""));
    o.draft_model_path = d.path;
    o.draft_synthetic_shape = d.shape;
  }
  if (!f.draft_tokenizer.empty()) o.draft_tokenizer_path = f.draft_tokenizer;
  if (!f.draft_weights.empty()) {
    if (is_engine_recipe(f.draft_weights))
      return make_error(ErrorKind::usage, "--draft-weights", "",
                        f.draft_weights + " is a recipe; the draft copy takes one type (" + engine_weight_format_names() + ")");
    TRILEMMA_TRY(w, engine_weights(f.draft_weights, std::nullopt));
    o.draft_weights = w.all;
  }
  o.draft_layers = f.draft_layers;
  o.draft_len = f.draft_len;
  return Ok{};
}

// The engine's options from `run`'s flags, every flag checked.
Result<engine::GenerateOptions> generate_options(const RunFlags& f) {
  engine::GenerateOptions o;
  TRILEMMA_TRY(weights, set_source(o, f.model, f.synthetic, f.tokenizer, f.weights));
  if (f.steps < 0 || f.threads < 0 || f.temperature < 0 || !(f.top_p > 0 && f.top_p <= 1))
    return make_error(ErrorKind::usage, "", "", "--steps, --threads, --temperature must be >= 0 and --top-p in (0, 1]");
  if (f.context < 0) return make_error(ErrorKind::usage, "--context", "", "must be >= 0");
  if (f.prompt_tokens < 0) return make_error(ErrorKind::usage, "--prompt-tokens", "", "must be >= 0");
  TRILEMMA_TRY(threads, apply_cores(f.cores, f.threads));
  TRILEMMA_TRY(kv, f.kv.options());
  o.threads = threads, o.kv = kv, o.context = f.context;
  o.prompt = f.prompt, o.prompt_tokens = f.prompt_tokens, o.steps = f.steps, o.temperature = f.temperature, o.top_p = f.top_p, o.seed = f.seed;
  o.force_scalar = f.scalar;
  o.measure_baseline = f.baseline;
  if (auto s = set_draft(o, f); !s.ok()) return s.error();
  if (auto s = check_weights_fit(f, o, weights); !s.ok()) return s.error();
  return o;
}

// The model and KV cache as given, so the report can be read back as a measurement
// (`trilemma calibrate --from run.json`).
json run_json(const RunFlags& f, const engine::GenerateOptions& o, const engine::GenerateReport& r) {
  const auto optional = [](const std::optional<double>& v) { return v ? json(*v) : json(); };
  return {{"schema", "trilemma.run"}, {"schema_version", 1}, {"model", f.synthetic.empty() ? f.model : f.synthetic},
          {"kv_config", {{"format", std::string(info(o.kv.format).name)}, {"strategy", std::string(info(o.kv.strategy).name)},
                         {"window", o.kv.options.sliding.window}, {"sinks", o.kv.options.sliding.sinks}, {"page_size", o.kv.options.page_positions},
                         {"resident_bytes", o.kv.options.offload.resident_bytes}}},
          {"synthetic", r.synthetic}, {"weights", r.weights},
          {"fallbacks", r.fallbacks}, {"kernels", r.kernels}, {"threads", r.threads},
          {"cores", devices::allowed_cores()}, {"prompt_tokens", r.prompt_tokens}, {"tokens", r.tokens}, {"text", r.text},
          {"ttft_ms", r.ttft_ms}, {"prefill_tok_s", r.prefill_tok_s}, {"decode_tok_s", r.decode_tok_s},
          {"weight_bytes", r.weight_bytes}, {"peak_rss_bytes", r.peak_rss_bytes}, {"kv", r.kv},
          {"kv_allocated_bytes", r.kv_allocated_bytes}, {"kv_used_bytes", r.kv_used_bytes},
          {"kv_spilled_bytes", r.kv_spilled_bytes}, {"kv_slow_read_bytes", r.kv_slow_read_bytes},
          {"kv_slow_write_bytes", r.kv_slow_write_bytes},
          {"memory", {{"weights", r.memory.weights}, {"draft_weights", r.memory.draft_weights},
                      {"kv_resident", r.memory.kv_resident}, {"kv_spilled", r.memory.kv_spilled},
                      {"scratch", r.memory.scratch}, {"runtime", r.memory.runtime},
                      {"resident_total", r.memory.resident_total()}, {"peak_rss", r.memory.peak_rss}}},
          {"draft", r.draft}, {"acceptance_rate", r.acceptance_rate}, {"tokens_per_pass", r.tokens_per_pass},
          {"draft_cost_ratio", r.draft_cost_ratio}, {"baseline_decode_tok_s", optional(r.baseline_decode_tok_s)},
          {"speculative_speedup", optional(r.speculative_speedup)}, {"predicted_speedup", optional(r.predicted_speedup)}};
}

// The run's summary on stderr (the generated text went to stdout).
void print_run(const engine::GenerateReport& r) {
  std::cerr << "---\n"
            << (r.synthetic ? "synthetic weights (meaningless text; exact for memory traffic and speed)" : "real weights")
            << ", " << r.weights << ", kernels " << r.kernels << ", " << r.threads << " threads\n"
            << "prompt " << r.prompt_tokens.size() << " tokens, generated " << r.tokens.size() << "\n"
            << "TTFT " << fixed(r.ttft_ms, 1) << " ms, prefill " << fixed(r.prefill_tok_s, 1) << " tok/s, decode "
            << fixed(r.decode_tok_s, 1) << " tok/s\n"
            << "weights " << gib(double(r.weight_bytes), 3) << ", peak resident " << gib(double(r.peak_rss_bytes), 3) << "\n"
            << "KV " << r.kv << ": " << gib(double(r.kv_allocated_bytes), 3) << " allocated, "
            << gib(double(r.kv_used_bytes), 3) << " used, " << gib(double(r.kv_spilled_bytes), 3) << " spilled\n"
            << "memory: weights " << gib(double(r.memory.weights)) << " + draft " << gib(double(r.memory.draft_weights))
            << " + KV " << gib(double(r.memory.kv_resident)) << " + scratch " << gib(double(r.memory.scratch))
            << " + runtime " << gib(double(r.memory.runtime)) << " = " << gib(double(r.memory.resident_total()))
            << " (measured peak " << gib(double(r.memory.peak_rss)) << ")\n";
  if (!r.draft.empty() && r.draft != "none") {
    std::cerr << "speculative " << r.draft << ": acceptance " << fixed(r.acceptance_rate, 3) << ", "
              << fixed(r.tokens_per_pass, 2) << " tokens per target pass, draft cost ratio " << fixed(r.draft_cost_ratio, 3);
    if (r.speculative_speedup)
      std::cerr << ", speed-up x" << fixed(*r.speculative_speedup, 2) << " measured vs x"
                << fixed(r.predicted_speedup.value_or(0), 2) << " by the formula";
    std::cerr << "\n";
  }
  for (const auto& fb : r.fallbacks) warn("fallback: {}", fb);
}

int run_generate(const RunFlags& f) {
  auto o = generate_options(f);
  if (!o.ok()) return report_error(o.error());
  const bool stream = !f.as_json && !f.quiet;
  if (stream) std::cout << f.prompt << std::flush;
  auto r = engine::generate(*o, [&](std::string_view piece) {
    if (stream) std::cout << piece << std::flush;
  });
  if (stream) std::cout << "\n";
  if (!r.ok()) return report_error(r.error());
  if (f.as_json) std::cout << json_text(run_json(f, *o, *r)) << "\n";
  else print_run(*r);
  return k_exit_ok;
}

struct ExportFlags {
  std::string model, tokenizer, synthetic, weights, out, plan;
  int threads = 0;
  bool as_json = false;
};

// The engine's export options from the flags, --plan filling in the weights and model.
Result<engine::ExportOptions> export_options(const ExportFlags& f) {
  std::string model = f.model, weights = f.weights;
  if (!f.plan.empty()) {
    TRILEMMA_TRY(text, io::read_text_file(f.plan));
    TRILEMMA_TRY(doc, solver::parse_plan_document(text, f.plan));
    if (weights.empty()) weights = std::string(info(doc.config.weights).name);
    if (model.empty() && f.synthetic.empty()) model = doc.model;
  }
  if (weights.empty()) return make_error(ErrorKind::usage, "--weights", "", "required (or --plan)");
  if (f.out.empty()) return make_error(ErrorKind::usage, "--out", "", "required");
  if (model.empty() == f.synthetic.empty()) return make_error(ErrorKind::usage, "--model", "", "give exactly one of --model or --synthetic");
  TRILEMMA_TRY(src, resolve_source(model, f.synthetic));
  TRILEMMA_TRY(w, weights_for(weights, src));
  if (!w.all) return make_error(ErrorKind::usage, "--weights", "", "required (or --plan)");
  engine::ExportOptions o;
  o.model_path = src.path, o.synthetic_shape = src.shape, o.synthetic_name = src.name;
  if (!f.tokenizer.empty()) o.tokenizer_path = f.tokenizer;
  o.weights = *w.all, o.weights_by_tensor = w.by_tensor, o.recipe = w.recipe;
  o.output = f.out, o.threads = f.threads;
  return o;
}

int run_export(const ExportFlags& f) {
  auto o = export_options(f);
  if (!o.ok()) return report_error(o.error());
  const RemoveTempOnSignal cleanup;
  auto r = engine::export_gguf(*o);
  if (!r.ok()) return report_error(r.error());
  const std::string weights(o->recipe ? info(*o->recipe).name : info(o->weights).name);
  if (f.as_json) {
    std::cout << json_text(json{{"schema", "trilemma.export"}, {"schema_version", 1}, {"output", f.out}, {"weights", weights},
                                {"synthetic", r->synthetic}, {"fallbacks", r->fallbacks}, {"file_bytes", r->file_bytes}})
              << "\n";
    return k_exit_ok;
  }
  // The file is the result; what was written is a note on stderr, silent under -q (issue 50),
  // like the warnings (issue 15).
  spdlog::info("wrote {} ({}, {}{})", f.out, weights, gib(double(r->file_bytes), 3), r->synthetic ? ", synthetic weights" : "");
  for (const auto& fb : r->fallbacks) warn("fallback: {}", fb);
  return k_exit_ok;
}

struct EvalFlags {
  KvFlags kv;
  std::string model, tokenizer, synthetic, weights, text;
  int context = 256, max_chunks = 0, threads = 0;
  std::string cores = "all";
  bool scalar = false, as_json = false;
};

Result<engine::EvalOptions> eval_options(const EvalFlags& f) {
  engine::EvalOptions o;
  if (auto s = set_source(o, f.model, f.synthetic, f.tokenizer, f.weights); !s.ok()) return s.error();
  if (f.text.empty()) return make_error(ErrorKind::usage, "--text", "", "required");
  if (f.context < 2 || f.max_chunks < 0) return make_error(ErrorKind::usage, "--context", "", "must be >= 2");
  TRILEMMA_TRY(kv, f.kv.options());
  TRILEMMA_TRY(threads, apply_cores(f.cores, f.threads));
  o.kv = kv, o.text_path = f.text, o.context = f.context, o.max_chunks = f.max_chunks;
  o.threads = threads, o.force_scalar = f.scalar;
  return o;
}

void print_eval(const engine::EvalReport& r) {
  std::cout << "eval: " << (r.synthetic ? "synthetic weights (accuracy figures are meaningless)" : "real weights")
            << ", weights " << r.weights << ", KV " << r.kv << "\n"
            << "  text        " << r.text_tokens << " tokens in " << r.chunks << " chunks of " << r.context
            << ", " << r.scored << " positions scored\n"
            << "  perplexity  " << fixed(r.perplexity, 4) << " (full precision " << fixed(r.reference_perplexity, 4)
            << ", " << (r.perplexity >= r.reference_perplexity ? "+" : "")
            << fixed(100 * (r.perplexity / r.reference_perplexity - 1), 2) << "%)\n"
            << "  KL vs fp32  mean " << fixed(r.kl_mean, 6) << ", median " << fixed(r.kl_median, 6) << ", p99 "
            << fixed(r.kl_p99, 6) << ", max " << fixed(r.kl_max, 6) << " nats\n"
            << "  top-1       " << fixed(100 * r.top1_agreement, 2) << "% agreement with full precision\n";
  for (const auto& fb : r.fallbacks) warn("fallback: {}", fb);
}

int run_eval(const EvalFlags& f) {
  auto o = eval_options(f);
  if (!o.ok()) return report_error(o.error());
  auto r = engine::evaluate(*o);
  if (!r.ok()) return report_error(r.error());
  if (!f.as_json) {
    print_eval(*r);
    return k_exit_ok;
  }
  std::cout << json_text(json{{"schema", "trilemma.eval"}, {"schema_version", 1}, {"synthetic", r->synthetic},
                              {"weights", r->weights}, {"kv", r->kv}, {"fallbacks", r->fallbacks},
                              {"text_tokens", r->text_tokens}, {"chunks", r->chunks}, {"context", r->context},
                              {"scored", r->scored}, {"perplexity", r->perplexity},
                              {"reference_perplexity", r->reference_perplexity}, {"kl_mean", r->kl_mean},
                              {"kl_median", r->kl_median}, {"kl_p99", r->kl_p99}, {"kl_max", r->kl_max},
                              {"top1_agreement", r->top1_agreement}})
            << "\n";
  return k_exit_ok;
}

}  // namespace

namespace {

void add_eval_command(CLI::App& app, Handler& handler) {
  static EvalFlags v;
  auto* ev = app.add_subcommand("eval", "Perplexity, KL divergence and top-1 agreement of a configuration vs full precision");
  ev->add_option("--model,-m", v.model, "model file (a catalog id evaluates synthetic weights)");
  ev->add_option("--tokenizer", v.tokenizer, "llama2.c tokenizer.bin, or a GGUF file whose vocabulary to use");
  ev->add_option("--synthetic", v.synthetic, "catalog model id: synthetic weights of its shape");
  ev->add_option("--weights", v.weights, engine_weight_names());
  ev->add_option("--text", v.text, "plain text to score")->required();
  ev->add_option("--context", v.context, "tokens per chunk (BOS + context-1)")->capture_default_str()->check(CLI::Range(2, int(k_max_context)));
  ev->add_option("--max-chunks", v.max_chunks, "0 = all")->check(CLI::Range(0, 1 << 30));
  ev->add_option("--threads", v.threads, "0 = all cores")->check(CLI::Range(0, 1024));
  ev->add_option("--cores", v.cores, devices::k_cores_option_help)
      ->capture_default_str();
  ev->add_flag("--scalar", v.scalar, "force the scalar reference kernels");
  v.kv.add(ev);
  ev->add_flag("--json", v.as_json, "JSON report (docs/json-schemas.md#eval)");
  ev->callback([&] { handler = [] { return run_eval(v); }; });
}

void add_run_command(CLI::App& app, Handler& handler) {
  static RunFlags r;
  auto* run = app.add_subcommand("run", "Generate text with the embedded engine and measure TTFT, tok/s and memory");
  run->add_option("--model,-m", r.model, "GGUF or llama2.c checkpoint (a catalog id runs synthetic weights)");
  run->add_option("--tokenizer", r.tokenizer, "llama2.c tokenizer.bin, or a GGUF file whose vocabulary to use (GGUF models carry their own)");
  run->add_option("--synthetic", r.synthetic, "catalog model id: deterministic synthetic weights of its shape");
  run->add_option("--weights", r.weights, engine_weight_names() + " (default: as stored)");
  run->add_option("--threads", r.threads, "0 = all cores")->capture_default_str()->check(CLI::Range(0, 1024));
  run->add_option("--cores", r.cores, devices::k_cores_option_help)
      ->capture_default_str();
  run->add_option("--prompt", r.prompt, "prompt text")->capture_default_str();
  run->add_option("--prompt-tokens", r.prompt_tokens,
                  "repeat the prompt text to exactly this many tokens, BOS included (0 = the text as it is)")
      ->capture_default_str()
      ->check(CLI::Range(0, int(k_max_context)));
  run->add_option("--steps", r.steps, "tokens to generate")->capture_default_str()->check(CLI::Range(0, int(k_max_context)));
  run->add_option("--temperature", r.temperature, "0 = greedy")->capture_default_str()->check(CLI::Range(0.0f, 100.0f));
  run->add_option("--top-p", r.top_p, "nucleus sampling")->capture_default_str()->check(CLI::Range(0.0f, 1.0f));
  run->add_option("--seed", r.seed, "sampling seed")->capture_default_str();
  run->add_flag("--scalar", r.scalar, "force the scalar reference kernels");
  r.kv.add(run);
  run->add_option("--context", r.context, "KV capacity in tokens (0 = prompt + steps)")->check(CLI::Range(0, int(k_max_context)));
  run->add_option("--draft", r.draft, "speculative draft: " + draft_kind_names())->capture_default_str();
  run->add_option("--draft-model", r.draft_model, "draft model file (or catalog id: synthetic)");
  run->add_option("--draft-tokenizer", r.draft_tokenizer, "llama2.c tokenizer of the draft model");
  run->add_option("--draft-weights", r.draft_weights, "self: the lower-bit format of the draft copy");
  run->add_option("--draft-layers", r.draft_layers, "layers: how many first layers draft")->check(CLI::Range(0, 4096));
  run->add_option("--draft-len", r.draft_len, "tokens drafted per target pass")->capture_default_str()->check(CLI::Range(1, int(k_max_draft_len)));
  run->add_flag("--baseline", r.baseline, "also run plain decoding and report the measured speed-up");
  run->add_flag("--quiet", r.quiet, "do not stream the text");
  run->add_flag("--force", r.force, "load the model even when its weights exceed the available memory");
  run->add_flag("--json", r.as_json, "JSON report (docs/json-schemas.md#run)");
  run->callback([&] { handler = [] { return run_generate(r); }; });
}

void add_export_command(CLI::App& app, Handler& handler) {
  static ExportFlags e;
  auto* ex = app.add_subcommand("export", "Write a model as GGUF (any type the engine has kernels for, or a llama.cpp recipe) for other GGUF readers");
  ex->add_option("--model,-m", e.model, "source model file (a catalog id exports synthetic weights)");
  ex->add_option("--tokenizer", e.tokenizer, "llama2.c tokenizer.bin, or a GGUF file whose vocabulary to embed");
  ex->add_option("--synthetic", e.synthetic, "catalog model id: synthetic weights of its shape");
  ex->add_option("--weights", e.weights, engine::export_type_names() + ", or the recipes " + engine_recipe_names() + " (default: the plan's)");
  ex->add_option("--plan", e.plan, "plan document (plan --json): takes its weight format and model");
  ex->add_option("--out,-o", e.out, "output .gguf");
  ex->add_option("--threads", e.threads, "0 = all cores")->check(CLI::Range(0, 1024));
  ex->add_flag("--json", e.as_json, "JSON report");
  ex->callback([&] { handler = [] { return run_export(e); }; });
}

}  // namespace

void add_engine_commands(CLI::App& app, Handler& handler) {
  add_eval_command(app, handler);
  add_run_command(app, handler);
  add_export_command(app, handler);
}

}  // namespace trilemma::cli
