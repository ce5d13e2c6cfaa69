// servelab._core.HttpEngine (frontend/http_engine.hpp): the front-end's HTTP/REST engine in C++,
// serving a ServingSession's applications with no GIL on the request path. The GIL is taken only
// for the routes it forwards (metrics, statistics), on the engine's own forwarding thread.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cctype>
#include <chrono>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "frontend_binding.hpp"
#include "long_call.hpp"
#include "python_executor.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/frontend/codec.hpp"
#include "servelab/frontend/http_engine.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

std::chrono::steady_clock::duration seconds_arg(double s, const char* name) {
  if (!(s >= 0)) throw ValueError(str(name, "=", s, " must be >= 0"));
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::min(s, 3600.0)));
}

class PyHttpEngine {
 public:
  explicit PyHttpEngine(std::unique_ptr<frontend::HttpEngine> engine) : engine_(std::move(engine)) {}
  ~PyHttpEngine() {
    // Stopping joins the forwarding thread, which may wait for the GIL.
    if (PyGILState_Check()) {
      py::gil_scoped_release released;
      engine_.reset();
    } else {
      engine_.reset();
    }
  }

  int port() const { return engine_->port(); }
  void drain() { engine_->drain(); }
  bool wait_idle(double timeout_s) {
    const auto timeout = seconds_arg(timeout_s, "timeout_s");
    py::gil_scoped_release released;
    return engine_->wait_idle(timeout);
  }
  void stop(double grace_s) {
    const auto grace = seconds_arg(grace_s, "grace_s");
    py::gil_scoped_release released;
    engine_->stop(grace);
  }
  std::int64_t inflight() const { return engine_->inflight(); }
  std::int64_t reading() const { return engine_->reading(); }
  void add_external(std::int64_t delta) { engine_->add_external(delta); }
  std::int64_t load() const { return engine_->load(); }

  py::dict counters() const {
    const auto c = engine_->counters();
    py::dict values;
    for (std::size_t f = 0; f < frontend::kFamilies; ++f) values[frontend::kModelFamilies[f]] = c.values[f];
    py::dict out;
    out["values"] = std::move(values);
    out["refused"] = c.refused;
    out["inflight"] = c.inflight;
    out["busy_s"] = c.busy_s;
    out["last_inference_ms"] = c.last_inference_ms;
    return out;
  }

 private:
  std::unique_ptr<frontend::HttpEngine> engine_;
};

frontend::InputSpec input_spec(const std::string& model, const py::handle& value) {
  auto t = value.cast<py::tuple>();
  if (t.size() != 2) throw ValueError(str("inputs[", model, "] must be (datatype, dims)"));
  frontend::InputSpec spec;
  spec.dtype = frontend::parse_datatype(t[0].cast<std::string>(), "inputs[" + model + "].datatype");
  spec.dims = t[1].cast<std::vector<std::int64_t>>();
  return spec;
}

}  // namespace

py::object start_http_engine(serve::Session& session, const py::kwargs& kw) {
  frontend::EngineOptions o;
  for (const auto& [key, value] : kw) {
    const auto name = key.cast<std::string>();
    if (name == "host") {
      o.host = value.cast<std::string>();
    } else if (name == "port") {
      const auto port = value.cast<int>();
      if (port < 0 || port > 65535) throw ValueError(str("port=", port, " must be in [0, 65535]"));
      o.port = static_cast<std::uint16_t>(port);
    } else if (name == "threads") {
      o.threads = value.cast<int>();
    } else if (name == "token") {
      if (!value.is_none()) o.token = value.cast<std::string>();
    } else if (name == "max_body_bytes") {
      o.limits.max_body_bytes = value.cast<std::int64_t>();
    } else if (name == "max_concurrent") {
      o.limits.max_concurrent = value.cast<std::int64_t>();
    } else if (name == "request_timeout_s") {
      o.limits.request_timeout_s = value.cast<double>();
    } else if (name == "inputs") {
      for (const auto& [model, spec] : value.cast<py::dict>()) {
        const auto m = model.cast<std::string>();
        o.inputs[m] = input_spec(m, spec);
      }
    } else if (name == "float_width") {
      if (!value.is_none()) o.float_width = value.cast<std::int64_t>();
    } else if (name == "server_version") {
      o.server_version = value.cast<std::string>();
    } else if (name == "forward") {
      if (value.is_none()) continue;
      auto fn = shared_python_object(py::reinterpret_borrow<py::object>(value));
      o.forward = [fn](const std::string& method, const std::string& target) {
        if (interpreter_exiting()) return frontend::ForwardedAnswer{503, "text/plain", "the server is stopping"};
        py::gil_scoped_acquire gil;
        try {
          const auto t = (*fn)(method, target).cast<py::tuple>();
          return frontend::ForwardedAnswer{t[0].cast<int>(), t[1].cast<std::string>(), t[2].cast<std::string>()};
        } catch (py::error_already_set& e) {  // converted here, where the GIL is held
          throw RuntimeError(e.what());
        }
      };
    } else {
      throw py::type_error("start_http_engine: unexpected option " + name);
    }
  }
  std::unique_ptr<frontend::HttpEngine> engine;
  try {
    py::gil_scoped_release released;
    engine = std::make_unique<frontend::HttpEngine>(session, std::move(o));
  } catch (const std::system_error& e) {
    // OSError, as the Python engine's bind failure.
    // "address already in use", as Python words it.
    std::string why = e.code().message();
    if (!why.empty()) why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
    std::string what = e.what();
    what = what.substr(0, what.rfind(": ") == std::string::npos ? what.size() : what.rfind(": ")) + ": " + why;
    PyErr_SetObject(PyExc_OSError, py::make_tuple(e.code().value(), what).ptr());
    throw py::error_already_set();
  }
  return py::cast(std::make_unique<PyHttpEngine>(std::move(engine)));
}

void init_frontend(py::module_& m) {
  py::class_<PyHttpEngine>(m, "HttpEngine",
                           "The front-end's HTTP/REST engine in C++ (ServingSession.start_http_engine).")
      .def_property_readonly("port", &PyHttpEngine::port, "The bound port.")
      .def("drain", &PyHttpEngine::drain, "Refuses new inference requests from now on (ready false).")
      .def("wait_idle", &PyHttpEngine::wait_idle, py::arg("timeout_s"),
           "Waits until no accepted request awaits its outcome; True if none does.")
      .def("stop", &PyHttpEngine::stop, py::arg("grace_s"),
           "Drains, waits up to grace_s, answers the requests still waiting with 503 and closes.")
      .def("inflight", &PyHttpEngine::inflight, "Requests accepted and not answered yet.")
      .def("reading", &PyHttpEngine::reading, "Request bodies being read.")
      .def("add_external", &PyHttpEngine::add_external, py::arg("delta"),
           "Another engine's requests sharing max_concurrent: +1 when it takes one, -1 when it ends.")
      .def("load", &PyHttpEngine::load, "This engine's requests in flight and bodies being read.")
      .def("counters", &PyHttpEngine::counters,
           "Its live counters: values[family][model index], refused by reason, inflight, busy_s per worker, "
           "last_inference_ms per model.");
}

}  // namespace servelab::bindings
