#include "servelab/systems/ramsis/load_monitor.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "servelab/core/errors.hpp"

namespace servelab::ramsis {

LoadMonitor::LoadMonitor(Nanos window) : window_(window) {
  if (window <= 0) throw ValueError(str("load monitor window=", window, " ns must be positive"));
}

void LoadMonitor::reset(Nanos now) {
  start_ = now;
  times_.clear();
}

void LoadMonitor::record(Nanos t) {
  times_.push_back(t);
  expire(t);
}

void LoadMonitor::expire(Nanos now) {
  const Nanos cutoff = now - window_;
  while (!times_.empty() && times_.front() <= cutoff) times_.pop_front();
}

double LoadMonitor::rate_qps(Nanos now) {
  expire(now);
  const Nanos observed = std::min(window_, now - start_);
  if (observed <= 0) return times_.empty() ? 0.0 : std::numeric_limits<double>::infinity();
  return static_cast<double>(times_.size()) * static_cast<double>(kNanosPerSecond) / static_cast<double>(observed);
}

std::size_t grid_index(std::span<const double> loads, double rate) {
  const auto it = std::lower_bound(loads.begin(), loads.end(), rate);
  if (it == loads.end()) return loads.size() - 1;
  return static_cast<std::size_t>(it - loads.begin());
}

void validate_load_grid(std::span<const double> loads, const char* field) {
  if (loads.empty()) throw ValueError(str(field, " is empty: give at least one load in queries/s"));
  for (std::size_t i = 0; i < loads.size(); ++i) {
    if (!std::isfinite(loads[i]) || loads[i] <= 0) {
      throw ValueError(str(field, "[", i, "]=", loads[i], " must be a positive load in queries/s"));
    }
    if (i > 0 && loads[i] <= loads[i - 1]) {
      throw ValueError(str(field, "[", i, "]=", loads[i], " must be larger than ", field, "[", i - 1,
                           "]=", loads[i - 1], " (ascending loads)"));
    }
  }
}

}  // namespace servelab::ramsis
