// Hera's node model, contention model, Algorithms 1-3 and PARTIES (servelab::hera).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

#include "servelab/core/errors.hpp"
#include "servelab/systems/hera/node_sim.hpp"
#include "servelab/systems/hera/offline.hpp"

namespace servelab::hera {
namespace {

const Offline& table1() {
  static const Offline off = build_offline(baseline_node(), table1_models());
  return off;
}

int index_of(std::string_view name) {
  const auto& models = table1().models;
  for (std::size_t i = 0; i < models.size(); ++i)
    if (models[i].name == name) return static_cast<int>(i);
  return -1;
}

TEST(HeraNode, BaselineIsValidAndBadFieldsAreNamed) {
  baseline_node().validate();
  NodeSpec node;
  node.llc_ways = 0;
  try {
    node.validate();
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("llc_ways=0"), std::string::npos);
  }
  node = baseline_node();
  node.core_bandwidth_gbs = 500;
  EXPECT_THROW(node.validate(), ValueError);
}

TEST(HeraContention, DlrmBRunsOutOfMemoryBeyondEightWorkers) {
  const auto& b = table1_model("dlrm_b");
  EXPECT_EQ(max_workers(baseline_node(), b), 8);
  EXPECT_EQ(qps_alone(baseline_node(), b, 9, 11), 0.0);
  const std::array<Tenant, 1> nine{Tenant{&b, 9, 11}};
  EXPECT_THROW(evaluate(baseline_node(), nine), ValueError);
}

TEST(HeraContention, MoreWaysNeverHurtAndDlrmDFlattens) {
  for (const auto& m : table1_models()) {
    const auto& t = table1().tables[index_of(m.name)];
    for (int k = 2; k <= t.ways; ++k) EXPECT_GE(t.at(t.max_workers, k), t.at(t.max_workers, k - 1) * (1 - 1e-9));
  }
  const auto& d = table1().tables[index_of("dlrm_d")];
  const double gain_12_16 = d.at(16, 11) / d.at(12, 11) - 1;
  const double gain_4_8 = d.at(8, 11) / d.at(4, 11) - 1;
  EXPECT_LT(gain_12_16, 0.15);  // the paper: +4% from 12 to 16 workers
  EXPECT_GT(gain_4_8, 0.6);
}

TEST(HeraContention, LatencyBoundedQpsRespectsTheSla) {
  EXPECT_EQ(latency_bounded_qps(4, 10.0, 10.0), 0.0);
  const double q = latency_bounded_qps(4, 5.0, 20.0);
  EXPECT_GT(q, 0.0);
  EXPECT_LT(q, 4 / 5.0 * 1000);
  EXPECT_GT(latency_bounded_qps(8, 5.0, 20.0), 2 * q * 0.99);  // pooling: at least linear
}

TEST(HeraScalability, Table1ClassesMatchThePaper) {
  for (std::size_t i = 0; i < table1().models.size(); ++i) {
    const auto& name = table1().models[i].name;
    const bool low = name == "dlrm_b" || name == "dlrm_d";
    EXPECT_EQ(table1().scalability[i].high, !low) << name << " slope " << table1().scalability[i].slope;
  }
  const auto& ncf = table1().tables[index_of("ncf")];
  const int w = find_number_of_workers(ncf, 11, ncf.at(5, 11) * 0.99, 16);
  EXPECT_EQ(w, 5);
  EXPECT_EQ(find_number_of_workers(ncf, 11, 1e12, 16), 16);
}

TEST(HeraAffinity, SymmetricBoundedAndPrefersLowHighPairs) {
  const auto& off = table1();
  const int n = static_cast<int>(off.models.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double a = off.affinity[i * n + j];
      EXPECT_EQ(a, off.affinity[j * n + i]);
      EXPECT_GT(a, 0.0);
      EXPECT_LE(a, 1.0);
    }
  AffinityInput bad;
  bad.qps_by_ways = {0, 1};
  EXPECT_THROW(co_location_affinity(bad, off.affinity_inputs[0], 128), ValueError);
}

TEST(HeraColocation, HighHighLosesAndLowHighGains) {
  const auto& off = table1();
  const int n = static_cast<int>(off.models.size());
  const auto pair = [&](const char* a, const char* b) { return off.pairs[index_of(a) * n + index_of(b)]; };
  EXPECT_LT(pair("ncf", "dien").emu, 0.95);
  EXPECT_GT(pair("dlrm_b", "ncf").emu, 1.2);
  EXPECT_DOUBLE_EQ(pair("ncf", "ncf").emu, 1.0);
  const auto bd = pair("dlrm_b", "dien");  // 8 x 25 GB + 8 x 3.9 GB does not fit: B is trimmed
  EXPECT_TRUE(bd.feasible);
  EXPECT_LE(bd.workers_a * 25.0005 + bd.workers_b * 3.9002, baseline_node().mem_capacity_gb);
  // The cores B's trim frees go to DIEN, which fits (no core idles while memory allows one).
  EXPECT_EQ(bd.workers_a + bd.workers_b, baseline_node().cores);
  EXPECT_GT(bd.emu, pair("dlrm_d", "dien").emu);
}

TEST(HeraCluster, EveryPolicyMeetsTargetsAndHeraNeedsFewest) {
  const auto t = table1().cluster();
  std::vector<double> target;
  for (double q : t.isolated_qps) target.push_back(4 * q);
  std::size_t hera_servers = 0;
  for (auto s : {Selection::Hera, Selection::HeraRandom, Selection::Random, Selection::DeepRecSys}) {
    const auto plan = schedule_cluster(t, target, s, 7, 10000);
    ASSERT_TRUE(plan.feasible) << plan.reason;
    for (int i = 0; i < t.n; ++i) EXPECT_GE(plan.serviced[i], target[i]);
    if (s == Selection::Hera) hera_servers = plan.servers.size();
    if (s == Selection::DeepRecSys) {
      EXPECT_NEAR(plan.emu(), 1.0, 1e-12);
    }
    EXPECT_LE(hera_servers, plan.servers.size()) << selection_name(s);
  }
  const auto a = schedule_cluster(t, target, Selection::Random, 3, 10000);
  const auto b = schedule_cluster(t, target, Selection::Random, 3, 10000);
  ASSERT_EQ(a.servers.size(), b.servers.size());
  for (std::size_t i = 0; i < a.servers.size(); ++i) EXPECT_EQ(a.servers[i].b, b.servers[i].b);
  const auto capped = schedule_cluster(t, target, Selection::Hera, 0, 3);
  EXPECT_FALSE(capped.feasible);
  EXPECT_NE(capped.reason.find("max_servers=3"), std::string::npos);
}

TEST(HeraOffline, AModelThatDoesNotFitIsNamed) {
  auto big = table1_model("dlrm_b");
  big.name = "huge";
  big.memory_gb = 500;
  const std::array<ModelProfile, 1> models{big};
  try {
    build_offline(baseline_node(), models);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("'huge'"), std::string::npos);
  }
}

}  // namespace
}  // namespace servelab::hera

namespace servelab::hera {
namespace {

// Fig. 14's load pattern on DLRM(D) and NCF (fractions of each one's isolated max load).
std::vector<double> fig14_loads(double iso_d, double iso_ncf) {
  std::vector<double> loads;
  for (int k = 0; k < 60; ++k) {
    double d = 0, n = 0;
    if (k < 20) {
      d = 0.2 + 0.5 * k / 19.0;
      n = 0.2 + 0.4 * k / 19.0;
    } else if (k < 40) {
      d = 0.7;
      n = 0.2;
    } else {
      d = 0.1;
      n = 0.6;
    }
    loads.push_back(d * iso_d);
    loads.push_back(n * iso_ncf);
  }
  return loads;
}

TEST(HeraRmu, HoldsTheSlaThroughLoadChangesWherePartiesViolates) {
  const auto& off = table1();
  const auto d = index_of("dlrm_d"), n = index_of("ncf");
  const auto& td = off.tables[d];
  const auto& tn = off.tables[n];
  const auto loads = fig14_loads(td.isolated_qps(), tn.isolated_qps());
  Allocation start;
  start.workers = {8, 8};
  start.ways = {5, 6};
  auto hera = make_controller("hera", baseline_node(), td, off.models[d].sla_ms, tn, off.models[n].sla_ms);
  auto parties = make_controller("parties", baseline_node(), td, off.models[d].sla_ms, tn, off.models[n].sla_ms);
  const auto h = simulate_node(baseline_node(), off.models[d], off.models[n], *hera, loads, 1.0, start);
  const auto p = simulate_node(baseline_node(), off.models[d], off.models[n], *parties, loads, 1.0, start);
  const int hv = h.violations[0] + h.violations[1], pv = p.violations[0] + p.violations[1];
  EXPECT_LT(hv, pv);
  EXPECT_THROW(make_controller("nope", baseline_node(), td, 100, tn, 5), KeyError);
}

TEST(HeraRmu, SustainsMorePartnerLoadThanParties) {
  const auto& off = table1();
  const auto d = index_of("dlrm_d"), n = index_of("ncf");
  const double h =
      max_partner_load(baseline_node(), off.models[d], off.tables[d], off.models[n], off.tables[n], "hera", 0.5);
  const double p =
      max_partner_load(baseline_node(), off.models[d], off.tables[d], off.models[n], off.tables[n], "parties", 0.5);
  EXPECT_GT(h, 0.0);
  EXPECT_GE(h, p);
}

}  // namespace
}  // namespace servelab::hera
