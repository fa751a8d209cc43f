// Sampling and speculative verification on hostile logits (NaN, infinities, subnormals, huge
// values, any temperature and nucleus). Oracle: every token returned is in the vocabulary, and a
// verdict emits its accepted prefix plus exactly one token (reliability D1).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/sampling/distribution.hpp"
#include "engine/sampling/sampler.hpp"
#include "engine/speculative/verify.hpp"
#include "fuzz_input.hpp"

using namespace trilemma;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const int vocab = in.ConsumeIntegralInRange<int>(1, 64);
  const int g = in.ConsumeIntegralInRange<int>(0, 4);
  const float temperature = in.ConsumeFloatingPoint<float>(), top_p = in.ConsumeFloatingPoint<float>();
  std::vector<float> logits(std::size_t(vocab) * std::size_t(g + 1));
  for (auto& x : logits) x = in.ConsumeFloatingPoint<float>();
  engine::Sampler sampler(temperature, top_p, in.ConsumeIntegral<std::uint64_t>());
  for (int i = 0; i <= g; ++i) {
    const int t = sampler.sample(std::span<const float>(logits).subspan(std::size_t(i) * vocab, std::size_t(vocab)));
    FUZZ_CHECK(t >= 0 && t < vocab);
  }
  std::vector<int> draft(static_cast<std::size_t>(g));
  for (auto& d : draft) d = in.ConsumeIntegralInRange<int>(0, vocab - 1);
  const auto greedy = engine::verify_greedy(draft, logits, vocab);
  FUZZ_CHECK(greedy.accepted >= 0 && greedy.accepted <= g && int(greedy.tokens.size()) == greedy.accepted + 1);
  for (int t : greedy.tokens)
    FUZZ_CHECK(t >= 0 && t < vocab);
  // Sampled verification takes probabilities: whatever the caller passes, tokens stay in range.
  std::vector<float> p(logits.size()), q(std::size_t(vocab) * std::size_t(g));
  for (auto& x : p) x = in.ConsumeFloatingPoint<float>();
  for (auto& x : q) x = in.ConsumeFloatingPoint<float>();
  engine::Rng rng(in.ConsumeIntegral<std::uint64_t>());
  const auto sampled = engine::verify_sampled(draft, p, q, vocab, rng);
  FUZZ_CHECK(sampled.accepted >= 0 && sampled.accepted <= g && int(sampled.tokens.size()) == sampled.accepted + 1);
  for (int t : sampled.tokens)
    FUZZ_CHECK(t >= 0 && t < vocab);
  return 0;
}
