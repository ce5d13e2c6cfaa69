// The Model-Autoscaler's solvers by name (scaling_solvers.hpp). Modules join while Python imports
// them and policies are built on any thread, so the table is behind a mutex; the loader and the
// solvers run outside it.
#include "servelab/systems/infaas/scaling_solvers.hpp"

#include <map>
#include <mutex>

#include "servelab/core/errors.hpp"

namespace servelab::infaas {
namespace {

constexpr const char* kBuiltIn = "servelab._core";

struct Registered {
  ScalingSolver solver;
  std::string origin;
};

struct Table {
  std::mutex mutex;
  std::map<std::string, Registered> solvers{{"greedy", {&greedy_scaling, kBuiltIn}}};
  ScalingSolverLoader loader;
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

void register_scaling_solver(const std::string& name, ScalingSolver solver, const std::string& origin) {
  if (name.empty() || !solver) throw ValueError("a scaling solver needs a name and a function");
  auto& t = table();
  std::lock_guard lock(t.mutex);
  const auto it = t.solvers.find(name);
  if (it != t.solvers.end() && it->second.origin != origin) {
    throw ValueError(str("scaling solver '", name, "' is already registered by ", it->second.origin));
  }
  t.solvers[name] = {std::move(solver), origin};
}

bool has_scaling_solver(const std::string& name) {
  auto& t = table();
  std::lock_guard lock(t.mutex);
  return t.solvers.contains(name);
}

std::vector<std::string> scaling_solvers() {
  auto& t = table();
  std::lock_guard lock(t.mutex);
  std::vector<std::string> out;
  for (const auto& [name, _] : t.solvers) out.push_back(name);
  return out;
}

std::string scaling_solver_origin(const std::string& name) {
  auto& t = table();
  std::lock_guard lock(t.mutex);
  const auto it = t.solvers.find(name);
  return it == t.solvers.end() ? std::string() : it->second.origin;
}

void set_scaling_solver_loader(ScalingSolverLoader loader) {
  auto& t = table();
  std::lock_guard lock(t.mutex);
  t.loader = std::move(loader);
}

ScalingSolver scaling_solver(const std::string& name, const std::string& field) {
  auto& t = table();
  ScalingSolverLoader loader;
  {
    std::lock_guard lock(t.mutex);
    const auto it = t.solvers.find(name);
    if (it != t.solvers.end()) return it->second.solver;
    loader = t.loader;
  }
  if (loader) {
    const std::string why = loader(name);  // outside the lock: the module registers as it loads
    if (!why.empty()) throw RuntimeError(str(field, "='", name, "' needs ", why));
  }
  std::lock_guard lock(t.mutex);
  const auto it = t.solvers.find(name);
  if (it != t.solvers.end()) return it->second.solver;
  std::string known;
  for (const auto& [n, _] : t.solvers) known += (known.empty() ? "'" : ", '") + n + "'";
  // The loader has tried the LP backend: without it here, say where 'ilp' would come from.
  const char* missing = t.solvers.contains("ilp") ? "" : "; 'ilp' needs servelab's LP backend (servelab._lp)";
  throw ValueError(str(field, "='", name, "' is not a scaling solver (registered: ", known, missing, ")"));
}

}  // namespace servelab::infaas
