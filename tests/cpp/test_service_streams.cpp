// The simulator's per-worker service streams, read ahead in blocks: the same uniforms, in the same
// order per worker, as drawing one at a time from service_stream(seed, worker).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "servelab/cluster/service_streams.hpp"
#include "servelab/cluster/service_times.hpp"

namespace servelab::cluster {
namespace {

TEST(ServiceStreams, GiveEachWorkersOwnStreamInOrderHoweverTheDrawsInterleave) {
  constexpr std::uint64_t kSeed = 42;
  constexpr std::int32_t kWorkers = 50;
  // Streams are made when a worker first draws, several at a time: first draws by the highest
  // worker (every lower stream made with it) or in increasing order (a few made past the worker),
  // with room reserved for every worker or for fewer (the vector then grows).
  for (const bool highest_first : {true, false}) {
    for (const std::size_t room : {std::size_t{kWorkers}, std::size_t{3}}) {
      SCOPED_TRACE(testing::Message() << "highest first " << highest_first << ", room " << room);
      ServiceStreams streams(kSeed, room);
      std::vector<Rng> one_at_a_time;
      for (std::int32_t w = 0; w < kWorkers; ++w) one_at_a_time.push_back(service_stream(kSeed, w));
      if (highest_first) {
        ASSERT_EQ(streams.next_uniform(kWorkers - 1), one_at_a_time[kWorkers - 1].uniform());
      } else {
        for (std::int32_t w = 0; w < kWorkers; ++w) {
          ASSERT_EQ(streams.next_uniform(w), one_at_a_time[static_cast<std::size_t>(w)].uniform()) << w;
        }
      }
      std::mt19937 order(7);
      std::uniform_int_distribution<std::int32_t> pick(0, kWorkers - 1);
      for (int i = 0; i < 20'000; ++i) {
        const std::int32_t w = pick(order);
        if (i % 3 == 0) streams.prefetch(w);  // a hint: changes nothing
        ASSERT_EQ(streams.next_uniform(w), one_at_a_time[static_cast<std::size_t>(w)].uniform()) << "draw " << i;
      }
    }
  }
}

TEST(ServiceStreams, AWorkersStreamFromItsParentIsTheStreamFromTheSeed) {
  const Rng parent = service_parent_stream(9);
  for (std::int32_t w : {0, 1, 17, 9999}) {
    Rng a = service_stream(parent, w), b = service_stream(9, w);
    EXPECT_EQ(a.identity(), b.identity());
    EXPECT_EQ(a.uniform(), b.uniform());
  }
}

TEST(ServiceStreams, APrefetchOfAWorkerWithoutAStreamYetIsHarmless) {
  ServiceStreams streams(1, 0);
  streams.prefetch(1'000'000);
  EXPECT_EQ(streams.next_uniform(0), service_stream(1, 0).uniform());
}

}  // namespace
}  // namespace servelab::cluster
