// servelab._core bindings of the sizes area.
#include <pybind11/pybind11.h>

namespace servelab::bindings {
void init_sizes(pybind11::module_& m) {}
}  // namespace servelab::bindings
