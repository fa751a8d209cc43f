// kv_bench: the KV cache and speculative decoding on the synthetic TinyLlama-1.1B shape
// (q4_0 weights) and, when ../shared is present, stories260K. Three parts, in this order:
//  1. memory: one generate() run (TinyLlama, f16 paged KV, ~500-token prompt) whose breakdown
//     (weights + KV + scratch + runtime = RSS before loading) is set against the measured peak
//     RSS (VmHWM). First, so that nothing earlier in the process raised the high-water mark.
//  2. kv: for contexts 512, 2048, 8192 x KV formats x strategies: the cache is filled directly
//     with `context - 1` positions of pseudo-random K/V rows (the cost of attention does not
//     depend on the values; a prefill of 8192 tokens would take a minute per row), then
//     `--steps` single-token decode steps are timed (median). Reports decode tok/s, resident KV
//     bytes, spilled bytes and slower-tier bytes read per token.
//  3. speculative: generate() with measure_baseline for several draft sources: measured
//     acceptance a, cost ratio c, speed-up, and the formula (1 - a^(g+1)) / ((1 - a)(g c + 1)).
//   kv_bench [--threads N] [--steps N] [--contexts 512,2048,8192] [--parts memory,kv,spec]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "engine/kv/kv_pages.hpp"
#include "engine/model/loaders.hpp"
#include "engine/model/prepare.hpp"
#include "engine/model/transformer.hpp"
#include "engine/source/model_source.hpp"
#include "engine/runtime/memory_stats.hpp"

using namespace trilemma;
using namespace trilemma::engine;
using Clock = std::chrono::steady_clock;

namespace {

ModelShape tinyllama() {
  ModelShape s;
  s.layers = 22, s.hidden = 2048, s.heads = 32, s.kv_heads = 4, s.head_dim = 64, s.ffn = 5632, s.vocab = 32000;
  s.context = 8192 + 16, s.tied_embeddings = false;  // TinyLlama's is 2048; raised to bench 8192
  return s;
}

double mib(std::uint64_t b) { return double(b) / (1024.0 * 1024.0); }

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> out;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t j = s.find(',', i);
    out.push_back(std::stoi(s.substr(i, j - i)));
    i = j == std::string::npos ? s.size() : j + 1;
  }
  return out;
}

int memory_part(int threads) {
  GenerateOptions o;
  o.synthetic_shape = tinyllama();
  o.synthetic_shape->context = 2048;
  o.synthetic_name = "TinyLlama-1.1B";
  o.weights = TensorType::q4_0;
  o.threads = threads;
  for (int i = 0; i < 500; ++i) o.prompt += char('a' + i % 26);
  o.steps = 8;
  o.context = 2048;
  o.kv.format = TensorType::f16;
  o.kv.strategy = KvStrategy::paged;
  auto r = generate(o, nullptr);
  if (!r.ok()) return std::fprintf(stderr, "kv_bench: %s\n", r.error().to_string().c_str()), 1;
  const MemoryBreakdown& m = r->memory;
  std::printf("## memory: TinyLlama-1.1B shape (synthetic) q4_0, KV %s, %zu prompt + %zu generated tokens, %d threads\n\n",
              r->kv.c_str(), r->prompt_tokens.size(), r->tokens.size(), r->threads);
  std::printf("| part | MiB |\n| --- | ---: |\n");
  std::printf("| weights | %.1f |\n| KV resident | %.1f |\n| KV spilled (not resident) | %.1f |\n", mib(m.weights), mib(m.kv_resident),
              mib(m.kv_spilled));
  std::printf("| scratch | %.1f |\n| runtime (RSS before loading) | %.1f |\n| **sum** | **%.1f** |\n", mib(m.scratch), mib(m.runtime),
              mib(m.resident_total()));
  std::printf("| measured peak RSS (VmHWM) | %.1f |\n\nsum / peak = %.3f (%s 5%%)\n\n", mib(m.peak_rss),
              double(m.resident_total()) / double(m.peak_rss),
              std::abs(double(m.resident_total()) / double(m.peak_rss) - 1.0) <= 0.05 ? "within" : "NOT within");
  return 0;
}

int kv_part(int threads, int steps, const std::vector<int>& contexts) {
  ThreadPool pool(threads);
  const Isa isa = detect_isa();
  const auto t0 = Clock::now();
  auto model = make_synthetic(tinyllama(), "TinyLlama-1.1B", TensorType::q4_0, k_synthetic_seed, pool);
  if (!model.ok()) return std::fprintf(stderr, "kv_bench: %s\n", model.error().to_string().c_str()), 1;
  pack_for_isa(*model, isa, pool);
  const ModelShape& s = model->shape;
  const int kv_dim = int(s.kv_dim());
  std::printf("## kv: TinyLlama-1.1B shape (synthetic) q4_0 weights (%.2f GiB, built in %.1f s), kernels %s, %d threads, "
              "%d decode steps per row (median)\n\n",
              double(model->weight_bytes()) / (1 << 30), std::chrono::duration<double>(Clock::now() - t0).count(),
              std::string(isa_name(isa)).c_str(), pool.size(), steps);
  std::vector<float> rows(64 * std::size_t(kv_dim));
  std::mt19937 rng(5);
  std::normal_distribution<float> nd;
  for (float& x : rows) x = nd(rng);
  std::printf("| context | KV format | strategy | decode tok/s | KV resident MiB | KV used MiB | spilled MiB | tier read MiB/token |\n");
  std::printf("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
  for (int ctx : contexts) {
    for (TensorType format : kv_formats()) {
      for (KvStrategy strategy : {KvStrategy::contiguous, KvStrategy::paged, KvStrategy::sliding, KvStrategy::offload}) {
        KvConfig c;
        c.layers = int(s.layers), c.heads = int(s.heads), c.kv_heads = int(s.kv_heads), c.head_dim = int(s.head_dim);
        c.capacity = ctx + steps, c.format = format, c.strategy = strategy, c.isa = isa;
        std::string label = std::string(info(strategy).name);
        if (strategy == KvStrategy::sliding) c.options.sliding = {256, 4}, label += " W256+4";
        const std::uint64_t full = std::uint64_t(ctx) * 2 * kv_row_bytes(format, kv_dim) * s.layers;
        if (strategy == KvStrategy::offload) c.options.offload.resident_bytes = full / 4, label += " 25%";
        auto made = make_kv_cache(c);
        if (!made.ok()) return std::fprintf(stderr, "kv_bench: %s\n", made.error().to_string().c_str()), 1;
        std::unique_ptr<KvCache> cache = std::move(made).value();
        for (int pos = 0; pos + 1 < ctx; ++pos)
          for (int l = 0; l < int(s.layers); ++l) {
            const float* r = &rows[std::size_t((pos + l) % 64) * std::size_t(kv_dim)];
            cache->store(l, pos, r, &rows[std::size_t((pos + l + 7) % 64) * std::size_t(kv_dim)]);
          }
        Transformer tf(*model, pool, isa, std::move(cache), 1);
        const std::uint64_t read0 = tf.cache().stats().slow_read_bytes;
        std::vector<double> ms;
        for (int i = 0; i < steps; ++i) {
          const int token = 100 + i;
          const auto t = Clock::now();
          if (!tf.forward({&token, 1}, ctx - 1 + i).ok()) return 1;
          ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
        }
        std::sort(ms.begin(), ms.end());
        const KvStats st = tf.cache().stats();
        std::printf("| %d | %s | %s | %.2f | %.1f | %.1f | %.1f | %.1f |\n", ctx, std::string(info(format).name).c_str(), label.c_str(),
                    1000.0 / ms[ms.size() / 2], mib(st.allocated_bytes), mib(st.used_bytes), mib(st.spilled_bytes),
                    mib(st.slow_read_bytes - read0) / steps);
        std::fflush(stdout);
      }
    }
  }
  std::printf("\n");
  return 0;
}

int spec_part(int threads) {
  struct Case {
    std::string model;  // "stories" or "tinyllama"
    DraftKind kind;
    std::optional<TensorType> draft_weights;
    int layers;
    int g;
  };
  const std::filesystem::path shared = std::filesystem::path(TRILEMMA_SOURCE_DIR) / ".." / "shared" / "models";
  const bool have_stories = std::filesystem::exists(shared / "stories260K.bin");
  std::vector<Case> cases;
  if (have_stories)
    for (int g : {2, 4, 8}) {
      cases.push_back({"stories", DraftKind::model, std::nullopt, 0, g});
      cases.push_back({"stories", DraftKind::self, TensorType::q4_0, 0, g});
      cases.push_back({"stories", DraftKind::layers, std::nullopt, 2, g});
    }
  cases.push_back({"tinyllama", DraftKind::layers, std::nullopt, 2, 4});
  cases.push_back({"tinyllama", DraftKind::self, TensorType::tq2_t, 0, 4});
  std::printf("## speculative: greedy, 128 tokens, %d threads; speed-up measured against plain decoding in the same run\n\n", threads);
  std::printf("| target | draft | g | acceptance a | tokens / target pass | c | measured speed-up | formula | plain tok/s | spec tok/s | same tokens |\n");
  std::printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
  for (const Case& c : cases) {
    GenerateOptions o;
    if (c.model == "stories") {
      o.model_path = shared / "stories260K.bin", o.tokenizer_path = shared / "tok512.bin";
      if (c.kind == DraftKind::model) o.draft_model_path = shared / "stories260K.gguf";
    } else {
      o.synthetic_shape = tinyllama(), o.synthetic_shape->context = 2048, o.synthetic_name = "TinyLlama-1.1B";
      o.weights = TensorType::q4_0;
    }
    o.threads = threads, o.steps = 128, o.draft = c.kind, o.draft_weights = c.draft_weights, o.draft_layers = c.layers;
    o.draft_len = c.g, o.measure_baseline = true, o.prompt = "Once upon a time";
    auto r = generate(o, nullptr);
    if (!r.ok()) return std::fprintf(stderr, "kv_bench: %s\n", r.error().to_string().c_str()), 1;
    std::printf("| %s | %s | %d | %.3f | %.2f | %.3f | %.2fx | %.2fx | %.1f | %.1f | %s |\n",
                c.model == "stories" ? "stories260K f32" : "TinyLlama q4_0 (synthetic)", r->draft.c_str(), c.g, r->acceptance_rate,
                r->tokens_per_pass, r->draft_cost_ratio, r->speculative_speedup.value_or(0), r->predicted_speedup.value_or(0),
                r->baseline_decode_tok_s.value_or(0), r->decode_tok_s, r->tokens == r->baseline_tokens ? "yes" : "NO");
    std::fflush(stdout);
  }
  std::printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, steps = 3;
  std::vector<int> contexts = {512, 2048, 8192};
  std::string parts = "memory,kv,spec";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--threads") threads = std::stoi(v);
    else if (k == "--steps") steps = std::stoi(v);
    else if (k == "--contexts") contexts = parse_list(v);
    else if (k == "--parts") parts = v;
    else return std::fprintf(stderr, "kv_bench: unknown option %s\n", k.c_str()), 2;
  }
  const auto t0 = Clock::now();
  if (parts.find("memory") != std::string::npos && memory_part(threads) != 0) return 1;
  if (parts.find("kv") != std::string::npos && kv_part(threads, steps, contexts) != 0) return 1;
  if (parts.find("spec") != std::string::npos && spec_part(threads) != 0) return 1;
  std::printf("kv_bench: %.0f s\n", std::chrono::duration<double>(Clock::now() - t0).count());
  return 0;
}
