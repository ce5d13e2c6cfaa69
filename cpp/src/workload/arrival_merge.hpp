// Merges the arrivals of applications that each have their own arrival process into one stream
// ordered by time (not installed: the workload's query generator uses it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "servelab/core/time.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::workload::detail {

class ArrivalMerge {
 public:
  // One cursor per application, application i drawing from Rng(seed, app_arrival_stream(i)).
  // An application's first arrival at or after `horizon` ends it: its later ones come later still.
  ArrivalMerge(const std::vector<Application>& apps, std::uint64_t seed, Nanos horizon);

  // The earliest pending arrival and its application (ties: the lower index first), or false once
  // every application has ended.
  bool next(Nanos& time, std::size_t& app);

 private:
  // Pulls application `app`'s next arrival into the heap, unless its process has ended.
  void pull(std::size_t app);

  std::vector<std::unique_ptr<ArrivalCursor>> cursors_;
  // A min-heap of (time, application): comparing pairs orders ties by application index.
  std::vector<std::pair<Nanos, std::size_t>> heap_;
  Nanos horizon_;
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t returned_ = kNone;  // the application of the arrival next() returned last
};

}  // namespace servelab::workload::detail
