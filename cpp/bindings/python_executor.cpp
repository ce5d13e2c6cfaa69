#include "python_executor.hpp"

#include <cxxabi.h>
#include <pybind11/stl.h>

#include <new>
#include <utility>

#include "query_inputs_binding.hpp"
#include "registry_binding.hpp"
#include "servelab/core/errors.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

std::string first_line(const py::error_already_set& e) {
  const std::string what = e.what();
  return what.substr(0, what.find('\n'));
}

std::string short_repr(const py::handle& h) { return py::repr(h).cast<std::string>().substr(0, 120); }

// The config keys an executor object reads: its `knobs` attribute (a sequence of str, or a method
// returning one); none without it.
std::vector<std::string> knobs_of(const py::object& object, const std::string& spec) {
  if (!py::hasattr(object, "knobs")) return {};
  py::object knobs = object.attr("knobs");
  if (PyCallable_Check(knobs.ptr())) knobs = knobs();
  std::vector<std::string> out;
  if (py::isinstance<py::str>(knobs) || !py::isinstance<py::iterable>(knobs)) {
    throw ValueError(str(spec, ": knobs=", short_repr(knobs), " must be a list of config keys (str)"));
  }
  for (const auto& key : knobs) {
    if (!py::isinstance<py::str>(key)) {
      throw ValueError(str(spec, ": knobs=", short_repr(knobs), " must be a list of config keys (str); ",
                           short_repr(key), " is not a str"));
    }
    out.push_back(key.cast<std::string>());
  }
  return out;
}

// Whether the interpreter is gone or shutting down. A thread that takes the GIL while it shuts
// down is ended by Python (pthread_exit): an abandoned worker thread (serve's batch timeout) that
// outlives the interpreter must not try.
bool python_exiting() {
#if PY_VERSION_HEX >= 0x030D0000
  return !Py_IsInitialized() || Py_IsFinalizing();
#else
  return !Py_IsInitialized() || _Py_IsFinalizing();
#endif
}

// The GIL for a Python call, as py::gil_scoped_acquire, except that after forget() the destructor
// leaves the thread state alone: when Python ends the thread inside the call (at exit), the GIL
// is no longer this thread's to give back, and giving it back would abort the process.
class ForgettableGil {
 public:
  ForgettableGil() { new (storage_) py::gil_scoped_acquire(); }
  ~ForgettableGil() {
    if (!forgotten_) std::launder(reinterpret_cast<py::gil_scoped_acquire*>(storage_))->~gil_scoped_acquire();
  }
  ForgettableGil(const ForgettableGil&) = delete;
  ForgettableGil& operator=(const ForgettableGil&) = delete;
  void forget() { forgotten_ = true; }

 private:
  alignas(py::gil_scoped_acquire) unsigned char storage_[sizeof(py::gil_scoped_acquire)];
  bool forgotten_ = false;
};

// fn(*args) through raw references, so that if Python ends this thread inside the call nothing is
// released without the GIL on the way out (the references are left behind). Returns the result
// (held once the call has returned).
py::object call_leaving_references_at_exit(const py::object& fn, py::tuple args) {
  PyObject* raw = args.release().ptr();
  PyObject* result = PyObject_Call(fn.ptr(), raw, nullptr);
  Py_DECREF(raw);
  if (result == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(result);
}

// What run(batch) returned, as each query's output: a sequence with one array per query, or one
// array with a row per item of the batch (split by the queries' sizes). None: no outputs.
void put_outputs(const py::object& returned, const serve::ExecRequest& request, const std::string& spec) {
  if (returned.is_none()) return;
  const auto n = request.queries.size();
  const auto what = [&](const std::string& part) { return str(spec, ": run(batch) returned ", part, " "); };
  if (py::isinstance<py::list>(returned) || py::isinstance<py::tuple>(returned)) {
    const auto items = py::reinterpret_borrow<py::sequence>(returned);
    if (items.size() != n) {
      throw ValueError(str(what("a sequence of " + std::to_string(items.size()) + " outputs"), "for a batch of ", n,
                           " queries: return one output per query, one array with a row per item, or None"));
    }
    for (std::size_t q = 0; q < n; ++q) {
      request.outputs->put(request.queries[q], array_from_python(items[q], what(str("for query ", q, ":"))));
    }
    return;
  }
  auto all = array_from_python(returned, what("as the batch's output:"));
  if (all.shape.empty() || all.shape[0] != request.items) {
    throw ValueError(str(what(serve::array_text(all)), "for a batch of ", request.items,
                         " items: one array needs a row per item (or return one output per query)"));
  }
  const std::vector<std::int64_t> row_shape(all.shape.begin() + 1, all.shape.end());
  serve::put_batch_rows(*request.outputs, request.queries, request.sizes, all.dtype, row_shape, all.data.data());
}

// Keeps a worker thread's Python thread state from its first batch to the thread's exit. Without
// it, taking the GIL on a thread Python has never seen makes and deletes a thread state per batch,
// microseconds each time.
class LastingThreadState {
 public:
  void keep() {
    if (kept_ || PyGILState_GetThisThreadState() != nullptr) return;  // a Python thread has its own
    py::gil_scoped_acquire gil;
    gil.inc_ref();
    kept_ = true;
  }
  ~LastingThreadState() {  // on the worker thread as it exits; serve() joins it without the GIL
    if (!kept_ || python_exiting()) return;
    py::gil_scoped_acquire gil;
    gil.dec_ref();  // the last reference: the state is deleted as `gil` ends
  }

 private:
  bool kept_ = false;
};
thread_local LastingThreadState lasting_thread_state;

}  // namespace

std::shared_ptr<py::object> shared_python_object(py::object object) {
  return {new py::object(std::move(object)), [](py::object* o) {
            if (!Py_IsInitialized()) {
              o->release();  // the interpreter is gone: nothing left to release
            } else {
              py::gil_scoped_acquire gil;
              *o = py::object();
            }
            delete o;
          }};
}

PyExecutor::PyExecutor(py::object object, std::string spec, std::shared_ptr<const std::vector<std::string>> models)
    : object_(std::move(object)), spec_(std::move(spec)), models_(std::move(models)) {
  if (!py::hasattr(object_, "run") || !PyCallable_Check(object_.attr("run").ptr())) {
    throw py::type_error(str(spec_, ": the factory returned ", short_repr(object_),
                             ", which has no run(batch) method: an executor object "
                             "needs run(batch), and set_config(key, value) for knobs"));
  }
  run_ = object_.attr("run");
  knobs_ = knobs_of(object_, spec_);
  if (py::hasattr(object_, "set_config")) set_config_ = object_.attr("set_config");
  if (!knobs_.empty() && (!set_config_ || !PyCallable_Check(set_config_.ptr()))) {
    throw py::type_error(str(spec_, ": knobs=", short_repr(object_.attr("knobs")),
                             " are delivered through a set_config(key, value) method, which it lacks"));
  }
}

PyExecutor::~PyExecutor() {
  if (!Py_IsInitialized()) {
    object_.release(), run_.release(), set_config_.release();
    return;
  }
  py::gil_scoped_acquire gil;
  object_ = run_ = set_config_ = py::object();
}

void PyExecutor::run(const serve::ExecRequest& request) {
  lasting_thread_state.keep();
  ForgettableGil gil;  // held for the Python call only: the worker's thread waits for it here
  try {
    for (const auto& [key, value] : request.config) {
      const auto it = delivered_.find(key);
      if (it != delivered_.end() && it->second == value) continue;
      call_leaving_references_at_exit(set_config_, py::make_tuple(key, value));
      delivered_[key] = value;
    }
    auto batch = std::make_shared<ExecutorBatch>();
    batch->worker = request.worker;
    batch->hardware = request.hardware;
    batch->model = request.model;
    if (models_ && request.model >= 0 && static_cast<std::size_t>(request.model) < models_->size()) {
      batch->model_name = (*models_)[static_cast<std::size_t>(request.model)];
    }
    batch->items = request.items;
    batch->queries.assign(request.queries.begin(), request.queries.end());
    if (request.sizes.empty()) {
      batch->sizes.assign(request.queries.size(), 1);
    } else {
      batch->sizes.assign(request.sizes.begin(), request.sizes.end());
    }
    batch->config = request.config;
    batch->stop = request.stop;
    batch->inputs = py::none();
    if (const auto* inputs = dynamic_cast<const PyQueryInputs*>(request.inputs)) {
      py::list rows;
      for (const auto id : request.queries) rows.append(inputs->row(id, ""));  // the drop reason names the executor
      batch->inputs = rows;
    } else if (request.inputs != nullptr) {  // sent by a controller in another process (remote)
      py::list rows;
      for (const auto id : request.queries) rows.append(array_to_python(request.inputs->array(id, "")));
      batch->inputs = rows;
    }
    const auto returned = call_leaving_references_at_exit(run_, py::make_tuple(std::move(batch)));
    if (request.outputs) put_outputs(returned, request, spec_);
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_KeyboardInterrupt)) throw Interrupted();
    throw RuntimeError(first_line(e));  // the serving loop prefixes the executor's spec
  } catch (const abi::__forced_unwind&) {
    gil.forget();  // Python is ending this thread at exit (an abandoned batch woke too late)
    throw;
  }
}

std::unique_ptr<serve::Executor> PyExecutorBuilder::build(const serve::ExecutorContext& context) const {
  py::gil_scoped_acquire gil;
  std::shared_ptr<const std::vector<std::string>> models;
  if (context.run != nullptr && context.run->profile) {
    models = std::make_shared<const std::vector<std::string>>(context.run->profile->models());
  }
  py::object object;
  try {
    py::dict kwargs;
    for (const auto& [key, value] : params_.values()) kwargs[py::str(key)] = param_value_to_python(value);
    object = (*factory_)(**kwargs);
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_ValueError)) throw ValueError(str(spec_, ": the factory raised ", first_line(e)));
    throw RuntimeError(str(spec_, ": the factory raised ", first_line(e)));
  }
  return std::make_unique<PyExecutor>(std::move(object), spec_, std::move(models));
}

serve::ExecutorRegistry::Entry python_executor_entry(std::string name, std::string doc, std::vector<ParamSpec> params,
                                                     py::object factory) {
  auto shared = shared_python_object(std::move(factory));
  // Runs with or without the GIL (make_executor releases it): it touches no Python object.
  auto make = [shared](const Params& p) -> std::shared_ptr<serve::ExecutorBuilder> {
    return std::make_shared<PyExecutorBuilder>(shared, p);
  };
  return {std::move(name), std::move(doc), std::move(params), std::move(make)};
}

}  // namespace servelab::bindings
