// The load monitor RAMSIS and its baselines share (paper sec. 6): the arrival rate as a moving
// average over the last `window` (500 ms in the paper), and the rule that turns an estimate into
// one of the pre-computed loads of a policy grid.
#pragma once

#include <cstddef>
#include <deque>
#include <span>

#include "servelab/core/time.hpp"

namespace servelab::ramsis {

inline constexpr Nanos kDefaultLoadWindow = 500 * kNanosPerMilli;

class LoadMonitor {
 public:
  explicit LoadMonitor(Nanos window = kDefaultLoadWindow);  // window > 0, else ValueError

  // Forgets everything; `now` is when observation starts (the run's start).
  void reset(Nanos now);
  // One arrival at time t (non-decreasing across calls).
  void record(Nanos t);
  // Arrivals per second over (now - window, now]. Before a whole window has passed since reset(),
  // the count is divided by the time observed so far, so the first arrivals read as a high load
  // (the conservative side: the policy of the largest load) rather than as almost none.
  double rate_qps(Nanos now);
  Nanos window() const { return window_; }

 private:
  void expire(Nanos now);
  Nanos window_;
  Nanos start_ = 0;
  std::deque<Nanos> times_;  // arrivals inside the window, oldest first
};

// The grid entry a load estimate selects: the smallest load >= rate (the lowest-load policy that
// meets it, paper sec. 3.2.2), or the largest one when the rate exceeds them all. `loads` must be
// non-empty and ascending.
std::size_t grid_index(std::span<const double> loads, double rate);

// ValueError naming `field` unless `loads` is non-empty, finite, positive and strictly ascending.
void validate_load_grid(std::span<const double> loads, const char* field = "loads");

}  // namespace servelab::ramsis
