// Placeholder: filled in by the ramsis bindings.
#include <pybind11/pybind11.h>

namespace servelab::bindings {
void init_ramsis(pybind11::module_& ramsis) {}
}  // namespace servelab::bindings
