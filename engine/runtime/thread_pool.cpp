#include "engine/runtime/thread_pool.hpp"

#include <algorithm>

namespace trilemma::engine {
namespace {
constexpr int k_spin_iterations = 200000;  // ~0.1-1 ms of spinning before sleeping
}

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < threads; ++i) m_workers.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
    m_generation.fetch_add(1);
  }
  m_wake.notify_all();
  for (auto& t : m_workers) t.join();
}

void ThreadPool::run_chunks() {
  for (;;) {
    const std::int64_t begin = m_next.fetch_add(m_grain);
    if (begin >= m_n) return;
    (*m_fn)(begin, std::min(m_n, begin + m_grain));
  }
}

void ThreadPool::worker_loop() {
  std::uint64_t seen = 0;
  for (;;) {
    int spins = 0;
    while (m_generation.load(std::memory_order_acquire) == seen) {
      if (++spins < k_spin_iterations) continue;
      std::unique_lock lock(m_mutex);
      m_wake.wait(lock, [&] { return m_generation.load() != seen; });
    }
    seen = m_generation.load(std::memory_order_acquire);
    if (m_stop) return;
    run_chunks();
    m_active.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::parallel_for(std::int64_t n, std::int64_t grain,
                              const std::function<void(std::int64_t, std::int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<std::int64_t>(1, grain);
  if (m_workers.empty() || n <= grain) {
    for (std::int64_t b = 0; b < n; b += grain) fn(b, std::min(n, b + grain));
    return;
  }
  m_fn = &fn;
  m_n = n;
  m_grain = grain;
  m_next.store(0);
  m_active.store(int(m_workers.size()));
  {
    std::lock_guard lock(m_mutex);  // pairs with the sleepers' predicate check
    m_generation.fetch_add(1, std::memory_order_release);
  }
  m_wake.notify_all();
  run_chunks();
  while (m_active.load(std::memory_order_acquire) != 0) {
  }
}

}  // namespace trilemma::engine
