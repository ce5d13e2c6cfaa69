#include "arrival_merge.hpp"

#include <algorithm>
#include <functional>
#include <tuple>
#include <utility>

namespace servelab::workload::detail {

namespace {
constexpr auto kLater = std::greater<std::pair<Nanos, std::size_t>>();  // makes std::*_heap a min-heap
}  // namespace

ArrivalMerge::ArrivalMerge(const std::vector<Application>& apps, std::uint64_t seed, Nanos horizon)
    : horizon_(horizon) {
  cursors_.reserve(apps.size());
  heap_.reserve(apps.size());
  for (std::size_t i = 0; i < apps.size(); ++i) {
    cursors_.push_back(apps[i].arrivals->start(Rng(seed, app_arrival_stream(i))));
    pull(i);
  }
}

void ArrivalMerge::pull(std::size_t app) {
  const auto t = cursors_[app]->next();
  if (!t || *t >= horizon_) {
    cursors_[app].reset();  // ended: a finite trace, or past the horizon
    return;
  }
  heap_.emplace_back(*t, app);
  std::push_heap(heap_.begin(), heap_.end(), kLater);
}

bool ArrivalMerge::next(Nanos& time, std::size_t& app) {
  // The application returned last draws its next arrival only now, when it is needed.
  if (returned_ != kNone) pull(std::exchange(returned_, kNone));
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), kLater);
  std::tie(time, app) = heap_.back();
  heap_.pop_back();
  returned_ = app;
  return true;
}

}  // namespace servelab::workload::detail
