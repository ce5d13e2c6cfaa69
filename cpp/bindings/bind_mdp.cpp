// Placeholder: filled in by the mdp bindings.
#include <pybind11/pybind11.h>

namespace servelab::bindings {
void init_mdp(pybind11::module_& solvers) {}
}  // namespace servelab::bindings
