#include "servelab/systems/hera/rmu.hpp"

#include <algorithm>
#include <cmath>

#include "servelab/core/errors.hpp"
#include "servelab/systems/hera/colocation.hpp"
#include "servelab/systems/hera/scalability.hpp"

namespace servelab::hera {

namespace {

void check_options(const RmuOptions& o) {
  if (!(o.lower_slack > 0 && o.lower_slack < o.upper_slack) || !std::isfinite(o.upper_slack))
    throw ValueError(str("rmu: lower_slack=", o.lower_slack, " and upper_slack=", o.upper_slack,
                         " must satisfy 0 < lower_slack < upper_slack"));
}

void check_pair(const NodeSpec& node, const ModelTables& a, const ModelTables& b) {
  if (a.cores != node.cores || b.cores != node.cores || a.ways != node.llc_ways || b.ways != node.llc_ways)
    throw ValueError(str("rmu: tables of '", a.name, "' and '", b.name, "' were profiled on another node"));
  if (node.cores < 2 || node.llc_ways < 2)
    throw ValueError(str("rmu: node '", node.name, "' needs at least 2 cores and 2 ways for two models"));
}

class HeraRmu final : public NodeController {
 public:
  HeraRmu(const NodeSpec& node, const ModelTables& a, double sla_a, const ModelTables& b, double sla_b, RmuOptions o)
      : node_(node), tables_{&a, &b}, sla_{sla_a, sla_b}, options_(o) {}

  Allocation adjust(const std::array<Observation, 2>& seen, const Allocation& now) override {
    Allocation next = now;
    bool changed = false;
    for (int m = 0; m < 2; ++m) {
      const double slack = seen[m].tail_ms / sla_[m];
      if (!(slack > options_.upper_slack || slack < options_.lower_slack)) continue;
      const double urgency = std::max(1.0, std::isfinite(slack) ? slack : 10.0);
      const double traffic = urgency * seen[m].arrival_qps;
      const int limit = node_.cores - next.workers[1 - m];
      const int w = std::max(1, find_number_of_workers(*tables_[m], next.ways[m], traffic, limit));
      changed |= w != next.workers[m];
      next.workers[m] = w;
    }
    if (changed) {
      next.ways[0] = best_llc_partition(*tables_[0], next.workers[0], *tables_[1], next.workers[1]);
      next.ways[1] = node_.llc_ways - next.ways[0];
    }
    return next;
  }

 private:
  NodeSpec node_;
  std::array<const ModelTables*, 2> tables_;
  std::array<double, 2> sla_;
  RmuOptions options_;
};

class Parties final : public NodeController {
 public:
  Parties(const NodeSpec& node, double sla_a, double sla_b, RmuOptions o)
      : node_(node), sla_{sla_a, sla_b}, options_(o) {}

  Allocation adjust(const std::array<Observation, 2>& seen, const Allocation& now) override {
    for (auto& c : cooldown_)
      for (int& r : c) r = std::max(0, r - 1);
    const std::array<double, 2> ratio{seen[0].tail_ms / sla_[0], seen[1].tail_ms / sla_[1]};
    Allocation next = now;
    // A downsize that broke the SLA is undone, and that resource is left alone for a while.
    if (last_down_ >= 0 && ratio[last_down_] > options_.upper_slack) {
      const int m = last_down_;
      last_down_ = -1;
      cooldown_[m][last_resource_] = kCooldown;
      return undo_;
    }
    last_down_ = -1;
    const int worst = ratio[0] >= ratio[1] ? 0 : 1;
    if (ratio[worst] > options_.upper_slack) {
      upsize(next, worst, ratio);
      return next;
    }
    const int idle = ratio[0] <= ratio[1] ? 0 : 1;
    if (ratio[idle] < options_.lower_slack) {
      undo_ = now;
      if (downsize(next, idle)) last_down_ = idle;
    }
    return next;
  }

 private:
  static constexpr int kCooldown = 10;  // windows a reverted resource is not downsized again
  enum Resource { kCores = 0, kWays = 1 };

  // One more unit of the resource whose turn it is for model m (cores and ways in turn): idle
  // cores first, else from the other model while it is below its slack band.
  void upsize(Allocation& x, int m, const std::array<double, 2>& ratio) {
    const int other = 1 - m;
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (turn_[m]++ % 2 == kCores) {
        if (x.workers[0] + x.workers[1] < node_.cores) {
          ++x.workers[m];
          return;
        }
        if (x.workers[other] > 1 && ratio[other] < options_.lower_slack) {
          --x.workers[other];
          ++x.workers[m];
          return;
        }
      } else if (x.ways[other] > 1 && ratio[other] < options_.upper_slack) {
        --x.ways[other];
        ++x.ways[m];
        return;
      }
    }
  }

  // One unit back from model m (cores free up; a way goes to the other model), skipping a
  // resource in cooldown. False when nothing could be given back.
  bool downsize(Allocation& x, int m) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      const int r = turn_[m]++ % 2;
      if (cooldown_[m][r] > 0) continue;
      if (r == kCores && x.workers[m] > 1) {
        --x.workers[m];
        last_resource_ = r;
        return true;
      }
      if (r == kWays && x.ways[m] > 1) {
        --x.ways[m];
        ++x.ways[1 - m];
        last_resource_ = r;
        return true;
      }
    }
    return false;
  }

  NodeSpec node_;
  std::array<double, 2> sla_;
  RmuOptions options_;
  std::array<int, 2> turn_{0, 0};
  std::array<std::array<int, 2>, 2> cooldown_{};
  int last_down_ = -1, last_resource_ = 0;
  Allocation undo_;
};

}  // namespace

std::unique_ptr<NodeController> make_hera_rmu(const NodeSpec& node, const ModelTables& a, double sla_a_ms,
                                              const ModelTables& b, double sla_b_ms, RmuOptions options) {
  check_options(options);
  check_pair(node, a, b);
  return std::make_unique<HeraRmu>(node, a, sla_a_ms, b, sla_b_ms, options);
}

std::unique_ptr<NodeController> make_parties(const NodeSpec& node, const ModelTables& a, double sla_a_ms,
                                             const ModelTables& b, double sla_b_ms, RmuOptions options) {
  check_options(options);
  check_pair(node, a, b);
  return std::make_unique<Parties>(node, sla_a_ms, sla_b_ms, options);
}

std::unique_ptr<NodeController> make_controller(std::string_view name, const NodeSpec& node, const ModelTables& a,
                                                double sla_a_ms, const ModelTables& b, double sla_b_ms,
                                                RmuOptions options) {
  if (name == "hera") return make_hera_rmu(node, a, sla_a_ms, b, sla_b_ms, options);
  if (name == "parties") return make_parties(node, a, sla_a_ms, b, sla_b_ms, options);
  throw KeyError(str("controller='", name, "'; known: hera, parties"));
}

}  // namespace servelab::hera
