// servelab._core bindings of the catalogue: list_/make_ functions for the scheduler registry, and
// the extension hooks through which a policy written in Python joins it (servelab.schedulers wraps
// them). Python parameters are declared as ParamSpecs, so they are parsed, typed, range-checked and
// documented exactly like a C++ policy's.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "registry_binding.hpp"
#include "servelab/catalogue/catalogue.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/sched/scheduler.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

// A C++ factory calling the Python one. The returned pointer keeps the Python object (and so the
// policy's Python state) alive for as long as C++ holds it.
sched::SchedulerRegistry::Factory python_factory(std::string name, py::object factory) {
  auto shared = std::make_shared<py::object>(std::move(factory));
  return [name = std::move(name), shared](const Params& params) -> std::shared_ptr<sched::Scheduler> {
    py::gil_scoped_acquire gil;
    py::dict kwargs;
    for (const auto& [key, value] : params.values()) kwargs[py::str(key)] = param_value_to_python(value);
    py::object made = (*shared)(**kwargs);
    if (!py::isinstance<sched::Scheduler>(made)) {
      throw py::type_error(str("the factory of scheduler '", name, "' returned ", py::repr(made).cast<std::string>(),
                               ", not a servelab.Scheduler"));
    }
    auto* policy = made.cast<sched::Scheduler*>();
    auto keep = std::make_shared<py::object>(std::move(made));
    return std::shared_ptr<sched::Scheduler>(policy, [keep](sched::Scheduler*) mutable {
      py::gil_scoped_acquire release_gil;
      *keep = py::object();
    });
  };
}

}  // namespace

void init_catalogue(py::module_& m) {
  bind_registry<sched::Scheduler>(m, "scheduler", "schedulers", &catalogue::schedulers);
  m.def(
      "extend_schedulers",
      [](const std::string& name, py::object factory, const std::vector<py::dict>& params, const std::string& doc) {
        std::vector<ParamSpec> specs;
        for (const auto& d : params) specs.push_back(param_spec_from(name, d));
        catalogue::schedulers().extend({name, doc, std::move(specs), python_factory(name, std::move(factory))});
      },
      py::arg("name"), py::arg("factory"), py::arg("params"), py::arg("doc"),
      "Adds a Python policy to the scheduler registry: factory(**params) returns a fresh Scheduler.");
  // The extensions hold Python objects, which must be released while the interpreter still runs
  // (the registry itself, a C++ static, outlives it).
  py::module_::import("atexit").attr("register")(
      py::cpp_function([] { catalogue::schedulers().retract_all_extensions(); }));
  m.def(
      "retract_scheduler", [](const std::string& name) { catalogue::schedulers().retract(name); }, py::arg("name"),
      "Removes a policy added with extend_schedulers (KeyError for a built-in or unknown name).");
}

}  // namespace servelab::bindings
