#include "team.hpp"

#include <algorithm>
#include <utility>

namespace servelab::solvers::mdp::detail {

namespace {
// Below this many transitions per thread and sweep, waking a thread costs more than it saves
// (a sweep over 100k transitions takes tens of microseconds).
constexpr std::int64_t kWorkPerThread = 100'000;
constexpr int kMaxThreads = 256;
}  // namespace

int choose_threads(int requested, std::int64_t work, std::int64_t items) {
  const std::int64_t cap = std::max<std::int64_t>(1, std::min<std::int64_t>(items, kMaxThreads));
  if (requested > 0) return static_cast<int>(std::min<std::int64_t>(requested, cap));
  const std::int64_t hardware = std::max(1u, std::thread::hardware_concurrency());
  const std::int64_t by_work = std::max<std::int64_t>(1, work / kWorkPerThread);
  return static_cast<int>(std::min({hardware, by_work, cap}));
}

std::vector<std::int32_t> balanced_ranges(std::span<const std::int64_t> weight_end, int parts) {
  const auto n = static_cast<std::int32_t>(weight_end.size() - 1);
  const std::int64_t total = weight_end.back();
  std::vector<std::int32_t> bounds(static_cast<std::size_t>(parts) + 1, n);
  bounds[0] = 0;
  for (int p = 1; p < parts; ++p) {
    // The first item whose start reaches p / parts of the total weight.
    const std::int64_t target = total / parts * p + total % parts * p / parts;
    const auto it = std::lower_bound(weight_end.begin(), weight_end.end() - 1, target);
    bounds[p] = std::max(bounds[p - 1], static_cast<std::int32_t>(it - weight_end.begin()));
  }
  return bounds;
}

Team::Team(int size) : size_(std::max(1, size)), errors_(static_cast<std::size_t>(size_)) {
  threads_.reserve(static_cast<std::size_t>(size_ - 1));
  for (int member = 1; member < size_; ++member) threads_.emplace_back([this, member] { work(member); });
}

Team::~Team() {
  stopping_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& t : threads_) t.join();
}

void Team::run(const std::function<void(int)>& job) {
  if (size_ == 1) {
    job(0);
    return;
  }
  job_ = &job;
  remaining_.store(size_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  try {
    job(0);
  } catch (...) {
    errors_[0] = std::current_exception();
  }
  for (int left = remaining_.load(std::memory_order_acquire); left != 0;
       left = remaining_.load(std::memory_order_acquire)) {
    remaining_.wait(left, std::memory_order_acquire);
  }
  job_ = nullptr;
  for (auto& error : errors_) {
    if (error) {
      auto first = std::exchange(error, nullptr);
      for (auto& other : errors_) other = nullptr;
      std::rethrow_exception(first);
    }
  }
}

void Team::work(int member) {
  std::uint64_t seen = 0;
  for (;;) {
    generation_.wait(seen, std::memory_order_acquire);
    seen = generation_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_relaxed)) return;
    try {
      (*job_)(member);
    } catch (...) {
      errors_[static_cast<std::size_t>(member)] = std::current_exception();
    }
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) remaining_.notify_one();
  }
}

}  // namespace servelab::solvers::mdp::detail
