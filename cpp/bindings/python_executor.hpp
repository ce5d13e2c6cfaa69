// Executors written in Python (servelab.register_executor): the registry entry builds a
// PyExecutorBuilder from the validated parameters; each worker of a run gets its own Python object
// from the user's factory, wrapped in a PyExecutor. Its run() holds the GIL only while the Python
// run(batch) runs, so the serving loop, the other workers and C++ executors go on meanwhile.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "servelab/core/params.hpp"
#include "servelab/serve/executor_registry.hpp"

namespace servelab::bindings {

// A Python object released with the GIL taken, whichever thread drops the last reference.
std::shared_ptr<pybind11::object> shared_python_object(pybind11::object object);

// What a Python executor's run(batch) receives. It owns copies of the batch's data, so a batch
// kept after run() returns stays valid.
class ExecutorBatch {
 public:
  sched::WorkerId worker = -1;
  sched::HardwareId hardware = -1;
  sched::ModelId model = -1;
  std::string model_name;  // the run's profile's name of `model` ("" outside a run)
  std::int64_t items = 0;
  std::vector<workload::QueryId> queries;
  std::vector<std::int32_t> sizes;  // items of each query
  serve::ConfigKnobs config;
  pybind11::object inputs;  // a list with each query's input (serve(inputs=...)), or None
  std::stop_token stop;
};

class PyExecutor final : public serve::Executor {
 public:
  // `object` is what the factory returned (GIL held); TypeError naming `spec` unless it has a
  // callable run(batch), and set_config(key, value) when it names knobs.
  PyExecutor(pybind11::object object, std::string spec, std::shared_ptr<const std::vector<std::string>> models);
  ~PyExecutor() override;
  PyExecutor(const PyExecutor&) = delete;
  PyExecutor& operator=(const PyExecutor&) = delete;

  void run(const serve::ExecRequest& request) override;
  std::vector<std::string> knobs() const override { return knobs_; }
  std::string describe() const override { return spec_; }

 private:
  pybind11::object object_, run_, set_config_;
  std::string spec_;
  std::shared_ptr<const std::vector<std::string>> models_;
  std::vector<std::string> knobs_;
  serve::ConfigKnobs delivered_;  // the knob values set_config() was last given
};

class PyExecutorBuilder final : public serve::ExecutorBuilder {
 public:
  PyExecutorBuilder(std::shared_ptr<pybind11::object> factory, Params params)
      : factory_(std::move(factory)), params_(std::move(params)), spec_(params_.describe()) {}
  // Calls factory(**params) with the GIL; its exceptions arrive as ValueError or RuntimeError
  // naming the executor.
  std::unique_ptr<serve::Executor> build(const serve::ExecutorContext& context) const override;
  std::string describe() const override { return spec_; }

 private:
  std::shared_ptr<pybind11::object> factory_;
  Params params_;
  std::string spec_;
};

// The registry entry of a Python executor.
serve::ExecutorRegistry::Entry python_executor_entry(std::string name, std::string doc, std::vector<ParamSpec> params,
                                                     pybind11::object factory);

}  // namespace servelab::bindings
