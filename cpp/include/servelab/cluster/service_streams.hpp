// The simulator's per-worker service-time streams, each with its next uniforms drawn ahead.
//
// Every worker draws its sampled service times from its own stream (service_stream(seed, w), the
// same in the serving loop), an mt19937_64 of 2.5 KB. Drawing from it touches its position word
// and then its state, two dependent cache misses per worker at 10,000 workers (25 MB of streams).
// Here each worker's next uniforms sit in one 64-byte line of a dense array, so a batch reads one
// line; behind it a reserve of eight more lines is refilled from the stream 56 draws at a time,
// so the stream is read once every 56 batches instead of every 7, and the line in between is one
// miss whose address is known. The uniforms are the stream's own, in its order: the same service
// times as drawing one at a time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "servelab/cluster/service_times.hpp"
#include "servelab/core/rng.hpp"

namespace servelab::cluster {

class ServiceStreams {
 public:
  // `workers`: how many streams to make room for (more may come): each is 2.5 KB, and growing
  // the vector would copy them all (25 MB at 10,000 workers) at every doubling.
  ServiceStreams(std::uint64_t seed, std::size_t workers) : parent_(service_parent_stream(seed)) {
    ahead_.reserve(workers);
    reserve_.reserve(workers * kReserveLines);
    streams_.reserve(workers + kSeededTogether);
  }

  // The next uniform in [0, 1) of worker w's stream (made at its first draw, with every lower
  // worker's not made yet; see add_streams).
  double next_uniform(std::int32_t w) {
    const auto i = static_cast<std::size_t>(w);
    if (i >= ahead_.size()) add_streams(i);
    Ahead& a = ahead_[i];
    if (a.next == kAhead) refill(i);
    // The last uniform of the line: its refill comes at the worker's next batch, long enough
    // from now that the reserve line would be read from memory; fetched now, it waits nearer.
    if (a.next == kAhead - 1 && a.reserve_next < kReserveLines) {
      __builtin_prefetch(&reserve_[i * kReserveLines + a.reserve_next]);
    }
    return a.u[a.next++];
  }
  // Worker w's next uniforms, fetched into the cache ahead of its next batch (a hint only).
  void prefetch(std::int32_t w) const {
    if (static_cast<std::size_t>(w) < ahead_.size()) __builtin_prefetch(&ahead_[static_cast<std::size_t>(w)]);
  }

 private:
  static constexpr std::uint32_t kAhead = 7;  // 7 doubles and the positions fill a cache line
  static constexpr std::uint32_t kReserveLines = 8;
  static constexpr std::size_t kSeededTogether = 16;
  struct alignas(64) Ahead {
    double u[kAhead];
    std::uint32_t next = kAhead;                 // kAhead: empty
    std::uint32_t reserve_next = kReserveLines;  // the reserve's next full line; kReserveLines: empty
  };
  struct alignas(64) ReserveLine {
    double u[kAhead];
  };

  // Streams are made kSeededTogether at a time at least: seeded together, they cost about what
  // one costs alone (a worker past the last one may get a stream it never uses).
  void add_streams(std::size_t up_to) {
    ahead_.resize(up_to + 1);
    reserve_.resize((up_to + 1) * kReserveLines);
    if (streams_.size() > up_to) return;
    const std::size_t count = std::max(up_to + 1 - streams_.size(), kSeededTogether);
    auto more = service_streams(parent_, static_cast<std::int32_t>(streams_.size()), static_cast<std::int32_t>(count));
    streams_.insert(streams_.end(), more.begin(), more.end());
  }
  void refill(std::size_t i) {
    Ahead& a = ahead_[i];
    ReserveLine* const reserve = &reserve_[i * kReserveLines];
    if (a.reserve_next == kReserveLines) {
      Rng& stream = streams_[i];
      for (std::uint32_t line = 0; line < kReserveLines; ++line) {
        for (double& u : reserve[line].u) u = stream.uniform();
      }
      a.reserve_next = 0;
    }
    const ReserveLine& line = reserve[a.reserve_next++];
    std::copy(std::begin(line.u), std::end(line.u), a.u);
    a.next = 0;
  }

  Rng parent_;                        // seeded once, not once per worker (seeding an mt19937_64 costs about 5 us)
  std::vector<Ahead> ahead_;          // by worker: the hot part
  std::vector<ReserveLine> reserve_;  // by worker * kReserveLines: read once per kAhead draws
  std::vector<Rng> streams_;          // by worker: read once per kAhead * kReserveLines draws
};

}  // namespace servelab::cluster
