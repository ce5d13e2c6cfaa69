// servelab._core: the one private extension module. Each area's bindings live in bind_<area>.cpp.
//
// The init functions run in this order because pybind11 writes a signature when a function is
// bound, naming each argument and return type by its Python name only if that type is registered
// already (a default argument must be registered too): a type comes before every signature that
// names it. So: size distributions, then workloads (Query before QueryStream; ArrivalProcess and
// Application before Workload), profiles, the scheduler interface (its hooks and ClusterView.query
// take Query), the catalogue (make_scheduler returns Scheduler), the executors (ExecutorBuilder),
// the cluster's WorkerGroup, and the two worlds, whose runs take Profile, WorkerGroup, Workload,
// Scheduler and (serve) ExecutorBuilder.
#include <pybind11/pybind11.h>

#include "errors.hpp"

namespace servelab::bindings {
void init_core(pybind11::module_& m);
void init_exec(pybind11::module_& m);
void init_sizes(pybind11::module_& m);
void init_workload(pybind11::module_& m);
void init_profile(pybind11::module_& m);
void init_sched(pybind11::module_& m);
void init_catalogue(pybind11::module_& m);
void init_executors(pybind11::module_& m);
void init_python_executors(pybind11::module_& m);
void init_cluster(pybind11::module_& m);
void init_sim(pybind11::module_& m);
void init_serve(pybind11::module_& m);
void init_session(pybind11::module_& m);
void init_frontend(pybind11::module_& m);
void init_remote(pybind11::module_& m);
void init_recsys(pybind11::module_& recsys);
// Generic solvers, in _core.solvers.
void init_lap(pybind11::module_& solvers);
void init_mdp(pybind11::module_& solvers);
void init_search(pybind11::module_& solvers);
// The systems, each in its own submodule (_core.kairos, _core.ramsis); they come last, as they
// take the core types (Profile, SizeDistribution, Scheduler).
void init_kairos(pybind11::module_& kairos);
void init_ramsis(pybind11::module_& ramsis);
void init_ramsis_sim(pybind11::module_& ramsis);
void init_rrl(pybind11::module_& rrl);
void init_hera(pybind11::module_& hera);
void init_infaas(pybind11::module_& infaas);
}  // namespace servelab::bindings

PYBIND11_MODULE(_core, m) {
  m.doc() = "servelab's C++ core. Use the public API in the servelab package instead.";
  servelab::bindings::register_error_translators();
  servelab::bindings::init_core(m);
  servelab::bindings::init_exec(m);
  servelab::bindings::init_sizes(m);
  servelab::bindings::init_workload(m);
  servelab::bindings::init_profile(m);
  servelab::bindings::init_sched(m);
  servelab::bindings::init_catalogue(m);
  servelab::bindings::init_executors(m);
  servelab::bindings::init_python_executors(m);
  servelab::bindings::init_cluster(m);
  servelab::bindings::init_sim(m);
  servelab::bindings::init_serve(m);
  servelab::bindings::init_session(m);
  servelab::bindings::init_frontend(m);
  servelab::bindings::init_remote(m);

  auto recsys = m.def_submodule("recsys", "Recommendation models: descriptions, weights, inputs, backends.");
  servelab::bindings::init_recsys(recsys);

  auto solvers = m.def_submodule("solvers", "Generic solvers: assignment, MDPs, search (LP/MILP: servelab._lp).");
  servelab::bindings::init_lap(solvers);
  servelab::bindings::init_mdp(solvers);
  servelab::bindings::init_search(solvers);
  auto kairos = m.def_submodule("kairos", "Kairos (HPDC'23): heterogeneous serving under a cost budget.");
  servelab::bindings::init_kairos(kairos);
  auto ramsis = m.def_submodule("ramsis", "RAMSIS (EuroSys'24): MDP model-selection policies.");
  servelab::bindings::init_ramsis(ramsis);
  servelab::bindings::init_ramsis_sim(ramsis);
  auto rrl = m.def_submodule("rrl", "RRL (SC'19): region-based Q-learning of serving parallelism.");
  servelab::bindings::init_rrl(rrl);
  auto hera = m.def_submodule("hera", "Hera (2022): co-locating recommendation models on CPU servers.");
  servelab::bindings::init_hera(hera);
  auto infaas = m.def_submodule("infaas", "INFaaS (ATC'21): model-less serving, variant selection and autoscaling.");
  servelab::bindings::init_infaas(infaas);
}
