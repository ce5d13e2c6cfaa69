// servelab._core: the one private extension module. Each area's bindings live in bind_<area>.cpp.
#include <pybind11/pybind11.h>

#include "errors.hpp"

namespace servelab::bindings {
void init_core(pybind11::module_& m);
void init_exec(pybind11::module_& m);
void init_workload(pybind11::module_& m);
void init_sizes(pybind11::module_& m);
void init_profile(pybind11::module_& m);
void init_sched(pybind11::module_& m);
void init_catalogue(pybind11::module_& m);
void init_sim(pybind11::module_& m);
void init_serve(pybind11::module_& m);
// Generic solvers, in _core.solvers.
void init_lap(pybind11::module_& solvers);
void init_mdp(pybind11::module_& solvers);
void init_search(pybind11::module_& solvers);
// The systems, each in its own submodule (_core.kairos, _core.ramsis).
void init_kairos(pybind11::module_& kairos);
void init_ramsis(pybind11::module_& ramsis);
void init_ramsis_sim(pybind11::module_& ramsis);
}  // namespace servelab::bindings

PYBIND11_MODULE(_core, m) {
  m.doc() = "servelab's C++ core. Use the public API in the servelab package instead.";
  servelab::bindings::register_error_translators();
  servelab::bindings::init_core(m);
  servelab::bindings::init_exec(m);
  servelab::bindings::init_workload(m);
  servelab::bindings::init_profile(m);
  servelab::bindings::init_sched(m);
  servelab::bindings::init_catalogue(m);  // before sizes: Query must be known when QueryStream is bound
  servelab::bindings::init_sizes(m);
  servelab::bindings::init_sim(m);
  servelab::bindings::init_serve(m);

  auto solvers = m.def_submodule("solvers", "Generic solvers: assignment, MDPs, search (LP/MILP: servelab._lp).");
  servelab::bindings::init_lap(solvers);
  servelab::bindings::init_mdp(solvers);
  servelab::bindings::init_search(solvers);
  auto kairos = m.def_submodule("kairos", "Kairos (HPDC'23): heterogeneous serving under a cost budget.");
  servelab::bindings::init_kairos(kairos);
  auto ramsis = m.def_submodule("ramsis", "RAMSIS (EuroSys'24): MDP model-selection policies.");
  servelab::bindings::init_ramsis(ramsis);
  servelab::bindings::init_ramsis_sim(ramsis);
}
