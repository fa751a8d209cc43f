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

TEST_CASE("roofline::step_ms: weights and attention phases add, each at its own bound", "[roofline]") {
  // Weights: 1 GB at 100 GB/s = 10 ms (memory-bound; 2 GFLOP at 1000 = 2 ms).
  // Attention: 0.1 GB of KV = 1 ms, but 4 GFLOP at 200 attention GFLOP/s = 20 ms (compute-bound).
  std::string bound;
  CHECK(step_ms({1e9, 2e9, 0.1e9, 4e9}, {100, 1000, 0.5, 200}, &bound) == Approx(10 + 20 + 0.5));
  CHECK(bound == "compute");  // 11 ms of memory vs 22 ms of compute
  // One max over the sums would have said max(11, 6) = 11 ms with attention at full compute.
  CHECK(step_ms({1e9, 2e9, 0.1e9, 4e9}, {100, 1000, 0, 0}) == Approx(10 + 4));
}

TEST_CASE("roofline::tokens_per_pass_measured: accepted / drafted ratio", "[roofline]") {
  // 4 drafted per pass, half accepted on average: 2 accepted + 1 = 3 tokens per pass, while a
  // per-token probability of 0.5 (stops at the first rejection) gives only 1.9375.
  CHECK(tokens_per_pass_measured(0.5, 4) == Approx(3.0));
  CHECK(tokens_per_pass(0.5, 4) == Approx(1.9375));
  CHECK(tokens_per_pass_measured(1.0, 4) == tokens_per_pass(1.0, 4));
  CHECK(tokens_per_pass_measured(0.0, 4) == tokens_per_pass(0.0, 4));
}
