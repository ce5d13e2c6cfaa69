#include "servelab/catalogue/executors.hpp"

#include "servelab/exec/recsys/executor.hpp"
#include "servelab/serve/remote/remote_executor.hpp"

namespace servelab::catalogue {

const serve::ExecutorRegistry& executors() {
  static const serve::ExecutorRegistry registry = [] {  // thread-safe initialisation
    serve::ExecutorRegistry r("executor");
    // A built-in executor of another area adds its register_<name>_executors(r) call here.
    serve::register_serve_executors(r);
    exec::recsys::register_recsys_executors(r);
    serve::remote::register_remote_executors(r);
    return std::move(r).freeze();
  }();
  return registry;
}

}  // namespace servelab::catalogue
