// `trilemma run` and `trilemma export`: the embedded engine, driven from plain option structs.
// A catalog id where a model file is expected runs synthetic weights of that shape (stated).
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/format.hpp"
#include "engine/engine.hpp"
#include "io/atomic_write.hpp"
#include "models/catalog.hpp"
#include "solver/plan_document.hpp"

namespace trilemma::cli {
namespace {

using nlohmann::json;

// The engine's tensor type for a --weights name: a weight format the engine runs (q8_0, int3)
// or a tensor type (f32, tq3_t).
Result<TensorType> engine_weights(const std::string& name) {
  if (auto f = weight_format_from_name(name)) {
    if (info(*f).engine_type) return *info(*f).engine_type;
    return make_error(ErrorKind::usage, "--weights", "",
                      name + " is a llama.cpp recipe the engine does not run; the engine runs f32, f16, bf16, q8_0, "
                             "q4_0, int3, int2");
  }
  if (auto t = tensor_type_from_name(name)) return *t;
  return make_error(ErrorKind::usage, "--weights", "", "unknown weight format '" + name + "'");
}

struct Source {
  std::optional<std::filesystem::path> path;
  std::optional<ModelShape> shape;
  std::string name;
};

// A file path, or a catalog id (synthetic weights of its shape).
Result<Source> resolve_source(const std::string& model, const std::string& synthetic) {
  Source s;
  const std::string id = synthetic.empty() ? model : synthetic;
  if (synthetic.empty() && std::filesystem::exists(model)) {
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

struct RunFlags {
  std::string model, tokenizer, synthetic, weights, prompt = "Once upon a time";
  int threads = 0, steps = 64;
  float temperature = 0, top_p = 1;
  std::uint64_t seed = 42;
  bool scalar = false, as_json = false, quiet = false;
};

int run_generate(const RunFlags& f) {
  if (f.model.empty() == f.synthetic.empty())
    return report_error(make_error(ErrorKind::usage, "--model", "", "give exactly one of --model or --synthetic"));
  if (f.steps < 0 || f.threads < 0 || f.temperature < 0 || !(f.top_p > 0 && f.top_p <= 1))
    return report_error(make_error(ErrorKind::usage, "", "", "--steps, --threads, --temperature must be >= 0 and --top-p in (0, 1]"));
  auto src = resolve_source(f.model, f.synthetic);
  if (!src.ok()) return report_error(src.error());
  engine::GenerateOptions o;
  o.model_path = src->path;
  o.synthetic_shape = src->shape;
  o.synthetic_name = src->name;
  if (!f.tokenizer.empty()) o.tokenizer_path = f.tokenizer;
  if (!f.weights.empty()) {
    auto w = engine_weights(f.weights);
    if (!w.ok()) return report_error(w.error());
    o.weights = *w;
  }
  o.threads = f.threads;
  o.prompt = f.prompt;
  o.steps = f.steps;
  o.temperature = f.temperature;
  o.top_p = f.top_p;
  o.seed = f.seed;
  o.force_scalar = f.scalar;
  const bool stream = !f.as_json && !f.quiet;
  if (stream) std::cout << f.prompt << std::flush;
  auto r = engine::generate(o, [&](std::string_view piece) {
    if (stream) std::cout << piece << std::flush;
  });
  if (stream) std::cout << "\n";
  if (!r.ok()) return report_error(r.error());
  if (f.as_json) {
    json j = {{"schema", "trilemma.run"}, {"schema_version", 1}, {"synthetic", r->synthetic}, {"weights", r->weights},
              {"fallbacks", r->fallbacks}, {"kernels", r->kernels}, {"threads", r->threads},
              {"prompt_tokens", r->prompt_tokens}, {"tokens", r->tokens}, {"text", r->text},
              {"ttft_ms", r->ttft_ms}, {"prefill_tok_s", r->prefill_tok_s}, {"decode_tok_s", r->decode_tok_s},
              {"weight_bytes", r->weight_bytes}, {"peak_rss_bytes", r->peak_rss_bytes}};
    std::cout << j.dump(2) << "\n";
    return k_exit_ok;
  }
  std::cerr << "---\n"
            << (r->synthetic ? "synthetic weights (meaningless text; exact for memory traffic and speed)" : "real weights")
            << ", " << r->weights << ", kernels " << r->kernels << ", " << r->threads << " threads\n"
            << "prompt " << r->prompt_tokens.size() << " tokens, generated " << r->tokens.size() << "\n"
            << "TTFT " << fixed(r->ttft_ms, 1) << " ms, prefill " << fixed(r->prefill_tok_s, 1) << " tok/s, decode "
            << fixed(r->decode_tok_s, 1) << " tok/s\n"
            << "weights " << gib(double(r->weight_bytes), 3) << ", peak resident " << gib(double(r->peak_rss_bytes), 3) << "\n";
  for (const auto& fb : r->fallbacks) std::cerr << "fallback: " << fb << "\n";
  return k_exit_ok;
}

struct ExportFlags {
  std::string model, tokenizer, synthetic, weights, out, plan;
  int threads = 0;
  bool as_json = false;
};

int run_export(const ExportFlags& f) {
  std::string model = f.model, weights = f.weights;
  if (!f.plan.empty()) {
    auto text = io::read_text_file(f.plan);
    if (!text.ok()) return report_error(text.error());
    auto doc = solver::parse_plan_document(*text, f.plan);
    if (!doc.ok()) return report_error(doc.error());
    if (weights.empty()) weights = std::string(info(doc->config.weights).name);
    if (model.empty() && f.synthetic.empty()) model = doc->model;
  }
  if (weights.empty()) return report_error(make_error(ErrorKind::usage, "--weights", "", "required (or --plan)"));
  if (f.out.empty()) return report_error(make_error(ErrorKind::usage, "--out", "", "required"));
  if (model.empty() == f.synthetic.empty())
    return report_error(make_error(ErrorKind::usage, "--model", "", "give exactly one of --model or --synthetic"));
  auto w = engine_weights(weights);
  if (!w.ok()) return report_error(w.error());
  auto src = resolve_source(model, f.synthetic);
  if (!src.ok()) return report_error(src.error());
  engine::ExportOptions o;
  o.model_path = src->path;
  o.synthetic_shape = src->shape;
  o.synthetic_name = src->name;
  if (!f.tokenizer.empty()) o.tokenizer_path = f.tokenizer;
  o.weights = *w;
  o.output = f.out;
  o.threads = f.threads;
  auto r = engine::export_gguf(o);
  if (!r.ok()) return report_error(r.error());
  if (f.as_json) {
    std::cout << json{{"schema", "trilemma.export"}, {"schema_version", 1}, {"output", f.out},
                      {"weights", std::string(info(*w).name)}, {"synthetic", r->synthetic},
                      {"fallbacks", r->fallbacks}, {"file_bytes", r->file_bytes}}
                     .dump(2)
              << "\n";
    return k_exit_ok;
  }
  std::cout << "wrote " << f.out << " (" << info(*w).name << ", " << gib(double(r->file_bytes), 3)
            << (r->synthetic ? ", synthetic weights" : "") << ")\n";
  for (const auto& fb : r->fallbacks) std::cout << "fallback: " << fb << "\n";
  return k_exit_ok;
}

}  // namespace

void add_engine_commands(CLI::App& app, Handler& handler) {
  static RunFlags r;
  auto* run = app.add_subcommand("run", "Generate text with the embedded engine and measure TTFT, tok/s and memory");
  run->add_option("--model,-m", r.model, "GGUF or llama2.c checkpoint (a catalog id runs synthetic weights)");
  run->add_option("--tokenizer", r.tokenizer, "llama2.c tokenizer.bin (GGUF files carry their own)");
  run->add_option("--synthetic", r.synthetic, "catalog model id: deterministic synthetic weights of its shape");
  run->add_option("--weights", r.weights, "f32, f16, bf16, q8_0, q4_0, int3, int2 (default: as stored)");
  run->add_option("--threads", r.threads, "0 = all cores")->capture_default_str();
  run->add_option("--prompt", r.prompt, "prompt text")->capture_default_str();
  run->add_option("--steps", r.steps, "tokens to generate")->capture_default_str();
  run->add_option("--temperature", r.temperature, "0 = greedy")->capture_default_str();
  run->add_option("--top-p", r.top_p, "nucleus sampling")->capture_default_str();
  run->add_option("--seed", r.seed, "sampling seed")->capture_default_str();
  run->add_flag("--scalar", r.scalar, "force the scalar reference kernels");
  run->add_flag("--quiet", r.quiet, "do not stream the text");
  run->add_flag("--json", r.as_json, "JSON report (docs/json-schemas.md#run)");
  run->callback([&] { handler = [] { return run_generate(r); }; });

  static ExportFlags e;
  auto* ex = app.add_subcommand("export", "Write a model as GGUF (f16, q8_0, q4_0) for other GGUF readers");
  ex->add_option("--model,-m", e.model, "source model file (a catalog id exports synthetic weights)");
  ex->add_option("--tokenizer", e.tokenizer, "llama2.c tokenizer.bin");
  ex->add_option("--synthetic", e.synthetic, "catalog model id: synthetic weights of its shape");
  ex->add_option("--weights", e.weights, "f32, f16, q8_0, q4_0 (default: the plan's)");
  ex->add_option("--plan", e.plan, "plan document (plan --json): takes its weight format and model");
  ex->add_option("--out,-o", e.out, "output .gguf");
  ex->add_option("--threads", e.threads, "0 = all cores");
  ex->add_flag("--json", e.as_json, "JSON report");
  ex->callback([&] { handler = [] { return run_export(e); }; });
}

}  // namespace trilemma::cli
