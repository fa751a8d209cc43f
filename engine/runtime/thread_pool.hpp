// A fixed pool of worker threads that run one parallel_for at a time. The calling thread
// works too, so a pool of n threads starts n - 1 workers. Workers spin briefly between jobs
// (decode issues ~5 parallel regions per layer, microseconds apart), yielding the core after
// a short spin so that an oversubscribed machine (another process on a core) does not stall a
// job for a whole scheduler tick, and sleep when no job comes for a while.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
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
  // An exception thrown by fn (std::bad_alloc when memory runs out) stops the handing out of
  // chunks and is rethrown here once every thread has left the job; later ones are dropped.
  // REQUIRES: not called from inside fn.
  void parallel_for(std::int64_t n, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& fn);
  // The same, telling fn which thread runs the chunk: 0 is the caller, workers are 1..size()-1.
  // Per-thread scratch indexed by it is allocated by the caller up front, so workers need not
  // allocate (thread_local storage with a destructor aborts the process when glibc cannot
  // register it, which a worker started near the address-space limit hits).
  using IndexedFn = std::function<void(int thread, std::int64_t, std::int64_t)>;
  void parallel_for_indexed(std::int64_t n, std::int64_t grain, const IndexedFn& fn);

 private:
  // Starts workers 1 .. threads - 1 (fewer when the system refuses one); returns size().
  int start_workers(int threads);
  void stop_workers();  // joins every worker; the pool is then the calling thread alone
  void worker_loop(int thread, std::uint64_t seen_generation);
  void run_chunks(int thread);

  std::vector<std::thread> m_workers;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  // Separate cache lines: the chunk counter is hammered while the caller polls m_active.
  alignas(64) std::atomic<std::uint64_t> m_generation{0};
  alignas(64) std::atomic<int> m_active{0};  // workers still inside the current job
  alignas(64) std::atomic<std::int64_t> m_next{0};
  std::atomic<bool> m_stop{false};
  // The current job.
  const IndexedFn* m_fn = nullptr;
  std::int64_t m_n = 0, m_grain = 1;
  std::mutex m_error_mutex;
  std::exception_ptr m_error;  // the job's first exception
};

}  // namespace trilemma::engine
