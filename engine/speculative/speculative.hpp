// The speculative decoding loop: the draft proposes g tokens one forward pass at a time, the
// target scores all of them in one batched pass, verify.hpp decides what is kept. Both
// transformers keep their own KV caches; rejected positions are simply overwritten by the next
// round (kv_cache.hpp: storing at p replaces p).
// Invariant between rounds: the committed sequence is seq[0..n); the target has processed
// seq[0..n-1) and the draft seq[0..draft_valid) with draft_valid <= n - 1; seq[n-1] is pending.
// A round: the draft catches up on seq[draft_valid..n) in one call, samples d_1, then one call
// per further draft token; the target runs [seq[n-1], d_1..d_g] from position n - 1 with all
// logits; m accepted tokens + 1 are appended. Bounds: positions up to n - 1 + g are written.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engine/model/transformer.hpp"

namespace trilemma::engine {

struct SpeculativeParams {
  int draft_len = 4;        // g >= 1
  int steps = 64;           // tokens to emit at most
  float temperature = 0;    // 0: greedy verification; > 0: rejection sampling
  float top_p = 1;
  std::uint64_t seed = 42;
  std::vector<int> stop_tokens;  // emitted tokens that end generation (not included)
};

struct SpeculativeResult {
  std::vector<int> tokens;
  int rounds = 0;            // target passes after the prompt
  int drafted = 0, accepted = 0;
  int draft_calls = 0;       // draft forward calls (catch-up calls included)
  double prefill_ms = 0;     // both models' prompt passes
  double target_ms = 0, draft_ms = 0;  // forward time after the prompt
  double first_token_ms = 0; // start of prefill to the first emitted token
  double decode_ms = 0;      // after the prompt until the end
  double acceptance_rate() const { return drafted > 0 ? double(accepted) / drafted : 0.0; }
  double tokens_per_pass() const { return rounds > 0 ? double(tokens.size()) / rounds : 0.0; }
};

// REQUIRES: prompt not empty; both transformers' caches empty and with capacity >= prompt size
// + steps + draft_len; same vocabulary.
Result<SpeculativeResult> speculative_decode(Transformer& target, Transformer& draft, std::span<const int> prompt,
                                             const SpeculativeParams& params, const std::function<void(int token)>& on_token);

// The expected speed-up of speculative decoding with acceptance rate a, draft length g and cost
// ratio c = (draft step time) / (target step time): (1 - a^(g+1)) / ((1 - a)(g c + 1))
// (Leviathan et al. 2023, Theorem 3.8 with i.i.d. acceptances).
double speculative_speedup_model(double a, int g, double c);

}  // namespace trilemma::engine
