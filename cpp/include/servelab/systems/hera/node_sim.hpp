// A node hosting two models, run window by window (T_monitor) under a controller, with the
// contention model as the node: each window the allocation gives each model a service time (its
// ways set the miss ratio, both models' traffic the DRAM queue), the arrivals of the window are
// served as a fluid queue (a backlog carries over when they exceed the workers' capacity), and
// the window's p95 is the M/M/w response quantile at the served rate plus the time to clear the
// backlog. The controller then sees (p95, arrival rate) and sets the next allocation.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "servelab/systems/hera/model_profile.hpp"
#include "servelab/systems/hera/rmu.hpp"

namespace servelab::hera {

struct NodeRun {
  std::vector<double> time_s;                        // end of each window
  std::array<std::vector<double>, 2> tail_over_sla;  // p95 / SLA per window (> 1: violation)
  std::array<std::vector<int>, 2> workers, ways;     // allocation during each window
  std::array<std::vector<double>, 2> arrival_qps, served_qps;
  std::array<int, 2> violations{0, 0};  // windows with p95 > SLA
};

// loads: [windows x 2] arrival rates in queries/s. The run starts from `start`.
NodeRun simulate_node(const NodeSpec& node, const ModelProfile& a, const ModelProfile& b, NodeController& controller,
                      std::span<const double> loads, double window_s, Allocation start);

// Fig. 12: with model A at `load_a` of its isolated max load, the largest fraction of B's that the
// controller sustains: after `windows` windows at constant load, at most `tolerance` of the last
// `settle` windows miss an SLA. Bisection to 1e-3; 0 when even a negligible B load fails.
// The tolerance (default one half: the manager has not fallen behind) judges capacity, not how
// tightly a manager holds the SLA (Fig. 14 shows that): past a manager's capacity every settled
// window misses, while below it both managers miss some by their own dynamics, PARTIES 2 to 6 of
// 20 (a give-back when a model is far under its SLA, undone the window after it breaks the SLA,
// then 10 windows of cooldown per resource) and Hera's RMU up to 10 of 20 at some loads (a limit
// cycle of Algorithm 3: the workers it adds with urgency put the tail under 0.8 x SLA, it
// removes them, the next window misses). A tolerance inside those bands (the earlier 10%: 2
// windows) makes pass or fail at a load below the limit the phase of that cycle, and the
// bisection, which assumes a monotone answer, returned points such as PARTIES + NCF 0.67, 0.58,
// 0.03, 0.40, 0.01 (docs/hera.md, "Fig. 12's window rule").
double max_partner_load(const NodeSpec& node, const ModelProfile& a, const ModelTables& ta, const ModelProfile& b,
                        const ModelTables& tb, std::string_view controller, double load_a, int windows = 60,
                        int settle = 20, double tolerance = 0.5, double window_s = 1.0);

}  // namespace servelab::hera
