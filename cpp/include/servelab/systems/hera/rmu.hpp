// Node-level resource managers for a server hosting two models: Hera's RMU (Algorithm 3) and a
// PARTIES-style feedback manager (Chen et al., ASPLOS'19). Each is a controller: every
// T_monitor it reads what was observed per model (tail latency, arrival rate) and returns the
// next allocation of cores (one worker each) and LLC ways. Controllers know nothing of the world
// that runs them (node_sim.hpp drives them over the contention model).
#pragma once

#include <array>
#include <memory>
#include <string_view>

#include "servelab/systems/hera/tables.hpp"

namespace servelab::hera {

struct Allocation {
  std::array<int, 2> workers{1, 1};
  std::array<int, 2> ways{1, 1};
};

struct Observation {
  double tail_ms = 0;      // p95 latency over the window
  double arrival_qps = 0;  // queries that arrived per second over the window
};

class NodeController {
 public:
  virtual ~NodeController() = default;
  virtual Allocation adjust(const std::array<Observation, 2>& seen, const Allocation& now) = 0;
};

struct RmuOptions {
  double upper_slack = 1.0;  // tail / SLA above this: under-provisioned (Algorithm 3, line 8)
  double lower_slack = 0.8;  // below this: over-provisioned
};

// Algorithm 3. Per model out of its slack band: urgency = max(1, tail / SLA), workers =
// find_number_of_workers(urgency x arrival rate) on the model's profiled curve with its current
// ways, capped by the cores the other model leaves; when a worker count changed, the LLC is
// re-split by adjust_LLC_partition over the 3-D lookup tables (normalised QPS, colocation.hpp).
std::unique_ptr<NodeController> make_hera_rmu(const NodeSpec& node, const ModelTables& a, double sla_a_ms,
                                              const ModelTables& b, double sla_b_ms, RmuOptions options = {});

// PARTIES restricted to what matters here (cores and LLC ways; the paper's disk and network knobs
// are idle for in-memory inference): each window, the model furthest above its SLA gets one more
// unit of one resource (cores and ways in turn), from idle cores or from the other model while
// its tail is below lower_slack x SLA (cores) or within its SLA (ways); otherwise a model far
// below its SLA (tail < lower_slack x SLA) gives one unit back; a give-back that breaks the SLA in the next
// window is undone and that resource is not given back for 10 windows. One unit per window:
// PARTIES' feedback loop, with no profile to jump to the right allocation.
std::unique_ptr<NodeController> make_parties(const NodeSpec& node, const ModelTables& a, double sla_a_ms,
                                             const ModelTables& b, double sla_b_ms, RmuOptions options = {});

std::unique_ptr<NodeController> make_controller(std::string_view name, const NodeSpec& node, const ModelTables& a,
                                                double sla_a_ms, const ModelTables& b, double sla_b_ms,
                                                RmuOptions options = {});

}  // namespace servelab::hera
