// A few threads that run the same job over a static partition, again and again (one call per
// sweep), so a solve pays for starting threads once, not every sweep. The calling thread is
// member 0: it alone may call core::check_interrupt() between runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <span>
#include <thread>
#include <vector>

namespace servelab::solvers::mdp::detail {

// How many threads a job of `work` units (transitions touched per sweep) should use: `requested`
// when > 0 (at most `items`, the number of things to split), else enough that each has a
// worthwhile share, within the hardware's threads.
int choose_threads(int requested, std::int64_t work, std::int64_t items);

// Splits items [0, n) into `parts` contiguous ranges of about equal weight, where
// weight_end[i] is the total weight of items [0, i] exclusive-prefix style: weight_end has
// n + 1 entries, weight_end[0] = 0, non-decreasing. Returns parts + 1 boundaries.
std::vector<std::int32_t> balanced_ranges(std::span<const std::int64_t> weight_end, int parts);

class Team {
 public:
  explicit Team(int size);
  ~Team();
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  int size() const { return size_; }
  // Calls job(member) for every member in [0, size) at once and returns when all are done. An
  // exception from a member is rethrown here (the lowest member's, if several).
  void run(const std::function<void(int)>& job);

 private:
  void work(int member);

  int size_;
  std::vector<std::thread> threads_;
  std::vector<std::exception_ptr> errors_;
  const std::function<void(int)>* job_ = nullptr;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> remaining_{0};
  std::atomic<bool> stopping_{false};
};

}  // namespace servelab::solvers::mdp::detail
