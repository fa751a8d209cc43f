// accuracy_table: perplexity and KL divergence against the fp32 reference (engine evaluate())
// for weight formats, KV formats and sliding windows on one model and text; prints the
// markdown table of docs/accuracy.md. Defaults: ../shared stories260K + eval-stories.txt.
//   accuracy_table [--model M --tokenizer T --text X --context N --threads N]
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "engine/engine.hpp"

using namespace trilemma;
using namespace trilemma::engine;

int main(int argc, char** argv) {
  const std::string shared = std::string(TRILEMMA_SOURCE_DIR) + "/../shared/models/";
  std::string model = shared + "stories260K.bin", tokenizer = shared + "tok512.bin", text = shared + "eval-stories.txt";
  int context = 256, threads = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--model") model = v;
    else if (k == "--tokenizer") tokenizer = v;
    else if (k == "--text") text = v;
    else if (k == "--context") context = std::stoi(v);
    else if (k == "--threads") threads = std::stoi(v);
    else {
      std::fprintf(stderr, "accuracy_table: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  struct Row {
    std::string group;
    std::optional<TensorType> weights;
    KvOptions kv;
  };
  std::vector<Row> rows;
  for (TensorType w : {TensorType::f32, TensorType::bf16, TensorType::q8_0, TensorType::q4_0, TensorType::tq3_t, TensorType::tq2_t})
    rows.push_back({"weights", w, {}});
  for (TensorType f : {TensorType::f16, TensorType::q8_0, TensorType::q4_0}) {
    KvOptions kv;
    kv.format = f;
    rows.push_back({"kv format", TensorType::f32, kv});
  }
  for (int window : {64, 128}) {
    for (int sinks : {0, 4}) {
      KvOptions kv;
      kv.strategy = KvStrategy::sliding, kv.options.sliding = {window, sinks};
      rows.push_back({"sliding", TensorType::f32, kv});
    }
  }
  {
    KvOptions kv;  // the cheapest combination: q4_0 KV in a 64+4 window
    kv.format = TensorType::q4_0, kv.strategy = KvStrategy::sliding, kv.options.sliding = {64, 4};
    rows.push_back({"combined", TensorType::q8_0, kv});
  }
  std::printf("| group | weights | KV | PPL | PPL vs fp32 | mean KL | median KL | p99 KL | max KL | top-1 agree |\n");
  std::printf("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  int scored = 0, chunks = 0, tokens = 0;
  for (const Row& row : rows) {
    EvalOptions o;
    o.model_path = model, o.tokenizer_path = tokenizer, o.text_path = text;
    o.weights = row.weights, o.kv = row.kv, o.context = context, o.threads = threads;
    auto r = evaluate(o);
    if (!r.ok()) {
      std::fprintf(stderr, "accuracy_table: %s\n", r.error().to_string().c_str());
      return 1;
    }
    scored = r->scored, chunks = r->chunks, tokens = r->text_tokens;
    std::printf("| %s | %s | %s | %.4f | %+.2f%% | %.5f | %.5f | %.4f | %.3f | %.2f%% |\n", row.group.c_str(), r->weights.c_str(),
                r->kv.c_str(), r->perplexity, 100.0 * (r->perplexity / r->reference_perplexity - 1.0), r->kl_mean, r->kl_median,
                r->kl_p99, r->kl_max, 100.0 * r->top1_agreement);
  }
  std::printf("\n%d text tokens, %d chunks of up to %d positions (BOS + %d tokens), %d scored positions\n", tokens, chunks,
              context, context - 1, scored);
  return 0;
}
