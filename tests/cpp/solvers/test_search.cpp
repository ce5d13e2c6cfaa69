// Search over integer configuration spaces: every method against exhaustive enumeration on
// synthetic monotone objectives, the pruning rules, caching, determinism and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>

#include "servelab/core/errors.hpp"
#include "servelab/solvers/search/search.hpp"

namespace ss = servelab::solvers::search;
using ss::Config;

namespace {

// Kairos-like: 1 GPU type and 2 CPU types under a $2.5/h budget, at least one GPU.
ss::SearchSpace kairos_space() {
  return ss::SearchSpace({{"gpu", 0, 5, 0.526}, {"cpu_a", 0, 8, 0.252}, {"cpu_b", 0, 10, 0.168}}, 2.5, {{0, 1}});
}

// Monotone non-decreasing and concave-ish: the best mix is interior, not a corner.
double throughput(const Config& x) {
  const double gpu = 100.0 * std::sqrt(static_cast<double>(x[0]));
  const double cpu = 38.0 * std::pow(static_cast<double>(x[1]), 0.8) + 21.0 * std::pow(static_cast<double>(x[2]), 0.75);
  return gpu + std::min(cpu, 1.5 * gpu);
}

// Ribbon-like: QoS satisfaction (%) saturating in the capacity of the mix; no budget, and the
// empty configuration excluded.
ss::SearchSpace ribbon_space() {
  return ss::SearchSpace({{"c5a", 0, 8, 0.616}, {"m5", 0, 11, 0.384}, {"t3", 0, 9, 0.3328}}, std::nullopt, {}, 1);
}

double qos_percent(const Config& x) {
  const double capacity = 1.0 * x[0] + 0.55 * x[1] + 0.5 * x[2] - 0.02 * x[1] * x[2];
  return 100.0 * (1.0 - std::exp(-capacity / 1.4));
}

ss::Problem kairos_problem(bool with_bound, double slack = 1.15) {
  ss::UpperBound bound;
  if (with_bound) bound = [slack](const Config& x) { return slack * throughput(x) + 3.0; };
  return ss::maximize_problem(kairos_space(), throughput, bound);
}

ss::Problem ribbon_problem() { return ss::minimize_cost_problem(ribbon_space(), qos_percent, 99.0); }

const std::vector<std::string> kAllButKairosPlus = {"exhaustive", "random",    "genetic",
                                                    "bayesian",   "annealing", "hill_climbing"};

// An independent replay of the pruning rules: no evaluated config may have been prunable by the
// evaluations before it.
void expect_never_evaluated_pruned(const ss::Problem& problem, const ss::SearchResult& result, bool bound_pruning) {
  if (result.method == "exhaustive(pruning=false)") return;  // the reference evaluates everything
  std::vector<ss::Evaluation> before;
  double best_value = -INFINITY;
  for (const auto& e : result.trace) {
    for (const auto& b : before) {
      bool dominated = true;
      for (std::size_t d = 0; d < e.config.size(); ++d) dominated = dominated && e.config[d] <= b.config[d];
      if (problem.goal == ss::Goal::MaximizeValue || !b.feasible) {
        EXPECT_FALSE(dominated) << result.method << ": evaluated " << ss::SearchSpace::format(e.config)
                                << " although it is a sub-configuration of " << ss::SearchSpace::format(b.config);
      } else {
        EXPECT_LE(e.cost, b.cost + 1e-9) << result.method << ": evaluated " << ss::SearchSpace::format(e.config)
                                         << " although it costs more than feasible "
                                         << ss::SearchSpace::format(b.config);
      }
    }
    if (bound_pruning) {
      EXPECT_GT(problem.upper_bound(e.config), best_value) << result.method << ": evaluated a config pruned by bound";
    }
    best_value = std::max(best_value, e.value);
    before.push_back(e);
  }
}

void expect_consistent(const ss::Problem& problem, const ss::SearchResult& result) {
  std::set<Config> seen;
  for (std::size_t k = 0; k < result.trace.size(); ++k) {
    const auto& e = result.trace[k];
    EXPECT_EQ(e.index, static_cast<std::int64_t>(k) + 1);
    EXPECT_TRUE(seen.insert(e.config).second)
        << result.method << " evaluated " << ss::SearchSpace::format(e.config) << " twice";
    EXPECT_TRUE(problem.space.feasible(e.config));
    EXPECT_DOUBLE_EQ(e.value, problem.objective(e.config));
  }
  EXPECT_EQ(result.evaluations() + result.pruned + result.unexplored, result.space_points) << result.method;
  if (result.found) {
    ASSERT_GE(result.best_index, 1);
    EXPECT_EQ(result.trace[static_cast<std::size_t>(result.best_index - 1)].config, result.best_config);
  }
}

std::vector<Config> trace_configs(const ss::SearchResult& r) {
  std::vector<Config> out;
  for (const auto& e : r.trace) out.push_back(e.config);
  return out;
}

}  // namespace

TEST(SearchSpace, EnumeratesFeasiblePointsInLexicographicOrder) {
  const auto space = kairos_space();
  const auto points = space.enumerate();
  std::int64_t brute = 0;
  for (std::int64_t a = 0; a <= 5; ++a) {
    for (std::int64_t b = 0; b <= 8; ++b) {
      for (std::int64_t c = 0; c <= 10; ++c) {
        if (a >= 1 && 0.526 * a + 0.252 * b + 0.168 * c <= 2.5 + 1e-9) ++brute;
      }
    }
  }
  EXPECT_EQ(static_cast<std::int64_t>(points.size()), brute);
  EXPECT_TRUE(std::is_sorted(points.begin(), points.end()));
  EXPECT_EQ(space.box_points(), 6 * 9 * 11);
  EXPECT_EQ(ribbon_space().enumerate().size(), 9u * 12u * 10u - 1u);  // all but the empty config
}

TEST(SearchSpace, ExactBudgetIsFeasibleDespiteFloatPrices) {
  const ss::SearchSpace space({{"a", 0, 10, 0.1}}, 0.3);
  EXPECT_TRUE(space.feasible({3}));  // 0.1 * 3 = 0.30000000000000004
  EXPECT_FALSE(space.feasible({4}));
}

TEST(SearchSpace, RejectsBadInputNamingTheField) {
  const auto message = [](auto&& build) {
    try {
      build();
    } catch (const servelab::ValueError& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(message([] { ss::SearchSpace({}); }).find("dimensions is empty"), std::string::npos);
  EXPECT_NE(message([] { ss::SearchSpace({{"a", 3, 2, 1.0}}); }).find("upper=2 is below lower=3"), std::string::npos);
  EXPECT_NE(message([] { ss::SearchSpace({{"a", 0, 2, -1.0}}); }).find("unit_cost=-1"), std::string::npos);
  EXPECT_NE(message([] { ss::SearchSpace({{"a", 0, 2, 1.0}, {"a", 0, 2, 1.0}}); }).find("repeated"), std::string::npos);
  EXPECT_NE(message([] {
              ss::SearchSpace({{"a", 1, 2, 1.0}}, 0.5);
            }).find("budget=0.5 is below the cheapest"),
            std::string::npos);
  EXPECT_NE(message([] {
              ss::SearchSpace({{"a", 0, 2, 1.0}}, std::nullopt, {{3, 1}});
            }).find("at_least[0].dimension=3"),
            std::string::npos);
  EXPECT_NE(message([] {
              ss::SearchSpace({{"a", 0, 2, 1.0}}, std::nullopt, {{0, 5}});
            }).find("count=5"),
            std::string::npos);
  EXPECT_NE(message([] { ss::SearchSpace({{"a", 0, 2, 1.0}}, std::nan("")); }).find("budget=nan"), std::string::npos);
  EXPECT_NE(message([] {
              ss::SearchSpace({{"a", 0, 100000, 1.0}, {"b", 0, 100000, 1.0}});
            }).find("more than"),
            std::string::npos);
  const ss::SearchSpace space({{"a", 0, 2, 1.0}});
  EXPECT_NE(message([&] { space.check_in_box({3}, "start"); }).find("start=(3)"), std::string::npos);
}

TEST(Search, EveryMethodFindsTheExhaustiveOptimumWhenMaximising) {
  const auto problem = kairos_problem(false);
  const auto reference = ss::run_search(problem, "exhaustive");
  ASSERT_TRUE(reference.found);
  EXPECT_EQ(reference.evaluations(), reference.space_points);
  for (const auto& method : kAllButKairosPlus) {
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
      const auto result = ss::run_search(problem, method, {.seed = seed});
      expect_consistent(problem, result);
      expect_never_evaluated_pruned(problem, result, false);
      EXPECT_EQ(result.best_config, reference.best_config) << method << " seed " << seed;
      EXPECT_EQ(result.stop_reason, "exhausted") << method;
      const auto reached = ss::evaluations_to_reach(result, reference.best_value);
      EXPECT_GE(reached, 1);
      EXPECT_EQ(reached, result.best_index);
      if (method != "exhaustive") EXPECT_LT(result.evaluations(), reference.evaluations()) << method;
    }
  }
}

TEST(Search, EveryMethodFindsTheCheapestConfigMeetingTheTarget) {
  const auto problem = ribbon_problem();
  const auto reference = ss::run_search(problem, "exhaustive");
  ASSERT_TRUE(reference.found);
  for (const auto& method : kAllButKairosPlus) {
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
      const auto result = ss::run_search(problem, method, {.seed = seed});
      expect_consistent(problem, result);
      expect_never_evaluated_pruned(problem, result, false);
      ASSERT_TRUE(result.found) << method;
      EXPECT_NEAR(result.best_cost, reference.best_cost, 1e-9) << method << " seed " << seed;
      EXPECT_GE(result.trace[static_cast<std::size_t>(result.best_index - 1)].value, 99.0);
      EXPECT_EQ(ss::evaluations_to_reach(result, reference.best_cost), result.best_index);
    }
  }
}

TEST(Search, BoundPruningHelpsEveryMethodAndNeverSkipsTheOptimum) {
  const auto problem = kairos_problem(true);
  const auto reference = ss::run_search(problem, "exhaustive");
  for (const auto& method : kAllButKairosPlus) {
    const auto result = ss::run_search(problem, method, {.seed = 7});
    expect_never_evaluated_pruned(problem, result, method != "exhaustive");
    EXPECT_EQ(result.best_config, reference.best_config) << method;
  }
}

TEST(KairosPlus, EvaluatesInBoundOrderAndStopsEarly) {
  const auto problem = kairos_problem(true);
  const auto reference = ss::run_search(problem, "exhaustive");
  const auto result = ss::run_search(problem, "kairos_plus");
  expect_consistent(problem, result);
  expect_never_evaluated_pruned(problem, result, true);
  EXPECT_EQ(result.best_config, reference.best_config);
  for (std::size_t k = 1; k < result.trace.size(); ++k) {
    EXPECT_GE(problem.upper_bound(result.trace[k - 1].config), problem.upper_bound(result.trace[k].config));
  }
  EXPECT_LT(result.evaluations() * 5, result.space_points);
  EXPECT_EQ(result.unexplored, 0);
}

TEST(KairosPlus, ATightBoundNeedsOneEvaluation) {
  auto problem = ss::maximize_problem(kairos_space(), throughput, throughput);
  const auto result = ss::run_search(problem, "kairos_plus");
  EXPECT_EQ(result.evaluations(), 1);
  EXPECT_EQ(result.best_config, ss::run_search(problem, "exhaustive").best_config);
}

TEST(KairosPlus, RefusesProblemsWithoutABound) {
  EXPECT_THROW(ss::run_search(kairos_problem(false), "kairos_plus"), servelab::ValueError);
  EXPECT_THROW(ss::run_search(ribbon_problem(), "kairos_plus"), servelab::ValueError);
}

TEST(Search, SameSeedSameTraceDifferentSeedDifferentTrace) {
  for (const auto& method : kAllButKairosPlus) {
    if (method == "exhaustive") continue;
    const auto a = ss::run_search(ribbon_problem(), method, {.seed = 3});
    const auto b = ss::run_search(ribbon_problem(), method, {.seed = 3});
    const auto c = ss::run_search(ribbon_problem(), method, {.seed = 4});
    EXPECT_EQ(trace_configs(a), trace_configs(b)) << method;
    EXPECT_NE(trace_configs(a), trace_configs(c)) << method;
  }
}

TEST(Search, EachDistinctConfigIsEvaluatedOnce) {
  std::map<Config, int> calls;
  auto problem = ss::minimize_cost_problem(
      ribbon_space(),
      [&](const Config& x) {
        ++calls[x];
        return qos_percent(x);
      },
      99.0);
  for (const auto& method : kAllButKairosPlus) {
    calls.clear();
    const auto result = ss::run_search(problem, method, {.seed = 1});
    EXPECT_EQ(calls.size(), static_cast<std::size_t>(result.evaluations())) << method;
    for (const auto& [config, n] : calls) EXPECT_EQ(n, 1) << method << " " << ss::SearchSpace::format(config);
  }
}

TEST(Search, StopsAtMaxEvaluationsAndAtTheRequestedQuality) {
  const auto problem = ribbon_problem();
  const auto reference = ss::run_search(problem, "exhaustive");
  for (const auto& method : kAllButKairosPlus) {
    const auto limited = ss::run_search(problem, method, {.seed = 0, .max_evaluations = 5});
    EXPECT_EQ(limited.evaluations(), 5) << method;
    EXPECT_EQ(limited.stop_reason, "max_evaluations") << method;
    const auto early = ss::run_search(problem, method, {.seed = 0, .stop_at = reference.best_cost});
    EXPECT_EQ(early.stop_reason, "stop_at") << method;
    EXPECT_EQ(early.best_index, early.evaluations()) << method;
    EXPECT_NEAR(early.best_cost, reference.best_cost, 1e-9);
  }
}

TEST(Search, ReportsNoFeasibleConfiguration) {
  // The budget allows one unit but at least two are required in total.
  const ss::SearchSpace space({{"a", 0, 3, 1.0}, {"b", 0, 3, 1.0}}, 1.0, {}, 2);
  const auto result = ss::run_search(ss::maximize_problem(space, [](const Config&) { return 1.0; }), "random");
  EXPECT_FALSE(result.found);
  EXPECT_EQ(result.stop_reason, "empty");
  EXPECT_EQ(result.evaluations(), 0);
  // Nothing meets an impossible target: every method ends without a feasible config.
  for (const auto& method : kAllButKairosPlus) {
    const auto none = ss::run_search(ss::minimize_cost_problem(ribbon_space(), qos_percent, 101.0), method);
    EXPECT_FALSE(none.found) << method;
    EXPECT_EQ(none.stop_reason, "exhausted") << method;
  }
}

TEST(Search, ObjectiveErrorsPropagateAndBadValuesAreRejected) {
  auto throwing = ss::maximize_problem(kairos_space(), [](const Config& x) -> double {
    if (x[1] == 2) throw std::domain_error("boom");
    return throughput(x);
  });
  EXPECT_THROW(ss::run_search(throwing, "exhaustive"), std::domain_error);
  auto nan = ss::maximize_problem(kairos_space(), [](const Config&) { return std::nan(""); });
  EXPECT_THROW(ss::run_search(nan, "random"), servelab::ValueError);
  EXPECT_THROW(ss::run_search(kairos_problem(false), "no_such_method"), servelab::KeyError);
  EXPECT_THROW(ss::run_search(kairos_problem(false), "genetic(population=1)"), servelab::ValueError);
  EXPECT_THROW(ss::run_search(kairos_problem(false), "bayesian", {}, {{"kernel", std::string("cubic")}}),
               servelab::ValueError);
  EXPECT_THROW(ss::run_search(kairos_problem(false), "random", {.max_evaluations = -1}), servelab::ValueError);
}

TEST(Search, RegistryListsEveryMethodWithItsParameters) {
  const auto names = ss::search_methods();
  for (const auto& m : {"kairos_plus", "exhaustive", "random", "genetic", "bayesian", "annealing", "hill_climbing"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), m), names.end()) << m;
  }
  const auto result = ss::run_search(ribbon_problem(), "bayesian(xi=0.05)", {.max_evaluations = 3});
  EXPECT_EQ(result.method.rfind("bayesian(xi=0.05", 0), 0u) << result.method;
}

TEST(Search, StrictDimensionsPruneOnlyConfigsWithFewerBaseUnits) {
  // Nothing meets the target, so each evaluation prunes what it dominates. Largest first: (5, 5)
  // alone prunes everything under plain dominance, but with the base dimension strict it leaves
  // every config with five base units.
  const ss::SearchSpace space({{"base", 0, 5, 1.0}, {"aux", 0, 5, 0.3}}, std::nullopt, {}, 1);
  auto problem = ss::minimize_cost_problem(
      space, [](const Config&) { return 0.0; }, 1.0);
  EXPECT_EQ(ss::run_search(problem, "exhaustive(pruning=true)").evaluations(), 1);
  problem.strict_dimensions = {0};
  const auto strict = ss::run_search(problem, "exhaustive(pruning=true)");
  EXPECT_EQ(strict.evaluations(), 6);
  for (const auto& e : strict.trace) EXPECT_EQ(e.config[0], 5);
  problem.strict_dimensions = {2};
  EXPECT_THROW(ss::run_search(problem, "random"), servelab::ValueError);
}
