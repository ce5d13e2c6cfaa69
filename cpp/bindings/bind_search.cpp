// Placeholder: filled in by the search bindings.
#include <pybind11/pybind11.h>

namespace servelab::bindings {
void init_search(pybind11::module_& solvers) {}
}  // namespace servelab::bindings
