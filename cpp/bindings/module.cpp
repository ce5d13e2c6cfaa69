// servelab._core: the one private extension module. Each area's bindings live in bind_<area>.cpp.
#include <pybind11/pybind11.h>

#include "errors.hpp"

namespace servelab::bindings {
void init_core(pybind11::module_& m);
void init_exec(pybind11::module_& m);
void init_workload(pybind11::module_& m);
void init_sizes(pybind11::module_& m);
void init_profile(pybind11::module_& m);
void init_sched(pybind11::module_& m);
void init_sim(pybind11::module_& m);
void init_serve(pybind11::module_& m);
}  // namespace servelab::bindings

PYBIND11_MODULE(_core, m) {
  m.doc() = "servelab's C++ core. Use the public API in the servelab package instead.";
  servelab::bindings::register_error_translators();
  servelab::bindings::init_core(m);
  servelab::bindings::init_exec(m);
  servelab::bindings::init_workload(m);
  servelab::bindings::init_profile(m);
  servelab::bindings::init_sched(m);  // before sizes: Query must be known when QueryStream is bound
  servelab::bindings::init_sizes(m);
  servelab::bindings::init_sim(m);
  servelab::bindings::init_serve(m);
}
