// evaluate(): perplexity and KL divergence of a configuration against the full-precision
// reference on a text (contract and chunking in engine.hpp). Both runs see the same chunks;
// log-softmax is taken in double so the KL of near-identical distributions is not rounding.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>

#include "engine/engine.hpp"
#include "engine/kv/kv_pages.hpp"
#include "engine/model/prepare.hpp"
#include "engine/model/transformer.hpp"
#include "engine/source/model_source.hpp"

namespace trilemma::engine {
namespace {

void log_softmax(std::span<const float> logits, std::vector<double>& out) {
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (float x : logits) sum += std::exp(double(x) - max);
  const double lse = max + std::log(sum);
  out.resize(logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) out[i] = double(logits[i]) - lse;
}

double quantile(std::vector<double> v, double q) {  // nearest rank on the sorted values
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = std::size_t(std::min<double>(double(v.size() - 1), std::floor(q * double(v.size() - 1) + 0.5)));
  return v[i];
}

Result<EvalReport> evaluate_impl(const EvalOptions& o) {
  if (o.context < 2) return make_error(ErrorKind::usage, "", "context", "must be >= 2 tokens");
  if (o.max_chunks < 0) return make_error(ErrorKind::usage, "", "max_chunks", "must be >= 0");
  // A regular file of bounded size: /dev/urandom would be read until memory runs out.
  constexpr std::uintmax_t k_max_text_bytes = std::uintmax_t(64) << 20;
  std::error_code ec;
  if (!std::filesystem::exists(o.text_path, ec)) return make_error(ErrorKind::io, o.text_path.string(), "", "no such file");
  if (!std::filesystem::is_regular_file(o.text_path, ec))
    return make_error(ErrorKind::input, o.text_path.string(), "", "not a regular file (an evaluation text is a file of text)");
  if (const auto size = std::filesystem::file_size(o.text_path, ec); ec || size > k_max_text_bytes)
    return make_error(ErrorKind::input, o.text_path.string(), "",
                      "larger than 64 MiB: evaluate on an excerpt (perplexity settles within a few hundred KB)");
  std::ifstream in(o.text_path, std::ios::binary);
  if (!in) return make_error(ErrorKind::io, o.text_path.string(), "", "cannot read the text file");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();

  ThreadPool pool(o.threads);
  const Isa isa = detect_isa(o.force_scalar);
  const ModelSource source{o.model_path, o.tokenizer_path, o.synthetic_shape, o.synthetic_name,
                           WeightChoice{o.weights, o.weights_by_tensor}};
  TRILEMMA_TRY(cfg, load_model(source, pool));
  ModelSource ref_source = source;
  ref_source.weights = TensorType::f32;
  TRILEMMA_TRY(ref, load_model(ref_source, pool));
  pack_for_isa(cfg.model, isa, pool);
  const ModelShape& s = cfg.model.shape;
  const int context = std::min<int>(o.context, int(s.context));

  EvalReport r;
  r.synthetic = cfg.model.synthetic;
  r.weights = o.recipe ? std::string(info(*o.recipe).name) : cfg.model.weights_name();
  r.kv = describe(o.kv);
  r.fallbacks = cfg.model.fallbacks;
  r.context = context;
  const std::vector<int> ids = cfg.tokenizer.encode(text, false, false);
  r.text_tokens = int(ids.size());
  if (ids.empty()) return make_error(ErrorKind::input, o.text_path.string(), "", "the text has no tokens");

  KvConfig kc;
  kc.layers = int(s.layers), kc.heads = int(s.heads), kc.kv_heads = int(s.kv_heads), kc.head_dim = int(s.head_dim);
  kc.capacity = context, kc.format = o.kv.format, kc.strategy = o.kv.strategy, kc.options = o.kv.options;
  kc.isa = isa;
  TRILEMMA_TRY(cache, make_kv_cache(kc));
  Transformer tf(cfg.model, pool, isa, std::move(cache));
  Transformer tf_ref(ref.model, pool, isa, make_contiguous_f32(kc.layers, context, kc.heads, kc.kv_heads, kc.head_dim, isa));

  std::vector<double> kls, lp, lq;
  std::vector<float> ref_logits;
  double nll = 0, nll_ref = 0;
  int agree = 0;
  const int vocab = int(s.vocab);
  const std::size_t chunk_len = std::size_t(context - 1);
  for (std::size_t begin = 0; begin < ids.size(); begin += chunk_len) {
    if (o.max_chunks > 0 && r.chunks >= o.max_chunks) break;
    std::vector<int> chunk = {cfg.tokenizer.bos()};
    chunk.insert(chunk.end(), ids.begin() + std::ptrdiff_t(begin), ids.begin() + std::ptrdiff_t(std::min(ids.size(), begin + chunk_len)));
    tf.cache().reset();
    tf_ref.cache().reset();
    TRILEMMA_TRY(ref_out, tf_ref.forward(chunk, 0, true));
    ref_logits.assign(ref_out.begin(), ref_out.end());
    TRILEMMA_TRY(out, tf.forward(chunk, 0, true));
    for (std::size_t i = 0; i + 1 < chunk.size(); ++i) {
      const auto next = std::size_t(chunk[i + 1]);
      log_softmax(std::span<const float>(ref_logits).subspan(i * std::size_t(vocab), std::size_t(vocab)), lp);
      log_softmax(out.subspan(i * std::size_t(vocab), std::size_t(vocab)), lq);
      double kl = 0;
      for (std::size_t v = 0; v < lp.size(); ++v) kl += std::exp(lp[v]) * (lp[v] - lq[v]);
      kls.push_back(std::max(0.0, kl));
      nll -= lq[next];
      nll_ref -= lp[next];
      agree += std::max_element(lp.begin(), lp.end()) - lp.begin() == std::max_element(lq.begin(), lq.end()) - lq.begin();
    }
    ++r.chunks;
  }
  r.scored = int(kls.size());
  if (r.scored == 0) return make_error(ErrorKind::input, o.text_path.string(), "", "no token to score (one-token text)");
  r.perplexity = std::exp(nll / r.scored);
  r.reference_perplexity = std::exp(nll_ref / r.scored);
  double sum = 0;
  for (double k : kls) sum += k;
  r.kl_mean = sum / r.scored;
  r.kl_median = quantile(kls, 0.5);
  r.kl_p99 = quantile(kls, 0.99);
  r.kl_max = *std::max_element(kls.begin(), kls.end());
  r.top1_agreement = double(agree) / r.scored;
  return r;
}

}  // namespace

Result<EvalReport> evaluate(const EvalOptions& options) {
  try {
    return evaluate_impl(options);
  } catch (const std::bad_alloc&) {
    return make_error(ErrorKind::memory, "", "", "out of memory while evaluating");
  }
}

}  // namespace trilemma::engine
