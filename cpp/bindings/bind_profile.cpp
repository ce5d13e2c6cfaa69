// servelab._core bindings of the profile area.
#include <pybind11/pybind11.h>

namespace servelab::bindings {
void init_profile(pybind11::module_& m) {}
}  // namespace servelab::bindings
