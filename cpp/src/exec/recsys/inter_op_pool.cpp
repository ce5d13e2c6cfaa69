#include "servelab/exec/recsys/inter_op_pool.hpp"

#include "servelab/core/errors.hpp"

namespace servelab::exec::recsys {

InterOpPool::InterOpPool(int threads) {
  if (threads < 1 || threads > kMaxThreads) {
    throw ValueError(str("inter_op_threads=", threads, " must be in 1..", kMaxThreads));
  }
  team_.reserve(static_cast<std::size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) team_.emplace_back([this] { loop(); });
}

InterOpPool::~InterOpPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  team_.clear();  // joins
}

void InterOpPool::run(const std::vector<std::function<void()>>& tasks) {
  if (tasks.empty()) return;
  {
    std::lock_guard lock(mutex_);
    tasks_ = &tasks;
    errors_.assign(tasks.size(), nullptr);
    next_ = finished_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  work();
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return finished_ == tasks.size(); });
  tasks_ = nullptr;
  for (auto& error : errors_) {
    if (error) std::rethrow_exception(error);
  }
}

void InterOpPool::work() {
  std::unique_lock lock(mutex_);
  while (tasks_ != nullptr && next_ < tasks_->size()) {
    const std::size_t i = next_++;
    const auto& task = (*tasks_)[i];
    lock.unlock();
    std::exception_ptr error;
    try {
      task();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    errors_[i] = error;
    if (++finished_ == tasks_->size()) done_.notify_all();
  }
}

void InterOpPool::loop() {
  std::size_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    work();
  }
}

}  // namespace servelab::exec::recsys
