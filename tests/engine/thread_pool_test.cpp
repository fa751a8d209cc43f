// The pool every kernel runs on: each index once, the thread index in range, and an exception
// from any thread (std::bad_alloc near the memory limit) reaching the caller instead of
// terminating the process.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <new>
#include <stdexcept>
#include <vector>

#include "engine/runtime/thread_pool.hpp"

using trilemma::engine::ThreadPool;

TEST_CASE("engine::ThreadPool: every index runs once, on a thread index below size()", "[engine][pool]") {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(1000);
  std::atomic<bool> thread_ok{true};
  pool.parallel_for_indexed(1000, 1, [&](int thread, std::int64_t b, std::int64_t e) {
    if (thread < 0 || thread >= pool.size()) thread_ok = false;
    for (std::int64_t i = b; i < e; ++i) hits[std::size_t(i)]++;
  });
  CHECK(thread_ok);
  for (const auto& h : hits) CHECK(h == 1);
}

TEST_CASE("engine::ThreadPool: an exception on any thread is rethrown to the caller; the pool stays usable", "[engine][pool]") {
  ThreadPool pool(2);
  // Every chunk throws, so whichever thread (caller or worker) takes one throws.
  CHECK_THROWS_AS(pool.parallel_for(64, 1, [](std::int64_t, std::int64_t) { throw std::bad_alloc(); }), std::bad_alloc);
  // Only the worker's chunks throw: the caller's chunks wait (up to 5 s) for the worker to take
  // one, the caller's work finishes, and the worker's error arrives.
  std::atomic<int> worker_chunks{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  CHECK_THROWS_WITH(pool.parallel_for_indexed(64, 1,
                                              [&](int thread, std::int64_t, std::int64_t) {
                                                if (thread != 0) {
                                                  ++worker_chunks;
                                                  throw std::runtime_error("worker");
                                                }
                                                while (worker_chunks == 0 && std::chrono::steady_clock::now() < deadline)
                                                  std::this_thread::yield();
                                              }),
                    "worker");
  CHECK(worker_chunks > 0);
  std::atomic<std::int64_t> sum{0};
  pool.parallel_for(100, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) sum += i;
  });
  CHECK(sum == 4950);
}
