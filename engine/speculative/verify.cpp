#include "engine/speculative/verify.hpp"

#include <algorithm>

#include "engine/sampling/sampler.hpp"

namespace trilemma::engine {

Verdict verify_greedy(std::span<const int> draft, std::span<const float> target_logits, int vocab) {
  Verdict v;
  for (std::size_t i = 0; i <= draft.size(); ++i) {
    const int best = argmax(target_logits.subspan(i * std::size_t(vocab), std::size_t(vocab)));
    v.tokens.push_back(best);
    if (i == draft.size() || best != draft[i]) break;
    ++v.accepted;
  }
  return v;
}

Verdict verify_sampled(std::span<const int> draft, std::span<const float> p, std::span<const float> q, int vocab, Rng& rng) {
  Verdict v;
  const auto row = [&](std::span<const float> m, std::size_t i) { return m.subspan(i * std::size_t(vocab), std::size_t(vocab)); };
  for (std::size_t i = 0; i < draft.size(); ++i) {
    const auto pi = row(p, i), qi = row(q, i);
    const auto d = std::size_t(draft[i]);
    // Accept with probability min(1, p/q): u < p/q, written without the division (q > 0 since
    // d was sampled from q).
    if (rng.uniform() * qi[d] < pi[d]) {
      v.tokens.push_back(draft[i]);
      ++v.accepted;
      continue;
    }
    std::vector<float> residual(static_cast<std::size_t>(vocab));
    float mass = 0.0f;
    for (std::size_t t = 0; t < residual.size(); ++t) mass += residual[t] = std::max(0.0f, pi[t] - qi[t]);
    // mass > 0 whenever a rejection is possible (p != q); guard against rounding anyway.
    if (mass > 0.0f) {
      for (float& r : residual) r /= mass;
      v.tokens.push_back(sample_from(residual, rng.uniform()));
    } else {
      v.tokens.push_back(sample_from(pi, rng.uniform()));
    }
    return v;
  }
  v.tokens.push_back(sample_from(row(p, draft.size()), rng.uniform()));
  return v;
}

}  // namespace trilemma::engine
