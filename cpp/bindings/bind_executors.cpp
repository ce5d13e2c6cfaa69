// servelab._core bindings of the executor registry: list_executors(), make_executor(), the
// ExecutorBuilder and Executor classes, the batch-timing loop the profiler uses, and the capsule
// through which backend modules join the registry (executor_plugin.hpp).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "executor_plugin.hpp"
#include "long_call.hpp"
#include "numpy_owner.hpp"
#include "python_executor_registry.hpp"
#include "registry_binding.hpp"
#include "seed.hpp"
#include "servelab/catalogue/executors.hpp"
#include "servelab/serve/executor_timing.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

// Which module added each extension entry (the built-in ones are "servelab._core").
std::map<std::string, std::string, std::less<>>& origins() {
  static std::map<std::string, std::string, std::less<>> by_name;
  return by_name;
}
std::mutex origins_mutex;

// The executors written in Python (servelab.register_executor).
std::set<std::string, std::less<>>& python_executors() {
  static std::set<std::string, std::less<>> names;
  return names;
}

void join_from_module(serve::ExecutorRegistry::Entry entry, const std::string& module) {
  const std::string name = entry.name;
  catalogue::executors().extend(std::move(entry));
  std::lock_guard lock(origins_mutex);
  origins()[name] = module;
}

const ExecutorPluginRecord plugin_table{.abi_version = serve::kExecutorAbiVersion, .join = &join_from_module};

// One executor opened from Python: the worker's service stream, the next fresh query id, and a
// lock, since an executor runs one batch at a time.
struct ExecutorSession {
  explicit ExecutorSession(Rng stream) : rng(std::move(stream)) {}
  std::unique_ptr<serve::Executor> executor;
  Rng rng;
  std::int64_t next_query = 0;
  std::mutex mutex;
};

serve::ConfigKnobs knobs_from(const std::map<std::string, std::int64_t>& config) {
  return serve::ConfigKnobs(config.begin(), config.end());
}

}  // namespace

void join_python_executor(serve::ExecutorRegistry::Entry entry, const std::string& module) {
  const std::string name = entry.name;
  join_from_module(std::move(entry), module);
  std::lock_guard lock(origins_mutex);
  python_executors().insert(name);
}

void retract_python_executor(const std::string& name) {
  {
    std::lock_guard lock(origins_mutex);
    if (!python_executors().count(name)) {
      throw KeyError(str("'", name, "' is not an executor registered from Python",
                         catalogue::executors().contains(name) ? " (it is built in or comes from a backend)" : ""));
    }
    python_executors().erase(name);
    origins().erase(name);
  }
  catalogue::executors().retract(name);
}

void init_executors(py::module_& m) {
  publish_plugin_record(m, "_executor_plugins", plugin_table, kExecutorPluginCapsule);

  py::class_<ExecutorSession>(m, "Executor", "One worker's executor, opened from an ExecutorBuilder.")
      .def("describe", [](const ExecutorSession& s) { return s.executor->describe(); })
      .def(
          "knobs", [](const ExecutorSession& s) { return s.executor->knobs(); },
          "The ClusterView.config knobs it reads per batch (set_config).")
      .def_property_readonly(
          "bytes_per_item", [](const ExecutorSession& s) { return s.executor->bytes_per_item(); },
          "Bytes a batch's run allocates per item (its inputs); 0: not known.")
      .def(
          "check_batch_memory",
          [](const ExecutorSession& s, std::int64_t items, double caller_bytes, const std::string& given,
             const std::string& field) { serve::check_batch_memory(*s.executor, items, caller_bytes, given, field); },
          py::arg("items"), py::kw_only(), py::arg("caller_bytes"), py::arg("given"), py::arg("field"),
          "MemoryError naming `given` and `field` unless a batch of `items` items (a query id each, the\n"
          "executor's inputs and `caller_bytes` per item that the caller holds) fits the memory available.")
      .def(
          "time_batches",
          [](ExecutorSession& s, std::vector<std::int32_t> sizes, std::int64_t repeats, std::int64_t warmup,
             const std::map<std::string, std::int64_t>& config) {
            const auto knobs = knobs_from(config);
            std::vector<serve::BatchTiming> timings;
            {
              LongCall call;  // GIL released, Ctrl-C watched
              std::lock_guard lock(s.mutex);
              timings = serve::time_batches(*s.executor, sizes, knobs, repeats, warmup, s.next_query, s.rng);
            }
            std::vector<Nanos> wall, exec;
            for (const auto& t : timings) {
              wall.push_back(t.wall);
              exec.push_back(t.exec);
            }
            py::dict out;
            out["wall_ns"] = to_numpy(std::move(wall));
            out["exec_ns"] = to_numpy(std::move(exec));
            return out;
          },
          py::arg("sizes"), py::kw_only(), py::arg("repeats") = 1, py::arg("warmup") = 0,
          py::arg("config") = std::map<std::string, std::int64_t>{},
          "Runs one batch (items per query in `sizes`) `warmup` times untimed, then `repeats` times; returns\n"
          "{'wall_ns', 'exec_ns'} arrays (exec: the executor's own measure, else wall). Each run uses fresh\n"
          "query ids. Releases the GIL; Ctrl-C stops it between batches.");

  py::class_<serve::ExecutorBuilder, std::shared_ptr<serve::ExecutorBuilder>>(
      m, "ExecutorBuilder",
      "An executor made from a spec (make_executor): one per worker group, asked for one Executor per worker.")
      .def("describe", &serve::ExecutorBuilder::describe)
      .def("__repr__", [](const serve::ExecutorBuilder& b) { return "<ExecutorBuilder " + b.describe() + ">"; })
      .def(
          "open",
          [](const serve::ExecutorBuilder& builder, std::int32_t worker, const py::object& seed) {
            auto session =
                std::make_unique<ExecutorSession>(Rng(to_seed(seed), "service").derive(str("worker", worker)));
            const serve::ExecutorContext context{worker, 0, nullptr, to_seed(seed)};
            {
              py::gil_scoped_release release;
              session->executor = builder.build(context);
            }
            if (!session->executor) throw RuntimeError(str(builder.describe(), ": build() returned no executor"));
            return session;
          },
          py::arg("worker") = 0, py::arg("seed") = 0,
          "An Executor outside a serving run (as the profiler uses one); `seed` seeds its per-query inputs.");

  m.def(
      "list_executors",
      [] {
        py::list out;
        for (const auto& entry : catalogue::executors().entries()) {
          py::dict d;
          d["name"] = entry->name;
          d["doc"] = entry->doc;
          std::string module = "servelab._core";
          {
            std::lock_guard lock(origins_mutex);
            if (const auto it = origins().find(entry->name); it != origins().end()) module = it->second;
          }
          bool python = false;
          {
            std::lock_guard lock(origins_mutex);
            python = python_executors().count(entry->name) > 0;
          }
          d["origin"] = python ? "python" : "c++";
          d["module"] = module;
          py::list params;
          for (const auto& p : entry->params) params.append(describe_param(p));
          d["params"] = params;
          out.append(d);
        }
        return out;
      },
      "Every executor registered so far: name, doc, typed parameters and the module that added it.");
  m.def(
      "make_executor",
      [](const std::string& spec, const py::kwargs& kwargs) {
        auto [name, args] = parse_spec(spec);
        for (auto& [key, value] : args_from_python(kwargs)) {
          if (args.count(key)) throw ValueError(str("parameter '", key, "' is given in the spec and as a keyword"));
          args[key] = std::move(value);
        }
        // A backend's factory may load a model file: no GIL needed, and none held.
        py::gil_scoped_release release;
        return catalogue::executors().make(name, args);
      },
      py::arg("spec"), "An ExecutorBuilder from 'name(a=1, ...)' or a name plus keyword arguments.");
}

}  // namespace servelab::bindings
