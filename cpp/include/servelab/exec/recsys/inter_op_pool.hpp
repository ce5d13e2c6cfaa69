// Inter-op parallelism for one forward pass: independent branches of the model (the bottom MLP
// and groups of embedding bags) run side by side on a small team of threads, as TensorFlow's and
// PyTorch's inter-op pools do. Each branch keeps its own intra-op threads (oneDNN's OpenMP team is
// per calling thread), so a batch may use inter x intra threads in all.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace servelab::exec::recsys {

class InterOpPool {
 public:
  // The most threads a pool may have: more is a typo, and each is a real OS thread.
  static constexpr int kMaxThreads = 256;

  // `threads` in 1..kMaxThreads (ValueError otherwise): the calling thread plus threads - 1
  // started here, idle until run() hands them work.
  explicit InterOpPool(int threads);
  ~InterOpPool();
  InterOpPool(const InterOpPool&) = delete;
  InterOpPool& operator=(const InterOpPool&) = delete;

  int threads() const { return static_cast<int>(team_.size()) + 1; }

  // Runs every task once, spread over the team, the caller included; returns when all have
  // finished. The first task (in order) that threw has its exception rethrown here, after the
  // others have finished, so no task outlives the call. One run() at a time per pool.
  void run(const std::vector<std::function<void()>>& tasks);

 private:
  void work();  // takes tasks of the current run until none is left
  void loop();

  std::vector<std::jthread> team_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::vector<std::function<void()>>* tasks_ = nullptr;
  std::vector<std::exception_ptr> errors_;
  std::size_t next_ = 0, finished_ = 0, generation_ = 0;
  bool stopping_ = false;
};

}  // namespace servelab::exec::recsys
