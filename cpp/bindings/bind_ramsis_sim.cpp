// Placeholder: filled in by the ramsis_sim bindings.
#include <pybind11/pybind11.h>

namespace servelab::bindings {
void init_ramsis_sim(pybind11::module_& ramsis) {}
}  // namespace servelab::bindings
