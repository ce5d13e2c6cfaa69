// servelab._core bindings of serving across processes: RemoteWorker (the worker process's server,
// driven by servelab.worker_process), remote_transport() (the per-query transport times that a
// "remote" executor logged) and remote_hosted() (what a remote executor's worker hosts).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "converters.hpp"
#include "long_call.hpp"
#include "numpy_owner.hpp"
#include "servelab/catalogue/executors.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/serve/remote/remote_executor.hpp"
#include "servelab/serve/remote/worker_server.hpp"

namespace py = pybind11;

namespace servelab::bindings {
namespace {

constexpr const char* kTakes[] = {"none", "arrays", "float_rows"};

serve::remote::TakesInputs takes_inputs(const std::string& name) {
  for (std::uint32_t i = 0; i < 3; ++i) {
    if (name == kTakes[i]) return static_cast<serve::remote::TakesInputs>(i);
  }
  throw ValueError(str("inputs='", name, "' must be 'none', 'arrays' or 'float_rows'"));
}

}  // namespace

void init_remote(py::module_& m) {
  py::class_<serve::remote::WorkerServer>(
      m, "RemoteWorker",
      "A worker process's server: listens at `listen` ('unix:PATH' or 'tcp:HOST:PORT'; port 0: any free\n"
      "one) and runs the batches that `remote` executors send, on `executor` (an ExecutorBuilder).")
      .def(py::init([](const std::string& listen, std::shared_ptr<serve::ExecutorBuilder> executor, bool allow_remote,
                       const std::string& inputs, std::int64_t width, const IntArg& max_connections,
                       double hello_timeout_s, double message_timeout_s) {
             serve::remote::WorkerServerOptions options;
             options.listen = serve::remote::parse_address(listen, "listen", /*listen=*/true);
             options.allow_remote = allow_remote;
             options.inputs = takes_inputs(inputs);
             options.width = width;
             options.max_connections = to_int<std::int32_t>(max_connections, "max_connections", 1, 1'000'000);
             const auto millis = [](double s, const char* name) {
               if (!(s >= 0.001 && s <= 86'400))
                 throw ValueError(str(name, "=", s, " must be in 0.001..86400 seconds"));
               return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1e3));
             };
             options.hello_timeout = millis(hello_timeout_s, "hello_timeout_s");
             options.message_timeout = millis(message_timeout_s, "message_timeout_s");
             return std::make_unique<serve::remote::WorkerServer>(std::move(executor), options,
                                                                  &catalogue::executors());
           }),
           py::arg("listen"), py::arg("executor"), py::kw_only(), py::arg("allow_remote") = false,
           py::arg("inputs") = "none", py::arg("width") = 0, py::arg("max_connections") = 64,
           py::arg("hello_timeout_s") = 10.0, py::arg("message_timeout_s") = 30.0,
           "`inputs`: which of a run's inputs the executor reads ('none', 'arrays' for an executor written in\n"
           "Python, 'float_rows' of `width` features for torchscript), told to each controller.\n"
           "At most `max_connections` connections are served at once (one more is refused, naming the limit); a\n"
           "connection must send its hello within hello_timeout_s and finish each message it starts within\n"
           "message_timeout_s, or it is closed; a message's body is allocated as its bytes arrive.")
      .def_property_readonly("address", &serve::remote::WorkerServer::address,
                             "The bound address (a TCP port 0 resolved).")
      .def_property_readonly("executor", &serve::remote::WorkerServer::executor, "The hosted executor's spec.")
      .def(
          "serve", [](serve::remote::WorkerServer& w) { run_long([&] { w.serve(); }); },
          "Serves until stop() or Ctrl-C (KeyboardInterrupt); connections are closed and their threads joined\n"
          "before it returns. Releases the GIL.")
      .def("stop", &serve::remote::WorkerServer::stop, "Makes serve() return (from another thread).");

  m.def(
      "remote_hosted",
      [](const serve::ExecutorBuilder& builder) -> py::object {
        std::optional<serve::remote::HostedExecutor> hosted;
        run_long([&] { hosted = serve::remote::probe_hosted(builder); });
        if (!hosted) return py::none();
        py::dict out;
        out["executor"] = hosted->executor;
        out["inputs"] = kTakes[static_cast<std::uint32_t>(hosted->inputs)];
        out["width"] = hosted->width;
        return out;
      },
      py::arg("builder"),
      "For a `remote` executor: what its worker process hosts, asked over a connection of its own\n"
      "({'executor', 'inputs': 'none' | 'arrays' | 'float_rows', 'width'}); None for any other executor.\n"
      "RuntimeError naming the address when unreachable. Releases the GIL.");

  m.def(
      "remote_transport",
      [] {
        std::int64_t not_kept = 0;
        const auto batches = serve::remote::TransportLog::global().take(not_kept);
        std::vector<std::int64_t> query, worker, batch, round_trip, worker_time;
        std::vector<std::uint8_t> ok;
        py::list address;
        for (const auto& b : batches) {
          const py::str where(b.address);
          for (const auto q : b.queries) {
            query.push_back(q);
            worker.push_back(b.worker);
            batch.push_back(static_cast<std::int64_t>(b.batch));
            round_trip.push_back(b.round_trip);
            worker_time.push_back(b.worker_time);
            ok.push_back(b.ok ? 1 : 0);
            address.append(where);
          }
        }
        py::dict out;
        out["address"] = address;
        out["worker"] = to_numpy(std::move(worker));
        out["query"] = to_numpy(std::move(query));
        out["batch"] = to_numpy(std::move(batch));
        out["round_trip_ns"] = to_numpy(std::move(round_trip));
        out["worker_ns"] = to_numpy(std::move(worker_time));
        out["ok"] = to_numpy(std::move(ok)).attr("astype")("bool");
        out["batches_not_kept"] = not_kept;
        return out;
      },
      "Every query that this process's remote executors sent since the last call, one row each:\n"
      "{'address', 'worker', 'query', 'batch', 'round_trip_ns' (at the controller), 'worker_ns' (on the\n"
      "worker, -1: no reply), 'ok'}, plus 'batches_not_kept' (past the log's limit). Empties the log.");
}

}  // namespace servelab::bindings
