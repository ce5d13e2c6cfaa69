// servelab._core bindings of the sched area.
#include <pybind11/pybind11.h>

namespace servelab::bindings {
void init_sched(pybind11::module_& m) {}
}  // namespace servelab::bindings
