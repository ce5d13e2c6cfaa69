// Placeholder: filled in by the lp bindings.
#include <pybind11/pybind11.h>

namespace servelab::bindings {
void init_lp(pybind11::module_& solvers) {}
}  // namespace servelab::bindings
