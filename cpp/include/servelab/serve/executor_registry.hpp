// Executors by name: "emulated", "constant(latency_ms=2)", "torchscript(path='m.pt', intra_op=1)".
//
// A registry entry builds an ExecutorBuilder from validated Params (the spec); the serving loop
// asks the builder for one Executor per worker (ExecutorBuilder::build), and the profiler for one
// Executor to time. A builder does the expensive, shared work once (loading a model file, checking
// the input width), so that a bad spec fails when it is made, before any run starts, with a message
// naming the executor, the parameter and the value.
//
// How an executor joins the registry (servelab.list_executors() lists every entry):
//
// 1. Built into servelab._core (no optional library): write
//      void register_<name>_executors(serve::ExecutorRegistry& registry);
//    in your area, adding ExecutorRegistry::Entry{name, doc, {ParamSpec...}, factory}, and call it
//    from catalogue::executors() (cpp/src/catalogue/executors.cpp), which builds the registry once.
//
// 2. From a backend module (servelab._torch, servelab._onednn, servelab._cuda), which _core must
//    not link: in the module's PYBIND11_MODULE body call
//      servelab::bindings::join_executor_registry(entry, "servelab._onednn");
//    (cpp/bindings/executor_plugin.hpp). _core hands its registry to the module through a
//    PyCapsule; the entry joins as soon as servelab.backends loads the module (servelab.executors
//    loads the usable backends when a name is not found). All modules come from one CMake build
//    with one compiler, so this header-only interface is shared as is. Exceptions thrown by a
//    backend's factory, builder or executor (servelab::ValueError, KeyError, RuntimeError,
//    MemoryError from core/errors.hpp) arrive in Python as the matching Python exception.
//
// The factory runs with the GIL released and may run on any thread; a builder's build() runs on
// the serving loop's controller thread, and the Executor it returns then runs on its worker's
// thread only (see executor.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/core/registry.hpp"
#include "servelab/serve/executor.hpp"

namespace servelab::serve {

// Where an executor will run.
struct ExecutorContext {
  sched::WorkerId worker = 0;
  sched::HardwareId hardware = 0;
  // The serving run, or null outside one (the profiler): an executor that needs the run's profile
  // (emulated) throws ValueError without it.
  const cluster::RunSpec* run = nullptr;
  // Seeds the per-query inputs: a query's input is a function of (seed, query id) only.
  std::uint64_t seed = 0;
};

// A configured executor kind, made once from a spec and shared by every worker that uses it.
class ExecutorBuilder {
 public:
  virtual ~ExecutorBuilder() = default;
  // A fresh Executor for one worker; never null. Throws (ValueError, RuntimeError) naming the
  // executor when it cannot run there.
  virtual std::unique_ptr<Executor> build(const ExecutorContext& context) const = 0;
  // The spec that made it, every parameter included: "torchscript(path='m.pt', device='cpu', ...)".
  virtual std::string describe() const = 0;
};

using ExecutorRegistry = Registry<ExecutorBuilder>;

// The serve area's own entries: "emulated" (the default) and "constant".
void register_serve_executors(ExecutorRegistry& registry);

// The serving loop's factory for one builder per worker group of the run (null: the default,
// emulated): group g's workers get builders[g]->build(); a worker added during the run
// (add_worker, add_instance) gets the builder of the group the serving loop chose for it
// (added_worker_group: for an instance, a group on its machine group holding its model first),
// else of the first group with its hardware, or the default without one.
// ValueError when the count differs from the run's worker groups.
ExecutorFactory executors_by_group(std::vector<std::shared_ptr<const ExecutorBuilder>> builders);

// Bumped whenever ExecRequest, Executor, ExecutorBuilder, ExecutorContext or the plugin table of
// cpp/bindings/executor_plugin.hpp change shape, so that a backend module from another build is
// refused with a message instead of misreading memory.
inline constexpr int kExecutorAbiVersion = 4;

}  // namespace servelab::serve
