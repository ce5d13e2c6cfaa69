// What serve_run() and Session share at the binding level: the serving options built from the
// Python arguments (executors, spin, timeout, pinning, LLC), and the run's meta they add.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llc_binding.hpp"
#include "query_inputs_binding.hpp"
#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/serve/executor_registry.hpp"
#include "servelab/serve/server.hpp"

namespace servelab::bindings {

struct ServingSetup {
  serve::ServeOptions options;
  std::shared_ptr<serve::PinLog> pins;  // null: nobody is pinned
  std::unique_ptr<LlcSetup> llc;        // null: llc= is off
};

// Checks the arguments (ValueError naming the field and value) and builds the options.
ServingSetup serving_setup(const cluster::RunSpec& spec,
                           std::optional<std::vector<std::shared_ptr<serve::ExecutorBuilder>>> executors,
                           double spin_us, std::shared_ptr<PyQueryInputs> inputs,
                           std::optional<double> batch_timeout_ms, std::optional<std::vector<std::vector<int>>> cores,
                           const std::optional<std::string>& llc, const std::optional<std::string>& llc_root,
                           std::optional<std::vector<std::vector<int>>> machine_cores);

// After the run (its worker threads joined): removes the LLC groups and adds meta["pinning"] and
// meta["llc"] to `out` (result_to_python's dict).
void finish_serving(ServingSetup& setup, pybind11::dict& out);

}  // namespace servelab::bindings
