#include "engine/runtime/thread_pool.hpp"

#include <algorithm>
#include <system_error>
#include <utility>

namespace trilemma::engine {
namespace {
constexpr int k_spin_before_yield = 2000;     // a few microseconds of pure spinning
constexpr int k_yield_before_sleep = 20000;   // then yields, then sleep on the condition variable

// Spins, then yields, until done() holds or the budget runs out; returns done().
template <class Done>
bool wait_briefly(Done done, int budget) {
  for (int i = 0; i < budget; ++i) {
    if (done()) return true;
    if (i >= k_spin_before_yield) std::this_thread::yield();
  }
  return done();
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  // A system that will not start more threads (ulimit, memory) leaves a smaller pool, not an
  // abort: work is divided among the threads there are (size()). It refused at its limit, with
  // the last stacks taking what address space was left, so the pool keeps half of what started
  // and leaves the rest to the model's own allocations.
  if (const int started = start_workers(threads); started < threads) {
    stop_workers();
    start_workers(std::max(1, started / 2));
  }
}

int ThreadPool::start_workers(int threads) {
  // Workers start from the current generation: none is pending while the pool is built.
  const std::uint64_t generation = m_generation.load();
  try {
    for (int i = 1; i < threads; ++i) m_workers.emplace_back([this, i, generation] { worker_loop(i, generation); });
  } catch (const std::system_error&) {
  }
  return size();
}

void ThreadPool::stop_workers() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
    m_generation.fetch_add(1);
  }
  m_wake.notify_all();
  for (auto& t : m_workers) t.join();
  m_workers.clear();
  m_stop = false;
}

ThreadPool::~ThreadPool() { stop_workers(); }

// Guided scheduling: each claim takes half of an even share of what remains (at least the
// grain), so the first chunks are long contiguous runs (good for streaming weights from DRAM)
// and the last ones are small (threads finish together).
void ThreadPool::run_chunks(int thread) {
  const std::int64_t parts = 2 * std::int64_t(size());
  std::int64_t begin = m_next.load(std::memory_order_relaxed);
  for (;;) {
    if (begin >= m_n) return;
    const std::int64_t chunk = std::max(m_grain, (m_n - begin) / parts);
    if (!m_next.compare_exchange_weak(begin, begin + chunk, std::memory_order_relaxed)) continue;
    try {
      (*m_fn)(thread, begin, std::min(m_n, begin + chunk));
    } catch (...) {
      std::lock_guard lock(m_error_mutex);
      if (!m_error) m_error = std::current_exception();
      m_next.store(m_n, std::memory_order_relaxed);  // no more chunks for anyone
      return;
    }
    begin = m_next.load(std::memory_order_relaxed);
  }
}

void ThreadPool::worker_loop(int thread, std::uint64_t seen) {
  for (;;) {
    const auto has_job = [&] { return m_generation.load(std::memory_order_acquire) != seen; };
    if (!wait_briefly(has_job, k_spin_before_yield + k_yield_before_sleep)) {
      std::unique_lock lock(m_mutex);
      m_wake.wait(lock, has_job);
    }
    seen = m_generation.load(std::memory_order_acquire);
    if (m_stop) return;
    run_chunks(thread);
    m_active.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::parallel_for(std::int64_t n, std::int64_t grain,
                              const std::function<void(std::int64_t, std::int64_t)>& fn) {
  parallel_for_indexed(n, grain, [&fn](int, std::int64_t begin, std::int64_t end) { fn(begin, end); });
}

void ThreadPool::parallel_for_indexed(std::int64_t n, std::int64_t grain, const IndexedFn& fn) {
  if (n <= 0) return;
  grain = std::max<std::int64_t>(1, grain);
  if (m_workers.empty() || n <= grain) {
    for (std::int64_t b = 0; b < n; b += grain) fn(0, b, std::min(n, b + grain));
    return;
  }
  m_error = nullptr;
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
  run_chunks(0);
  while (!wait_briefly([&] { return m_active.load(std::memory_order_acquire) == 0; }, k_spin_before_yield + k_yield_before_sleep)) {
  }
  if (m_error) std::rethrow_exception(std::exchange(m_error, nullptr));
}

}  // namespace trilemma::engine
