// A fixed pool of worker threads that run one parallel_for at a time. The calling thread
// works too, so a pool of n threads starts n - 1 workers. Workers spin briefly between jobs
// (decode issues ~5 parallel regions per layer, microseconds apart), yielding the core after
// a short spin so that an oversubscribed machine (another process on a core) does not stall a
// job for a whole scheduler tick, and sleep when no job comes for a while.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace trilemma::engine {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);  // threads <= 0: std::thread::hardware_concurrency()
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return int(m_workers.size()) + 1; }
  // Calls fn(begin, end) over [0, n) on all threads; returns when done. Chunks shrink from
  // about n / (2 * size()) down to `grain` (guided scheduling).
  // REQUIRES: not called from inside fn.
  void parallel_for(std::int64_t n, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& fn);

 private:
  void worker_loop();
  void run_chunks();

  std::vector<std::thread> m_workers;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  // Separate cache lines: the chunk counter is hammered while the caller polls m_active.
  alignas(64) std::atomic<std::uint64_t> m_generation{0};
  alignas(64) std::atomic<int> m_active{0};  // workers still inside the current job
  alignas(64) std::atomic<std::int64_t> m_next{0};
  std::atomic<bool> m_stop{false};
  // The current job.
  const std::function<void(std::int64_t, std::int64_t)>* m_fn = nullptr;
  std::int64_t m_n = 0, m_grain = 1;
};

}  // namespace trilemma::engine
