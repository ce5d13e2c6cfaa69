// Placeholder: filled in by the lap bindings.
#include <pybind11/pybind11.h>

namespace servelab::bindings {
void init_lap(pybind11::module_& solvers) {}
}  // namespace servelab::bindings
