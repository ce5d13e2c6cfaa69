// servelab._core bindings of the sim area.
#include <pybind11/pybind11.h>

namespace servelab::bindings {
void init_sim(pybind11::module_& m) {}
}  // namespace servelab::bindings
