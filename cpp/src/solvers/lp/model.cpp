// The model builder: validation and storage only; the solver adapter reads the arrays.
#include <algorithm>
#include <cmath>

#include "servelab/core/errors.hpp"
#include "servelab/solvers/lp/lp.hpp"

namespace servelab::solvers::lp {
namespace {

void check_bounds(double lower, double upper, std::string_view kind, const std::string& name) {
  if (std::isnan(lower) || lower == kInf)
    throw ValueError(str(kind, " '", name, "': lower bound ", lower, " must be a number below +inf"));
  if (std::isnan(upper) || upper == -kInf)
    throw ValueError(str(kind, " '", name, "': upper bound ", upper, " must be a number above -inf"));
  if (lower > upper) throw ValueError(str(kind, " '", name, "': lower bound ", lower, " > upper bound ", upper));
}

}  // namespace

void Model::register_name(const std::string& name, std::int32_t index,
                          std::unordered_map<std::string, std::int32_t>& names, std::string_view kind) {
  if (!names.emplace(name, index).second) throw ValueError(str(kind, " name '", name, "' is already used"));
}

std::int32_t Model::add_variable(std::string_view name, double lower, double upper, VarType type, double objective) {
  const auto index = num_variables();
  std::string full = name.empty() ? str('x', index) : std::string(name);
  check_bounds(lower, upper, "variable", full);
  if (!std::isfinite(objective))
    throw ValueError(str("variable '", full, "': objective coefficient ", objective, " is not finite"));
  register_name(full, index, var_index_, "variable");
  var_names_.push_back(std::move(full));
  lower_.push_back(lower);
  upper_.push_back(upper);
  objective_.push_back(objective);
  types_.push_back(type);
  return index;
}

std::int32_t Model::add_constraint(std::string_view name, std::span<const Term> terms, double lower, double upper) {
  const auto index = num_constraints();
  std::string full = name.empty() ? str('c', index) : std::string(name);
  check_bounds(lower, upper, "constraint", full);
  for (const auto& t : terms) {
    check_var(t.var, str("constraint '", full, "'"));
    if (!std::isfinite(t.coef))
      throw ValueError(str("constraint '", full, "': coefficient of variable '", var_names_[t.var], "' is ", t.coef));
  }
  register_name(full, index, row_index_, "constraint");
  row_names_.push_back(std::move(full));
  // Sorted by variable with repeats summed: the solvers expect one entry per (row, column).
  const auto begin = row_vars_.size();
  std::vector<Term> sorted(terms.begin(), terms.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const Term& a, const Term& b) { return a.var < b.var; });
  for (const auto& t : sorted) {
    if (row_vars_.size() > begin && row_vars_.back() == t.var) {
      row_coefs_.back() += t.coef;
    } else {
      row_vars_.push_back(t.var);
      row_coefs_.push_back(t.coef);
    }
  }
  row_start_.push_back(static_cast<std::int64_t>(row_vars_.size()));
  row_lower_.push_back(lower);
  row_upper_.push_back(upper);
  return index;
}

void Model::check_var(std::int32_t var, std::string_view what) const {
  if (var < 0 || var >= num_variables())
    throw ValueError(
        str(what, ": variable index ", var, " is out of range (the model has ", num_variables(), " variables)"));
}

void Model::set_objective(std::int32_t var, double coef) {
  check_var(var, "set_objective");
  if (!std::isfinite(coef))
    throw ValueError(str("variable '", var_names_[var], "': objective coefficient ", coef, " is not finite"));
  objective_[var] = coef;
}

void Model::set_objective_offset(double offset) {
  if (!std::isfinite(offset)) throw ValueError(str("objective offset ", offset, " is not finite"));
  offset_ = offset;
}

void Model::set_bounds(std::int32_t var, double lower, double upper) {
  check_var(var, "set_bounds");
  check_bounds(lower, upper, "variable", var_names_[var]);
  lower_[var] = lower;
  upper_[var] = upper;
}

void Model::set_type(std::int32_t var, VarType type) {
  check_var(var, "set_type");
  types_[var] = type;
}

bool Model::has_integers() const {
  return std::any_of(types_.begin(), types_.end(), [](VarType t) { return t == VarType::Integer; });
}

std::int32_t Model::variable(std::string_view name) const {
  const auto it = var_index_.find(std::string(name));
  if (it == var_index_.end()) throw KeyError(str("no variable named '", name, "' in the model"));
  return it->second;
}

std::int32_t Model::constraint(std::string_view name) const {
  const auto it = row_index_.find(std::string(name));
  if (it == row_index_.end()) throw KeyError(str("no constraint named '", name, "' in the model"));
  return it->second;
}

const std::string& Model::variable_name(std::int32_t var) const {
  if (var < 0 || var >= num_variables()) throw KeyError(str("variable index ", var, " is out of range"));
  return var_names_[var];
}

const std::string& Model::constraint_name(std::int32_t row) const {
  if (row < 0 || row >= num_constraints()) throw KeyError(str("constraint index ", row, " is out of range"));
  return row_names_[row];
}

std::string_view status_name(Status status) {
  switch (status) {
    case Status::Optimal:
      return "optimal";
    case Status::Infeasible:
      return "infeasible";
    case Status::Unbounded:
      return "unbounded";
    case Status::TimeLimit:
      return "time_limit";
    case Status::IterationLimit:
      return "iteration_limit";
    case Status::Error:
      return "error";
  }
  return "error";
}

}  // namespace servelab::solvers::lp
