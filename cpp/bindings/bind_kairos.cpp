// Placeholder: filled in by the kairos bindings.
#include <pybind11/pybind11.h>

namespace servelab::bindings {
void init_kairos(pybind11::module_& kairos) {}
}  // namespace servelab::bindings
