#include "engine/sampling/sampler.hpp"

#include <algorithm>
#include <cmath>

namespace trilemma::engine {

int argmax(std::span<const float> logits) {
  int best = 0;
  for (std::size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[std::size_t(best)]) best = int(i);
  return best;
}

Sampler::Sampler(float temperature, float top_p, std::uint64_t seed)
    : m_temperature(temperature), m_top_p(top_p), m_state(seed == 0 ? 0x9E3779B97F4A7C15ull : seed) {}

float Sampler::random_f32() {  // xorshift64*, top 24 bits -> [0, 1)
  m_state ^= m_state >> 12;
  m_state ^= m_state << 25;
  m_state ^= m_state >> 27;
  return float((m_state * 0x2545F4914F6CDD1Dull) >> 40) / 16777216.0f;
}

int Sampler::sample(std::span<const float> logits) {
  if (m_temperature <= 0.0f) return argmax(logits);
  // Non-finite logits have no distribution (Transformer::forward refuses them; this keeps the
  // sampler itself defined on any input): the argmax of the finite ones, else token 0.
  if (!std::all_of(logits.begin(), logits.end(), [](float x) { return std::isfinite(x); })) {
    int best = -1;
    for (std::size_t i = 0; i < logits.size(); ++i)
      if (std::isfinite(logits[i]) && (best < 0 || logits[i] > logits[std::size_t(best)])) best = int(i);
    return std::max(best, 0);
  }
  m_probs.assign(logits.begin(), logits.end());
  const float max = *std::max_element(m_probs.begin(), m_probs.end());
  float sum = 0.0f;
  for (float& p : m_probs) {
    p = std::exp((p - max) / m_temperature);
    sum += p;
  }
  for (float& p : m_probs) p /= sum;
  const float coin = random_f32();
  if (m_top_p <= 0.0f || m_top_p >= 1.0f) {
    float cdf = 0.0f;
    for (std::size_t i = 0; i < m_probs.size(); ++i) {
      cdf += m_probs[i];
      if (coin < cdf) return int(i);
    }
    return int(m_probs.size()) - 1;
  }
  // Nucleus: the smallest set of most likely tokens whose mass exceeds top_p. Tokens below
  // (1 - top_p) / (n - 1) cannot be in it and are skipped before sorting (as run.c).
  const float cutoff = (1.0f - m_top_p) / float(m_probs.size() - 1);
  m_sorted.clear();
  for (std::size_t i = 0; i < m_probs.size(); ++i)
    if (m_probs[i] >= cutoff) m_sorted.emplace_back(m_probs[i], int(i));
  if (m_sorted.empty()) return argmax(logits);
  std::sort(m_sorted.begin(), m_sorted.end(), [](auto a, auto b) { return a.first > b.first; });
  float mass = 0.0f;
  std::size_t last = m_sorted.size() - 1;
  for (std::size_t i = 0; i < m_sorted.size(); ++i) {
    mass += m_sorted[i].first;
    if (mass > m_top_p) {
      last = i;
      break;
    }
  }
  const float r = coin * mass;
  float cdf = 0.0f;
  for (std::size_t i = 0; i <= last; ++i) {
    cdf += m_sorted[i].first;
    if (r < cdf) return m_sorted[i].second;
  }
  return m_sorted[last].second;
}

}  // namespace trilemma::engine
