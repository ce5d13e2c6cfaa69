// Hera's contention model as the simulator's interference model ("hera_contention",
// systems/hera/interference.hpp): busy co-located instances take the side model's service time
// for their partition, and bad specifications are named.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "servelab/catalogue/catalogue.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/systems/hera/contention.hpp"
#include "sim_fixture.hpp"

namespace servelab::hera {
namespace {

std::shared_ptr<profile::Profile> alone_profile(const std::string& name, const std::string& as) {
  const NodeSpec node = baseline_node();
  auto p = std::make_shared<profile::Profile>();
  p->set_price("core", 0.0);
  const double ms = table1_model(as).alone_latency_ms(node.llc_mb, node.core_bandwidth_gbs);
  p->set_latency("core", name, 1, profile::LatencyDistribution::from_samples({ms / 1e3}));
  return p;
}

// `instances` NCF instances with a core and `ways_each` ways each on Table II's node, all busy
// from t = 0 with one query each.
cluster::RunSpec busy_ncf(int instances, int ways_each, const std::string& interference,
                          const std::string& name = "ncf") {
  auto spec = testing::replay_spec(std::vector<double>(static_cast<std::size_t>(instances), 0.0),
                                   {{"core", instances, {}, {{"cores", 1}, {"llc_ways", ways_each}}, "node"}});
  spec.profile = alone_profile(name, "ncf");
  sched::MachineResources r;
  r.cores = 16;
  r.llc_ways = 11;
  r.memory_bw_gbps = 128;
  spec.machines = {{"node", 1, "", r}};
  spec.interference = catalogue::interference_models().make(interference);
  return spec;
}

TEST(HeraContentionInterference, BusyInstancesTakeTheSideModelsServiceTime) {
  for (const auto& [instances, ways] : std::vector<std::pair<int, int>>{{1, 11}, {3, 3}, {8, 1}, {16, 0}}) {
    const auto result = testing::run(busy_ncf(instances, ways, "hera_contention()"), "fcfs");
    // The side model at saturation: every worker busy, the DRAM drawn by all of them. Ways 0:
    // the model shares the 11 ways nobody holds.
    const Tenant t{&table1_model("ncf"), instances, ways == 0 ? 11 : instances * ways};
    const std::vector<double> flood{1e12};
    const double expected_ms = evaluate_at(baseline_node(), std::span<const Tenant>(&t, 1), flood)[0].service_ms;
    const auto& records = result.queries;
    ASSERT_EQ(records.size_of(), static_cast<std::size_t>(instances));
    for (std::size_t i = 0; i < records.size_of(); ++i)
      EXPECT_NEAR(testing::ms(records.finish[i] - records.start[i]), expected_ms, 2e-6)
          << instances << " instances, " << ways << " ways each";
  }
}

TEST(HeraContentionInterference, BadSpecificationsAreNamed) {
  auto& registry = catalogue::interference_models();
  EXPECT_THROW(registry.make("hera_contention(models='mine=not_a_model')"), KeyError);
  EXPECT_THROW(registry.make("hera_contention(node='xeon-9999')"), KeyError);
  EXPECT_THROW(registry.make("hera_contention(models='a=ncf, a=din')"), ValueError);
  // A profile model that is not a Table I model and is not mapped: named when first met.
  try {
    testing::run(busy_ncf(1, 1, "hera_contention()", "mine"), "fcfs");
    FAIL() << "expected a KeyError";
  } catch (const KeyError& e) {
    EXPECT_NE(std::string(e.what()).find("models='mine=<table1 model>'"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(testing::run(busy_ncf(1, 1, "hera_contention(models='mine=ncf')", "mine"), "fcfs"));
}

}  // namespace
}  // namespace servelab::hera
