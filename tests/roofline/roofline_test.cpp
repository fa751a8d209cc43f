#include <catch2/catch.hpp>

#include "roofline/roofline.hpp"

using namespace trilemma::roofline;

TEST_CASE("roofline::step_ms: memory-bound below the ridge point", "[roofline]") {
  // 4 GB per token over 100 GB/s = 40 ms; 8 GFLOP at 1000 GFLOP/s = 8 ms.
  std::string bound;
  CHECK(step_ms({4e9, 8e9}, {100, 1000, 0.5}, &bound) == Approx(40.5));
  CHECK(bound == "memory");
}

TEST_CASE("roofline::step_ms: compute-bound above it", "[roofline]") {
  std::string bound;
  CHECK(step_ms({1e9, 512e9}, {100, 1000, 0}, &bound) == Approx(512));
  CHECK(bound == "compute");
}

TEST_CASE("roofline::speculative_speedup: Leviathan et al. formula", "[roofline]") {
  // a = 0.8, g = 4: (1 - 0.8^5) / 0.2 = 3.3616 tokens per pass.
  CHECK(tokens_per_pass(0.8, 4) == Approx(3.3616));
  CHECK(tokens_per_pass(1.0, 4) == 5.0);
  CHECK(tokens_per_pass(0.0, 4) == 1.0);
  // c = 0.05: 3.3616 / 1.2.
  CHECK(speculative_speedup(0.8, 4, 0.05) == Approx(3.3616 / 1.2));
  // llama.cpp Llama-3.2-1B drafting 3.1-8B: a 0.72, g 5, c 0.155 -> 1.73x (published 1.71x).
  CHECK(speculative_speedup(0.72, 5, 0.155) == Approx(1.73).epsilon(0.01));
}
