// Verification of a draft by the target (speculative decoding: Leviathan et al. 2023, "Fast
// Inference from Transformers via Speculative Decoding"; Chen et al. 2023, "Accelerating Large
// Language Model Decoding with Speculative Sampling").
// Given draft tokens d_1..d_g and the target's distributions p_1..p_{g+1} at the positions of
// d_1..d_g and the one after (one batched target pass), a round emits the accepted prefix
// d_1..d_m plus one more token:
//   greedy:  accept d_i while d_i = argmax p_i; then emit argmax p_{m+1} (the correction, or the
//            bonus token when all g are accepted). Emits exactly plain greedy decoding's tokens.
//   sampled: accept d_i with probability min(1, p_i(d_i) / q_i(d_i)); at the first rejection
//            emit a sample of norm(max(0, p_i - q_i)); when all are accepted emit a sample of
//            p_{g+1}. Every emitted token is distributed exactly as the target's p (Leviathan
//            et al., Theorem 1), whatever the draft's q.
#pragma once
#include <span>
#include <vector>

#include "engine/sampling/distribution.hpp"

namespace trilemma::engine {

struct Verdict {
  std::vector<int> tokens;  // d_1..d_m then the correction or bonus token: m + 1 tokens
  int accepted = 0;         // m
};

// target_logits: [g + 1][vocab]. REQUIRES draft.size() == g.
Verdict verify_greedy(std::span<const int> draft, std::span<const float> target_logits, int vocab);

// p: [g + 1][vocab] target probabilities, q: [g][vocab] draft probabilities (from which the
// draft tokens were sampled). Uses one uniform per draft token considered and one per emitted
// sample.
Verdict verify_sampled(std::span<const int> draft, std::span<const float> p, std::span<const float> q, int vocab, Rng& rng);

}  // namespace trilemma::engine
