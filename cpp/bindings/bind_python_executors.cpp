// servelab._core bindings of executors written in Python (servelab.executors.register_executor
// wraps them): the hooks that add and remove a registry entry, the batch a Python executor's
// run(batch) receives, and the user-supplied per-query inputs of servelab.serve(inputs=...).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "numpy_owner.hpp"
#include "python_executor.hpp"
#include "python_executor_registry.hpp"
#include "query_inputs_binding.hpp"
#include "registry_binding.hpp"
#include "servelab/catalogue/executors.hpp"

namespace py = pybind11;

namespace servelab::bindings {

void init_python_executors(py::module_& m) {
  py::class_<ExecutorBatch, std::shared_ptr<ExecutorBatch>>(
      m, "ExecutorBatch",
      "One batch handed to a Python executor's run(batch). It owns copies of its data: keeping it after\n"
      "run() returns is safe.")
      .def_readonly("worker", &ExecutorBatch::worker, "The worker running the batch.")
      .def_readonly("hardware", &ExecutorBatch::hardware, "The worker's hardware index in the run's profile.")
      .def_readonly("model", &ExecutorBatch::model, "The model's index in the run's profile.")
      .def_readonly("model_name", &ExecutorBatch::model_name, "The model's name ('' outside a serving run).")
      .def_readonly("items", &ExecutorBatch::items, "Items in the batch (the sum of sizes).")
      .def_property_readonly(
          "queries", [](const ExecutorBatch& b) { return to_numpy_copy(b.queries); }, "Query ids (int64 array).")
      .def_property_readonly(
          "sizes", [](const ExecutorBatch& b) { return to_numpy_copy(b.sizes); },
          "Items of each query (int32 array, parallel to queries).")
      .def_property_readonly(
          "config",
          [](const ExecutorBatch& b) { return std::map<std::string, std::int64_t>(b.config.begin(), b.config.end()); },
          "The worker's knobs (the executor's `knobs`) as set when the batch was dispatched.")
      .def_readonly("inputs", &ExecutorBatch::inputs,
                    "Each query's input given to serve(inputs=...) (a row of the array, or what the callable\n"
                    "returned), in query order; None when the run has no inputs.")
      .def_property_readonly(
          "stop_requested", [](const ExecutorBatch& b) { return b.stop.stop_requested(); },
          "True once the run ends or stops (Ctrl-C) while the batch runs: return early if you can.")
      .def("__len__", [](const ExecutorBatch& b) { return b.queries.size(); })
      .def("__repr__", [](const ExecutorBatch& b) {
        return str("<ExecutorBatch worker=", b.worker,
                   " model=", b.model_name.empty() ? std::to_string(b.model) : b.model_name,
                   " queries=", b.queries.size(), " items=", b.items, ">");
      });

  py::class_<PyExecutorBuilder, serve::ExecutorBuilder, std::shared_ptr<PyExecutorBuilder>>(
      m, "PythonExecutorBuilder", "An executor written in Python (register_executor), made from a spec.");

  py::class_<PyQueryInputs, std::shared_ptr<PyQueryInputs>>(
      m, "QueryInputs",
      "User-supplied per-query inputs for servelab.serve(inputs=...): an array with one row per query (query q\n"
      "takes row q), or a callable of the query id returning its input.")
      .def(py::init<const py::object&>(), py::arg("source"))
      .def_property_readonly("rows", &PyQueryInputs::rows, "The array's rows, or -1 for a callable.")
      .def("describe", &PyQueryInputs::describe)
      .def("check_float_rows", &PyQueryInputs::check_float_rows, py::arg("width"), py::arg("executor"),
           "ValueError naming `executor` unless it can read float32 rows of `width` features (the whole\n"
           "array, or the callable's answer for query 0).")
      .def("check_sendable", &PyQueryInputs::check_sendable, py::arg("executor"),
           "ValueError naming `executor` unless the inputs can be sent to a worker process (numeric arrays\n"
           "and numpy scalars: the array's dtype, or the callable's answer for query 0).")
      .def(
          "float_rows",
          [](const PyQueryInputs& inputs, std::vector<std::int64_t> queries, std::vector<std::int32_t> sizes,
             std::int64_t width) {
            if (sizes.size() != queries.size()) {
              throw ValueError(str("sizes has ", sizes.size(), " entries for ", queries.size(), " queries"));
            }
            std::int64_t rows = 0;
            for (const auto s : sizes) {
              if (s < 1) throw ValueError(str("sizes: ", s, " must be >= 1"));
              rows += s;
            }
            if (width < 1) throw ValueError(str("width=", width, " must be >= 1"));
            std::vector<float> out(static_cast<std::size_t>(rows * width));
            serve::fill_batch_rows(inputs, queries, sizes, width, out.data(), "float_rows");
            return to_numpy(std::move(out), {rows, width});
          },
          py::arg("queries"), py::arg("sizes"), py::arg("width"),
          "The float32 rows [sum(sizes), width] an executor such as torchscript reads for these queries.");

  m.def(
      "extend_executors",
      [](const std::string& name, py::object factory, const std::vector<py::dict>& params, const std::string& doc,
         const std::string& module) {
        std::vector<ParamSpec> specs;
        for (const auto& d : params) specs.push_back(param_spec_from(name, d));
        join_python_executor(python_executor_entry(name, doc, std::move(specs), std::move(factory)), module);
      },
      py::arg("name"), py::arg("factory"), py::arg("params"), py::arg("doc"), py::arg("module"),
      "Adds an executor written in Python: factory(**params) returns a fresh executor object per worker.");
  m.def("retract_executor", &retract_python_executor, py::arg("name"),
        "Removes an executor added with extend_executors (KeyError for any other name).");
  // The entries hold Python objects, which must be released while the interpreter still runs.
  py::module_::import("atexit").attr("register")(
      py::cpp_function([] { catalogue::executors().retract_all_extensions(); }));
}

}  // namespace servelab::bindings
