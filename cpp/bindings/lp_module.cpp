// servelab._lp: the LP/MILP adapter (COIN-OR CLP/CBC) and what stands on it (Kairos's fluid
// bound), a separate extension module so that importing servelab never needs CBC's libraries;
// servelab.solvers.lp and servelab.kairos.fluid load it on first use.
#include <pybind11/pybind11.h>

#include "errors.hpp"

namespace servelab::bindings {
void init_lp(pybind11::module_& m);
void init_kairos_fluid(pybind11::module_& kairos);
void init_infaas_ilp(pybind11::module_& infaas);
}  // namespace servelab::bindings

PYBIND11_MODULE(_lp, m) {
  m.doc() = "servelab's LP/MILP solver adapter. Use servelab.solvers.lp instead.";
  servelab::bindings::register_error_translators();
  pybind11::module_::import("servelab._core");  // registers Profile, read by the fluid bound
  servelab::bindings::init_lp(m);
  auto kairos = m.def_submodule("kairos", "Kairos's fluid LP upper bound.");
  servelab::bindings::init_kairos_fluid(kairos);
  auto infaas = m.def_submodule("infaas", "INFaaS's Model-Autoscaler integer program.");
  servelab::bindings::init_infaas_ilp(infaas);
}
