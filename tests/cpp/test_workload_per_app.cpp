// Workloads whose applications each carry their own arrival process, and the golden hashes that
// pin the single-process workload's queries (recorded before per-application processes existed).
// Statistical checks use fixed seeds, so they are deterministic.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/sizes.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::workload {
namespace {

// FNV-1a over every field of every query, so any change to one query changes the hash.
std::uint64_t hash_queries(const std::vector<Query>& qs) {
  std::uint64_t h = 1469598103934665603ULL;
  const auto mix = [&h](const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ULL;
  };
  for (const Query& q : qs) {
    mix(&q.id, sizeof q.id);
    mix(&q.app, sizeof q.app);
    mix(&q.size, sizeof q.size);
    mix(&q.arrival, sizeof q.arrival);
    mix(&q.deadline, sizeof q.deadline);
    mix(&q.accuracy_floor, sizeof q.accuracy_floor);
  }
  return h;
}

std::vector<Query> drain_one_by_one(QueryStream& s) {
  std::vector<Query> out;
  while (auto q = s.next()) out.push_back(*q);
  return out;
}

std::vector<Query> drain_in_blocks(QueryStream& s, std::size_t block) {
  std::vector<Query> out;
  std::vector<Query> buffer(block);
  while (const std::size_t n = s.next_block(buffer.data(), block))
    out.insert(out.end(), buffer.begin(), buffer.begin() + n);
  return out;
}

template <typename E>
void expect_error(const std::function<void()>& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one mentioning '" << *parts.begin() << "'";
  } catch (const E& e) {
    for (const auto& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

Application app(std::string name, double slo_s, double share = 1.0, SizePtr sizes = nullptr, double floor = 0) {
  return {std::move(name), share, seconds_to_nanos(slo_s), std::move(sizes), floor};
}

Application app_with(std::string name, double slo_s, std::shared_ptr<const ArrivalProcess> arrivals,
                     SizePtr sizes = nullptr) {
  Application a = app(std::move(name), slo_s, 1.0, std::move(sizes));
  a.arrivals = std::move(arrivals);
  return a;
}

std::shared_ptr<const ArrivalProcess> replay(std::vector<double> times_s) { return std::make_shared<Replay>(times_s); }

// What application i's process gives alone under its stream: the times a per-app workload must use.
std::vector<Nanos> alone(const ArrivalProcess& p, std::uint64_t seed, std::size_t i, Nanos horizon) {
  auto cursor = p.start(Rng(seed, app_arrival_stream(i)));
  std::vector<Nanos> out;
  while (auto t = cursor->next()) {
    if (*t >= horizon) break;
    out.push_back(*t);
  }
  return out;
}

std::vector<Nanos> arrivals_of(const std::vector<Query>& qs, std::int32_t a) {
  std::vector<Nanos> out;
  for (const Query& q : qs) {
    if (q.app == a) out.push_back(q.arrival);
  }
  return out;
}

// --- the single-process workload is unchanged ---

std::vector<Workload> single_process_workloads() {
  const std::vector<double> times{0.25, 0.5, 0.5, 1.0, 3.0};
  return {
      Workload(std::make_shared<Poisson>(100.0),
               {app("a", 0.35, 1, kairos_sizes()), app("b", 0.1, 0.5, std::make_shared<UniformSize>(1, 64), 0.7),
                app("c", 0.2, 2)},
               5000),
      Workload(std::make_shared<Gamma>(500.0, 2.0), {app("only", 0.05, 1, std::make_shared<LognormalSize>(3, 1))},
               kUnlimitedCount, seconds_to_nanos(4.0)),
      Workload(std::make_shared<PiecewiseRate>(1.0, std::vector<double>{50, 0, 200}), {app("x", 0.1), app("y", 0.3, 3)},
               1000),
      Workload(std::make_shared<Replay>(times), {app("p", 1), app("q", 2)}, 100),
  };
}

TEST(SingleProcessWorkload, QueriesAreBitIdenticalToTheRecordedOnes) {
  // {workload, seed, hash}: recorded with the code before per-application arrivals were added.
  struct Golden {
    std::size_t workload;
    std::uint64_t seed, hash;
  };
  const Golden golden[] = {
      {0, 0, 10037543155771809560ULL}, {0, 1, 7461755467219273648ULL},  {0, 2024, 4658661534857840104ULL},
      {1, 0, 5279420167033472114ULL},  {1, 1, 2087265358899167380ULL},  {1, 2024, 2610071217150461498ULL},
      {2, 0, 7115644440339613734ULL},  {2, 1, 14086656169082384458ULL}, {2, 2024, 399687172481655084ULL},
      {3, 0, 14344767654870867727ULL}, {3, 1, 12194604419174169888ULL}, {3, 2024, 12194604419174169888ULL},
  };
  const auto workloads = single_process_workloads();
  for (const Golden& g : golden) {
    const Workload& w = workloads[g.workload];
    EXPECT_FALSE(w.per_app_arrivals());
    EXPECT_EQ(hash_queries(w.generate(g.seed)), g.hash) << g.workload << " seed " << g.seed;
    EXPECT_EQ(hash_queries(drain_one_by_one(*w.start(g.seed))), g.hash) << g.workload << " seed " << g.seed;
    for (const std::size_t block : {1u, 7u, 128u, 300u}) {
      EXPECT_EQ(hash_queries(drain_in_blocks(*w.start(g.seed), block)), g.hash)
          << g.workload << " seed " << g.seed << " block " << block;
    }
  }
}

// --- per-application arrivals ---

Workload two_rates(std::int64_t count = kUnlimitedCount, Nanos horizon = seconds_to_nanos(20.0)) {
  return Workload(nullptr,
                  {app_with("slow", 0.1, std::make_shared<Poisson>(50.0), std::make_shared<UniformSize>(1, 32)),
                   app_with("fast", 0.3, std::make_shared<Gamma>(200.0, 2.0), kairos_sizes())},
                  count, horizon);
}

TEST(PerAppWorkload, MergesByTimeAndEachAppArrivesAsItsProcessAlone) {
  const Workload w = two_rates();
  ASSERT_TRUE(w.per_app_arrivals());
  const auto qs = w.generate(5);
  for (std::size_t i = 0; i < qs.size(); ++i) {
    ASSERT_EQ(qs[i].id, static_cast<QueryId>(i));
    if (i) {
      ASSERT_GE(qs[i].arrival, qs[i - 1].arrival);
    }
    ASSERT_EQ(qs[i].deadline, qs[i].arrival + w.apps()[qs[i].app].slo);
  }
  for (std::int32_t a = 0; a < 2; ++a) {
    EXPECT_EQ(arrivals_of(qs, a), alone(*w.apps()[a].arrivals, 5, a, w.horizon())) << a;
  }
  // 20 s at 50 and 200 queries/s: 1000 and 4000 expected (Poisson sd 32; gamma cv 2 about 2x that).
  EXPECT_NEAR(static_cast<double>(arrivals_of(qs, 0).size()), 1000, 130);
  EXPECT_NEAR(static_cast<double>(arrivals_of(qs, 1).size()), 4000, 520);
}

TEST(PerAppWorkload, TiesGoToTheLowerApplicationIndex) {
  const Workload w(nullptr,
                   {app_with("a", 1, replay({0.5, 1.0, 1.0})), app_with("b", 1, replay({0.25, 1.0, 2.0})),
                    app_with("c", 1, replay({1.0}))},
                   100);
  std::vector<std::pair<double, std::int32_t>> got;
  for (const Query& q : w.generate(3)) got.emplace_back(nanos_to_seconds(q.arrival), q.app);
  const std::vector<std::pair<double, std::int32_t>> want{{0.25, 1}, {0.5, 0}, {1.0, 0}, {1.0, 0},
                                                          {1.0, 1},  {1.0, 2}, {2.0, 1}};
  EXPECT_EQ(got, want);
}

TEST(PerAppWorkload, SameSeedSameQueriesInEveryForm) {
  const Workload w = two_rates(3000);
  const auto bulk = w.generate(11);
  ASSERT_EQ(bulk.size(), 3000u);
  EXPECT_EQ(hash_queries(w.generate(11)), hash_queries(bulk));
  EXPECT_EQ(hash_queries(drain_one_by_one(*w.start(11))), hash_queries(bulk));
  for (const std::size_t block : {1u, 5u, 4096u}) {
    EXPECT_EQ(hash_queries(drain_in_blocks(*w.start(11), block)), hash_queries(bulk)) << block;
  }
  EXPECT_NE(hash_queries(w.generate(12)), hash_queries(bulk));
  const auto cols = w.generate_columns(11);
  ASSERT_EQ(cols.id.size(), bulk.size());
  for (std::size_t i = 0; i < bulk.size(); i += 97) {
    EXPECT_EQ(cols.app[i], bulk[i].app);
    EXPECT_EQ(cols.size[i], bulk[i].size);
    EXPECT_DOUBLE_EQ(cols.arrival_s[i], nanos_to_seconds(bulk[i].arrival));
  }
  // The stream keeps what it needs: it outlives the workload it came from.
  auto stream = two_rates(3000).start(11);
  EXPECT_EQ(hash_queries(drain_one_by_one(*stream)), hash_queries(bulk));
}

TEST(PerAppWorkload, SizesComeFromEachApplicationsOwnStream) {
  const Workload w = two_rates(2000);
  const auto qs = w.generate(4);
  for (std::int32_t a = 0; a < 2; ++a) {
    Rng rng(4, str("sizes/", a));
    for (const Query& q : qs) {
      if (q.app == a) {
        ASSERT_EQ(q.size, w.apps()[a].sizes->sample(rng));
      }
    }
  }
}

TEST(PerAppWorkload, CountAndHorizonLimitTheMergedStream) {
  const auto qs = two_rates(500).generate(2);
  ASSERT_EQ(qs.size(), 500u);
  // The first 500 merged queries: exactly the earliest 500 of the two applications alone.
  const auto all = two_rates().generate(2);
  for (std::size_t i = 0; i < qs.size(); ++i) EXPECT_EQ(hash_queries({qs[i]}), hash_queries({all[i]}));
  const Nanos horizon = seconds_to_nanos(3.0);
  const Workload short_run = two_rates(kUnlimitedCount, horizon);
  const auto cut = short_run.generate(2);
  ASSERT_FALSE(cut.empty());
  EXPECT_LT(cut.back().arrival, horizon);
  for (std::int32_t a = 0; a < 2; ++a)
    EXPECT_EQ(arrivals_of(cut, a), alone(*short_run.apps()[a].arrivals, 2, a, horizon));
  // The horizon is exclusive, as for one process.
  const Workload at_one(nullptr, {app_with("a", 1, replay({0.5, 1.0})), app_with("b", 1, replay({1.0, 1.5}))},
                        kUnlimitedCount, seconds_to_nanos(1.0));
  EXPECT_EQ(at_one.generate(0).size(), 1u);
  EXPECT_TRUE(two_rates(0).generate(1).empty());
}

TEST(PerAppWorkload, AFiniteTraceEndsOnlyItsApplication) {
  const Workload w(nullptr,
                   {app_with("trace", 1, replay({0.1, 0.2})), app_with("open", 1, std::make_shared<Poisson>(100.0))},
                   kUnlimitedCount, seconds_to_nanos(2.0));
  const auto qs = w.generate(8);
  EXPECT_EQ(arrivals_of(qs, 0), (std::vector<Nanos>{seconds_to_nanos(0.1), seconds_to_nanos(0.2)}));
  EXPECT_GT(arrivals_of(qs, 1).back(), seconds_to_nanos(1.5));  // 200 expected over 2 s
  // Every application a finite trace: the run ends with the last one.
  const Workload traces(nullptr, {app_with("a", 1, replay({0.1})), app_with("b", 1, replay({0.3, 0.4}))}, 100);
  EXPECT_EQ(traces.generate(0).size(), 3u);
  EXPECT_DOUBLE_EQ(traces.expected_queries(), 3.0);
}

TEST(PerAppWorkload, ExpectedQueriesRatesAndSharesSumTheApplications) {
  const Workload w = two_rates(kUnlimitedCount, seconds_to_nanos(10.0));
  EXPECT_DOUBLE_EQ(w.mean_rate(), 250.0);
  EXPECT_DOUBLE_EQ(w.expected_queries(), 2500.0);
  EXPECT_DOUBLE_EQ(two_rates(100, seconds_to_nanos(10.0)).expected_queries(), 100.0);
  EXPECT_DOUBLE_EQ(w.shares()[0], 0.2);
  EXPECT_DOUBLE_EQ(w.shares()[1], 0.8);
  expect_error<MemoryError>([] { two_rates(kUnlimitedCount, seconds_to_nanos(1e9)).check_memory(100, "the records"); },
                            {"horizon_s=1000000000 at about 250 queries/s", ": lower horizon_s or give a count"});
  expect_error<RuntimeError>([&] { w.arrivals(); }, {"each application has its own"});
  EXPECT_EQ(w.arrivals_ptr(), nullptr);
}

TEST(PerAppWorkload, MixedOrDoubleSpecificationIsRefusedNamingTheApplication) {
  const auto poisson = std::make_shared<Poisson>(10.0);
  expect_error<ValueError>(
      [&] {
        Workload(nullptr, {app_with("a", 1, poisson), app("b", 1)}, 10);
      },
      {"apps[1] ('b'): arrivals=None while apps[0] ('a') has arrivals=poisson(rate=10)",
       "give every application its own arrival process"});
  expect_error<ValueError>(
      [&] {
        Workload(nullptr, {app("a", 1), app_with("b", 1, poisson)}, 10);
      },
      {"apps[0] ('a'): arrivals=None while apps[1] ('b')"});
  expect_error<ValueError>(
      [&] {
        Workload(std::make_shared<Gamma>(5.0, 2.0), {app("a", 1), app_with("b", 1, poisson)}, 10);
      },
      {"apps[1] ('b'): arrivals=poisson(rate=10) given while the workload has arrivals=gamma(rate=5, cv=2)",
       "not both"});
  expect_error<ValueError>([&] { Workload(nullptr, {app("a", 1)}, 10); }, {"arrivals is null"});
}

TEST(PerAppWorkload, DescribeNamesEachApplicationsProcess) {
  const Workload w(nullptr, {app_with("a", 0.1, std::make_shared<Poisson>(50.0)), app_with("b", 0.2, replay({1.0}))},
                   10);
  EXPECT_EQ(w.describe(),
            "workload(apps=[app(name='a', arrivals=poisson(rate=50), slo_s=0.1, sizes=constant(value=1), "
            "accuracy_floor=0), app(name='b', arrivals=replay(n=1, first_s=1, last_s=1), slo_s=0.2, "
            "sizes=constant(value=1), accuracy_floor=0)], count=10)");
}

}  // namespace
}  // namespace servelab::workload
