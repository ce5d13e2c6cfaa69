// Machines: what several co-located model instances (workers) share.
//
// A worker is one model instance: it runs one batch at a time. A machine hosts one or more of them
// (Triton's instance groups, INFaaS's variants on one VM, Hera's co-located models on one CPU
// server) and gives them its resources; instances running at the same time on one machine slow
// each other down as the run's interference model says (cluster/interference.hpp). A worker that
// is not placed on a declared machine is a machine of its own, as before machines existed.
#pragma once

#include <cstdint>

namespace servelab::sched {

using MachineId = std::int32_t;

// A machine's resources, or what is left of them. 0 means "not modelled": no limit is checked
// and interference models that need the value say so.
struct MachineResources {
  std::int32_t cores = 0;      // CPU cores (instances get them through their "cores" knob)
  double memory_mb = 0;        // host memory (instances take their models' profile memory)
  double accel_memory_mb = 0;  // accelerator memory (as memory_mb, for accelerator hardware)
  std::int32_t llc_ways = 0;   // last-level-cache ways (the "llc_ways" knob)
  double memory_bw_gbps = 0;   // memory bandwidth, GB/s
};

// The integer knobs (ClusterView::config) that give an instance a share of its machine.
inline constexpr const char* kCoresKnob = "cores";
inline constexpr const char* kLlcWaysKnob = "llc_ways";

}  // namespace servelab::sched
