// Picking the next token from logits (llama2.c run.c's sampler): greedy when temperature is
// 0, otherwise softmax(logits / temperature), then nucleus (top-p) sampling when top_p < 1.
// Seeded xorshift64*: the same seed and logits give the same tokens on every platform.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace trilemma::engine {

class Sampler {
 public:
  Sampler(float temperature, float top_p, std::uint64_t seed);
  // REQUIRES: logits not empty. Modifies nothing the caller owns.
  int sample(std::span<const float> logits);

 private:
  float random_f32();
  float m_temperature, m_top_p;
  std::uint64_t m_state;
  std::vector<float> m_probs;
  std::vector<std::pair<float, int>> m_sorted;
};

int argmax(std::span<const float> logits);

}  // namespace trilemma::engine
