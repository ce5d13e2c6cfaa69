// The arrival processes by name: make("poisson(rate=100)"), or list them with their parameters.
#pragma once

#include "servelab/core/registry.hpp"
#include "servelab/workload/arrivals.hpp"

namespace servelab::workload {

// Filled with the built-in processes on first use.
const Registry<ArrivalProcess>& arrival_registry();

}  // namespace servelab::workload
