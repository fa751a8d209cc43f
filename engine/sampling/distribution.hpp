// Token probabilities as the sampler defines them (softmax(logits / temperature), then the
// nucleus of top_p renormalized), and a seeded uniform source. Speculative sampling needs the
// target's and the draft's distributions explicitly (p and q), not just a sampled token.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace trilemma::engine {

// xorshift64* (the Sampler's generator): top 24 bits -> [0, 1). Same seed, same sequence.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : m_state(seed == 0 ? 0x9E3779B97F4A7C15ull : seed) {}
  float uniform() {
    m_state ^= m_state >> 12;
    m_state ^= m_state << 25;
    m_state ^= m_state >> 27;
    return float((m_state * 0x2545F4914F6CDD1Dull) >> 40) / 16777216.0f;
  }

 private:
  std::uint64_t m_state;
};

// REQUIRES temperature > 0, 0 < top_p <= 1. out[v] = probability of token v (0 outside the
// nucleus); sums to 1.
void token_probabilities(std::span<const float> logits, float temperature, float top_p, std::vector<float>& out);
// Inverse CDF with one uniform draw; REQUIRES probs sum to ~1 (the last nonzero token absorbs
// rounding).
int sample_from(std::span<const float> probs, float coin);

}  // namespace trilemma::engine
