// Linear and mixed-integer linear programs, solved by a real solver library (COIN-OR CLP for pure
// LPs, CBC for MILPs) behind one small interface:
//
//   lp::Model model(lp::Sense::Maximize);
//   const auto x = model.add_variable("x", 0.0, 4.0);                 // continuous in [0, 4]
//   const auto y = model.add_variable("y", 0.0, lp::kInf, lp::VarType::Integer);
//   model.set_objective(x, 3.0);
//   model.set_objective(y, 2.0);
//   model.add_constraint("capacity", {{x, 1.0}, {y, 1.0}}, -lp::kInf, 5.0);  // x + y <= 5
//   const auto solution = lp::solve(model);  // status, objective, values[x], values[y], ...
//
// The backend is optional at build time (SERVELAB_HAS_LP); without it solve() throws
// RuntimeError and available() is false.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#ifndef SERVELAB_HAS_LP
#define SERVELAB_HAS_LP 0
#endif

namespace servelab::solvers::lp {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

enum class Sense { Minimize, Maximize };
enum class VarType { Continuous, Integer };  // a binary variable is an integer one in [0, 1]

struct Term {
  std::int32_t var;
  double coef;
};

// Variables and constraints are numbered in the order they are added. Names are optional (empty
// gives "x<index>" / "c<index>") and unique; every bad value is a ValueError naming it.
class Model {
 public:
  explicit Model(Sense sense = Sense::Minimize) : sense_(sense) {}

  std::int32_t add_variable(std::string_view name = {}, double lower = 0.0, double upper = kInf,
                            VarType type = VarType::Continuous, double objective = 0.0);
  std::int32_t add_binary(std::string_view name = {}, double objective = 0.0) {
    return add_variable(name, 0.0, 1.0, VarType::Integer, objective);
  }
  // lower <= sum coef * x[var] <= upper (either side may be infinite; equal for an equality).
  // Repeated variables in one row are summed.
  std::int32_t add_constraint(std::string_view name, std::span<const Term> terms, double lower, double upper);
  std::int32_t add_constraint(std::string_view name, std::initializer_list<Term> terms, double lower, double upper) {
    return add_constraint(name, std::span<const Term>(terms.begin(), terms.size()), lower, upper);
  }

  void set_sense(Sense sense) { sense_ = sense; }
  void set_objective(std::int32_t var, double coef);  // replaces the variable's coefficient
  void set_objective_offset(double offset);
  void set_bounds(std::int32_t var, double lower, double upper);
  void set_type(std::int32_t var, VarType type);

  Sense sense() const { return sense_; }
  std::int32_t num_variables() const { return static_cast<std::int32_t>(lower_.size()); }
  std::int32_t num_constraints() const { return static_cast<std::int32_t>(row_lower_.size()); }
  std::int64_t num_nonzeros() const { return static_cast<std::int64_t>(row_vars_.size()); }
  bool has_integers() const;
  std::int32_t variable(std::string_view name) const;    // KeyError when unknown
  std::int32_t constraint(std::string_view name) const;  // KeyError when unknown
  const std::string& variable_name(std::int32_t var) const;
  const std::string& constraint_name(std::int32_t row) const;

  // Column data, by variable.
  const std::vector<double>& lower() const { return lower_; }
  const std::vector<double>& upper() const { return upper_; }
  const std::vector<double>& objective() const { return objective_; }
  const std::vector<VarType>& types() const { return types_; }
  double objective_offset() const { return offset_; }
  // Rows in compressed sparse row form: row r has entries row_start()[r] .. row_start()[r + 1).
  const std::vector<std::int64_t>& row_start() const { return row_start_; }
  const std::vector<std::int32_t>& row_vars() const { return row_vars_; }
  const std::vector<double>& row_coefs() const { return row_coefs_; }
  const std::vector<double>& row_lower() const { return row_lower_; }
  const std::vector<double>& row_upper() const { return row_upper_; }

 private:
  void check_var(std::int32_t var, std::string_view what) const;
  static void register_name(const std::string& name, std::int32_t index,
                            std::unordered_map<std::string, std::int32_t>& names, std::string_view kind);

  Sense sense_;
  double offset_ = 0.0;
  std::vector<double> lower_, upper_, objective_;
  std::vector<VarType> types_;
  std::vector<std::string> var_names_, row_names_;
  std::unordered_map<std::string, std::int32_t> var_index_, row_index_;
  std::vector<std::int64_t> row_start_{0};
  std::vector<std::int32_t> row_vars_;
  std::vector<double> row_coefs_, row_lower_, row_upper_;
};

enum class Status {
  Optimal,
  Infeasible,
  Unbounded,       // the objective improves without limit (for a MILP: its LP relaxation does)
  TimeLimit,       // stopped by Options::time_limit_s (has_solution says whether a feasible point is known)
  IterationLimit,  // stopped by Options::iteration_limit (simplex iterations, or B&B nodes for a MILP)
  Error,           // the solver gave up (numerical trouble); message says more
};
std::string_view status_name(Status status);  // "optimal", "infeasible", "unbounded", "time_limit", ...

struct Options {
  double time_limit_s = kInf;
  std::int64_t iteration_limit = -1;  // < 0: none
  double mip_relative_gap = 1e-9;     // a MILP stops once within this fraction of its best bound
  bool verbose = false;               // the solver's own log on stdout
};

struct Solution {
  Status status = Status::Error;
  bool has_solution = false;   // values hold a feasible point (always when optimal)
  double objective = 0.0;      // in the model's sense, including the offset
  std::vector<double> values;  // by variable
  // Pure LPs solved to optimality: d objective / d bound of each constraint (the bound that is
  // active; 0 when none is) and of each variable, in the model's sense (scipy's "marginals").
  std::vector<double> duals, reduced_costs;
  double best_bound = 0.0;      // MILPs: the proven bound on the optimum; LPs: the objective
  std::int64_t iterations = 0;  // simplex iterations (LP) or branch-and-bound nodes (MILP)
  std::string solver;           // e.g. "clp 1.17.6", "cbc 2.10.8"
  std::string message;
};

// Solves with CLP (no integer variables) or CBC. Throws RuntimeError when servelab was built
// without an LP solver, ValueError on bad options; Interrupted on Ctrl-C inside a long call.
Solution solve(const Model& model, const Options& options = {});

bool available();               // compiled with an LP/MILP solver
std::string backend_version();  // "cbc 2.10.8, clp 1.17.6", or "" when not available

}  // namespace servelab::solvers::lp
