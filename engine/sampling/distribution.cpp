#include "engine/sampling/distribution.hpp"

#include <algorithm>
#include <cmath>

namespace trilemma::engine {

void token_probabilities(std::span<const float> logits, float temperature, float top_p, std::vector<float>& out) {
  out.assign(logits.begin(), logits.end());
  const float max = *std::max_element(out.begin(), out.end());
  double sum = 0;
  for (float& p : out) {
    p = std::exp((p - max) / temperature);
    sum += p;
  }
  for (float& p : out) p = float(p / sum);
  if (top_p >= 1.0f) return;
  // Nucleus: the smallest set of most likely tokens whose mass exceeds top_p (run.c's rule).
  std::vector<int> order(out.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = int(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return out[std::size_t(a)] > out[std::size_t(b)]; });
  double mass = 0;
  std::size_t keep = order.size();
  for (std::size_t i = 0; i < order.size(); ++i) {
    mass += out[std::size_t(order[i])];
    if (mass > top_p) {
      keep = i + 1;
      break;
    }
  }
  for (std::size_t i = keep; i < order.size(); ++i) out[std::size_t(order[i])] = 0.0f;
  for (std::size_t i = 0; i < keep; ++i) out[std::size_t(order[i])] = float(out[std::size_t(order[i])] / mass);
}

int sample_from(std::span<const float> probs, float coin) {
  float cdf = 0.0f;
  int last = 0;
  for (std::size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] <= 0.0f) continue;
    cdf += probs[i];
    last = int(i);
    if (coin < cdf) return int(i);
  }
  return last;
}

}  // namespace trilemma::engine
