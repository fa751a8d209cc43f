#include "engine/speculative/speculative.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "engine/sampling/sampler.hpp"
#include "engine/speculative/verify.hpp"

namespace trilemma::engine {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

}  // namespace

double speculative_speedup_model(double a, int g, double c) {
  const double tokens = a >= 1.0 ? double(g + 1) : (1.0 - std::pow(a, g + 1)) / (1.0 - a);
  return tokens / (double(g) * c + 1.0);
}

Result<SpeculativeResult> speculative_decode(Transformer& target, Transformer& draft, std::span<const int> prompt,
                                             const SpeculativeParams& sp, const std::function<void(int)>& on_token) {
  const int vocab = int(target.model().shape.vocab);
  if (sp.draft_len < 1) return make_error(ErrorKind::usage, "", "draft_len", "must be >= 1");
  if (prompt.empty()) return make_error(ErrorKind::usage, "", "prompt", "empty");
  if (int(draft.model().shape.vocab) != vocab)
    return make_error(ErrorKind::input, "", "draft vocabulary", "the draft's vocabulary differs from the target's");
  const bool sampled = sp.temperature > 0;
  Rng rng(sp.seed);
  SpeculativeResult r;
  std::vector<int> seq(prompt.begin(), prompt.end());
  const auto start = Clock::now();
  // The target runs the whole prompt as plain decoding's prefill does, in the same chunks and
  // with the same kernels (a prompt may take ones whose floats differ from decode's: Matmul's
  // Bits::any), so its K/V and the first round's p_0 are plain decoding's bits. The draft stops
  // one short: its first round catches up on the last prompt token.
  TRILEMMA_TRY(prompt_logits, target.forward(seq, 0));
  std::vector<float> round_one(prompt_logits.begin(), prompt_logits.end());  // round 1's p_0, then its [g + 1][vocab]
  bool first_round = true;
  if (seq.size() > 1) {
    TRILEMMA_TRY(d_logits, draft.forward(std::span<const int>(seq.data(), seq.size() - 1), 0));
    (void)d_logits;
  }
  r.prefill_ms = ms_since(start);
  const auto decode_start = Clock::now();
  int draft_valid = int(seq.size()) - 1;
  std::vector<int> drafted, batch;
  std::vector<float> q, p, probs;  // q: [g][vocab] draft probabilities, p: [g+1][vocab]
  bool stop = false;
  while (!stop && int(r.tokens.size()) < sp.steps) {
    const int n = int(seq.size());
    const int remaining = sp.steps - int(r.tokens.size());
    const int g = std::min(sp.draft_len, std::min(remaining - 1, target.cache().capacity() - n));
    drafted.clear();
    q.clear();
    if (g > 0) {
      // The draft catches up on committed tokens it has not seen (the pending one included).
      auto t0 = Clock::now();
      TRILEMMA_TRY(first, draft.forward(std::span<const int>(seq).subspan(std::size_t(draft_valid)), draft_valid));
      std::span<const float> logits = first;
      ++r.draft_calls;
      for (int i = 0; i < g; ++i) {
        int d;
        if (sampled) {
          token_probabilities(logits, sp.temperature, sp.top_p, probs);
          q.insert(q.end(), probs.begin(), probs.end());
          d = sample_from(probs, rng.uniform());
        } else {
          d = argmax(logits);
        }
        drafted.push_back(d);
        if (i + 1 < g) {
          TRILEMMA_TRY(next, draft.forward({&d, 1}, n + i));
          logits = next;
          ++r.draft_calls;
        }
      }
      draft_valid = n - 1 + g;
      r.draft_ms += ms_since(t0);
    }
    auto t0 = Clock::now();
    std::span<const float> all;
    if (first_round) {
      // Round 1: the target has run the prompt; p_0 is the prefill's, the drafts follow at n.
      if (g > 0) {
        TRILEMMA_TRY(rest, target.forward(drafted, n, true));
        round_one.insert(round_one.end(), rest.begin(), rest.end());
      }
      all = round_one;
      first_round = false;
    } else {
      batch.assign(1, seq.back());
      batch.insert(batch.end(), drafted.begin(), drafted.end());
      TRILEMMA_TRY(verified, target.forward(batch, n - 1, true));
      all = verified;
    }
    r.target_ms += ms_since(t0);
    ++r.rounds;
    Verdict v;
    if (sampled) {
      p.resize(all.size());
      for (int i = 0; i <= g; ++i) {
        token_probabilities(all.subspan(std::size_t(i) * vocab, std::size_t(vocab)), sp.temperature, sp.top_p, probs);
        std::copy(probs.begin(), probs.end(), p.begin() + std::ptrdiff_t(i) * vocab);
      }
      v = verify_sampled(drafted, p, q, vocab, rng);
    } else {
      v = verify_greedy(drafted, all, vocab);
    }
    r.drafted += g;
    r.accepted += v.accepted;
    for (int t : v.tokens) {
      // A token past the cache's last position is not emitted: plain decoding stops there too.
      if (std::find(sp.stop_tokens.begin(), sp.stop_tokens.end(), t) != sp.stop_tokens.end() ||
          int(r.tokens.size()) >= sp.steps || int(seq.size()) >= target.cache().capacity()) {
        stop = true;
        break;
      }
      if (r.tokens.empty()) r.first_token_ms = ms_since(start);
      r.tokens.push_back(t);
      seq.push_back(t);
      if (on_token) on_token(t);
    }
    draft_valid = std::min(draft_valid, int(seq.size()) - 1);
    if (int(seq.size()) >= target.cache().capacity()) break;
  }
  r.decode_ms = ms_since(decode_start);
  return r;
}

}  // namespace trilemma::engine
