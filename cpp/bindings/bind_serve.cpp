// servelab._core bindings of the serve area.
#include <pybind11/pybind11.h>

namespace servelab::bindings {
void init_serve(pybind11::module_& m) {}
}  // namespace servelab::bindings
