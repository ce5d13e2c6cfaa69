// The Model-Autoscaler's solvers by name (scaling_solvers.hpp): "greedy" built in, "ilp" joining
// from servelab._lp (core/plugin_table.hpp).
#include "servelab/systems/infaas/scaling_solvers.hpp"

#include <utility>

#include "servelab/core/errors.hpp"
#include "servelab/core/plugin_table.hpp"

namespace servelab::infaas {
namespace {

PluginTable<ScalingSolver>& table() {
  static PluginTable<ScalingSolver> t("scaling solver", {{"greedy", &greedy_scaling}});
  return t;
}

}  // namespace

void register_scaling_solver(const std::string& name, ScalingSolver solver, const std::string& origin) {
  table().join(name, std::move(solver), origin);
}

bool has_scaling_solver(const std::string& name) { return table().contains(name); }

std::vector<std::string> scaling_solvers() { return table().names(); }

std::string scaling_solver_origin(const std::string& name) { return table().origin(name); }

void set_scaling_solver_loader(ScalingSolverLoader loader) { table().set_loader(std::move(loader)); }

ScalingSolver scaling_solver(const std::string& name, const std::string& field) {
  std::string why;
  if (auto solver = table().find(name, &why)) return *solver;
  if (!why.empty()) throw RuntimeError(str(field, "='", name, "' needs ", why));
  std::string known;
  for (const auto& n : table().names()) known += (known.empty() ? "'" : ", '") + n + "'";
  // The loader has tried the LP backend: without it here, say where 'ilp' would come from.
  const char* missing = table().contains("ilp") ? "" : "; 'ilp' needs servelab's LP backend (servelab._lp)";
  throw ValueError(str(field, "='", name, "' is not a scaling solver (registered: ", known, missing, ")"));
}

}  // namespace servelab::infaas
