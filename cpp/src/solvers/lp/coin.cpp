// The COIN-OR backend: CLP's simplex for LPs, CBC's branch and cut (with its default cuts,
// heuristics and preprocessing, as the cbc program runs it) for MILPs.
#include "servelab/solvers/lp/lp.hpp"

#if SERVELAB_HAS_LP

#include <CbcConfig.h>
#include <ClpConfig.h>

#include <CbcEventHandler.hpp>
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <ClpEventHandler.hpp>
#include <ClpSimplex.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>
#include <cmath>
#include <csignal>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "backend.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"

namespace servelab::solvers::lp::backend {
namespace {

// Asks check_interrupt() without letting its exception unwind through the solver's C++ code; the
// solver is told to stop instead, and solve() throws once it has returned.
bool stop_requested(bool& interrupted) {
  if (interrupted) return true;
  try {
    core::check_interrupt();
  } catch (const Interrupted&) {
    interrupted = true;
  }
  return interrupted;
}

// COIN's entry points are not safe to run concurrently: ClpSimplex::initialSolve saves the
// SIGINT handler, installs its own and puts the saved one back, so two threads interleaving
// leave CLP's handler installed and Ctrl-C never reaches the host (Python) again. CbcMain0/1
// also parse their arguments through process-wide state. Every solve therefore holds this lock,
// and puts back the SIGINT disposition it found even if the solver does not.
class CoinSolveGuard {
 public:
  CoinSolveGuard() : lock_(mutex()) { sigaction(SIGINT, nullptr, &saved_); }
  ~CoinSolveGuard() { sigaction(SIGINT, &saved_, nullptr); }
  CoinSolveGuard(const CoinSolveGuard&) = delete;
  CoinSolveGuard& operator=(const CoinSolveGuard&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  std::lock_guard<std::mutex> lock_;
  struct sigaction saved_ {};
};

class ClpStop : public ClpEventHandler {
 public:
  explicit ClpStop(bool* interrupted) : interrupted_(interrupted) {}
  int event(Event which) override {
    if (which == endOfIteration && stop_requested(*interrupted_)) return 0;  // 0: stop (status 5)
    return -1;
  }
  ClpEventHandler* clone() const override { return new ClpStop(*this); }

 private:
  bool* interrupted_;
};

class CbcStop : public CbcEventHandler {
 public:
  explicit CbcStop(bool* interrupted) : interrupted_(interrupted) {}
  CbcAction event(CbcEvent which) override {
    return (which == node || which == treeStatus) && stop_requested(*interrupted_) ? stop : noAction;
  }
  CbcEventHandler* clone() const override { return new CbcStop(*this); }

 private:
  bool* interrupted_;
};

struct CoinData {
  CoinPackedMatrix matrix;
  std::vector<double> lower, upper, row_lower, row_upper;
};

// COIN takes anything beyond 1e30 as infinite; pass its own infinity to be explicit.
double coin_bound(double x) {
  if (x == kInf) return COIN_DBL_MAX;
  if (x == -kInf) return -COIN_DBL_MAX;
  return x;
}

CoinData to_coin(const Model& model) {
  const auto rows = model.num_constraints(), cols = model.num_variables();
  if (model.num_nonzeros() > std::numeric_limits<CoinBigIndex>::max())
    throw ValueError(str("the model has ", model.num_nonzeros(), " nonzeros, more than the solver supports"));
  std::vector<CoinBigIndex> start(model.row_start().begin(), model.row_start().end());
  std::vector<int> length(rows);
  for (std::int32_t r = 0; r < rows; ++r) length[r] = static_cast<int>(start[r + 1] - start[r]);
  CoinData data;
  data.matrix = CoinPackedMatrix(false, cols, rows, static_cast<CoinBigIndex>(model.num_nonzeros()),
                                 model.row_coefs().data(), model.row_vars().data(), start.data(), length.data());
  for (std::int32_t j = 0; j < cols; ++j) {
    data.lower.push_back(coin_bound(model.lower()[j]));
    data.upper.push_back(coin_bound(model.upper()[j]));
  }
  for (std::int32_t r = 0; r < rows; ++r) {
    data.row_lower.push_back(coin_bound(model.row_lower()[r]));
    data.row_upper.push_back(coin_bound(model.row_upper()[r]));
  }
  return data;
}

double objective_of(const Model& model, const std::vector<double>& x) {
  double total = model.objective_offset();
  for (std::int32_t j = 0; j < model.num_variables(); ++j) total += model.objective()[j] * x[j];
  return total;
}

}  // namespace

std::string version() { return str("cbc ", CBC_VERSION, ", clp ", CLP_VERSION); }

Solution solve_lp(const Model& model, const Options& options) {
  const auto data = to_coin(model);
  const auto cols = model.num_variables(), rows = model.num_constraints();
  ClpSimplex simplex;
  simplex.setLogLevel(options.verbose ? 1 : 0);
  simplex.loadProblem(data.matrix, data.lower.data(), data.upper.data(), model.objective().data(),
                      data.row_lower.data(), data.row_upper.data());
  simplex.setOptimizationDirection(model.sense() == Sense::Maximize ? -1.0 : 1.0);
  if (std::isfinite(options.time_limit_s)) simplex.setMaximumSeconds(options.time_limit_s);
  if (options.iteration_limit >= 0)
    simplex.setMaximumIterations(static_cast<int>(std::min<std::int64_t>(options.iteration_limit, 2'000'000'000)));
  bool interrupted = false;
  ClpStop stop(&interrupted);
  simplex.passInEventHandler(&stop);
  {
    const CoinSolveGuard guard;
    simplex.initialSolve();  // presolve, then the dual simplex (CLP's default choice)
  }
  if (interrupted) throw Interrupted();

  Solution s;
  s.solver = str("clp ", CLP_VERSION);
  s.iterations = simplex.numberIterations();
  switch (simplex.status()) {
    case 0:
      s.status = Status::Optimal;
      break;
    case 1:
      s.status = Status::Infeasible;
      break;
    case 2:
      s.status = Status::Unbounded;
      break;
    case 3:
      s.status = simplex.secondaryStatus() == 9 ? Status::TimeLimit : Status::IterationLimit;
      break;
    default:
      s.status = Status::Error;
      break;
  }
  s.has_solution = s.status == Status::Optimal ||
                   (s.status != Status::Infeasible && s.status != Status::Unbounded && simplex.primalFeasible());
  if (s.has_solution) {
    const double* x = simplex.primalColumnSolution();
    s.values.assign(x, x + cols);
    s.objective = s.best_bound = objective_of(model, s.values);
  }
  if (s.status == Status::Optimal) {
    // CLP reports both already as d objective / d bound in the problem's own sense.
    const double* y = simplex.dualRowSolution();
    const double* d = simplex.dualColumnSolution();
    s.duals.assign(y, y + rows);
    s.reduced_costs.assign(d, d + cols);
  }
  s.message = std::string(status_name(s.status));
  if (s.status == Status::Error)
    s.message = str("CLP stopped with status ", simplex.status(), " (secondary ", simplex.secondaryStatus(),
                    "): numerical difficulties");
  return s;
}

Solution solve_mip(const Model& model, const Options& options) {
  const auto data = to_coin(model);
  const auto cols = model.num_variables();
  OsiClpSolverInterface osi;
  osi.messageHandler()->setLogLevel(options.verbose ? 1 : 0);
  osi.loadProblem(data.matrix, data.lower.data(), data.upper.data(), model.objective().data(), data.row_lower.data(),
                  data.row_upper.data());
  osi.setObjSense(model.sense() == Sense::Maximize ? -1.0 : 1.0);
  for (std::int32_t j = 0; j < cols; ++j)
    if (model.types()[j] == VarType::Integer) osi.setInteger(j);

  const CoinSolveGuard guard;  // one COIN solve at a time, SIGINT handler restored
  CbcModel cbc(osi);
  CbcSolverUsefulData settings;
  settings.noPrinting_ = !options.verbose;
  settings.useSignalHandler_ = false;  // Ctrl-C belongs to the host program (see CbcStop)
  CbcMain0(cbc, settings);
  bool interrupted = false;
  CbcStop stop(&interrupted);
  cbc.passInEventHandler(&stop);

  // The cbc program's own command line: default cuts, heuristics and preprocessing.
  std::vector<std::string> args = {"servelab", "-log", options.verbose ? "1" : "0"};
  if (std::isfinite(options.time_limit_s)) args.insert(args.end(), {"-seconds", str(options.time_limit_s)});
  if (options.iteration_limit >= 0) args.insert(args.end(), {"-maxNodes", str(options.iteration_limit)});
  args.insert(args.end(), {"-ratioGap", str(options.mip_relative_gap), "-solve", "-quit"});
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  CbcMain1(
      static_cast<int>(argv.size()), argv.data(), cbc, [](CbcModel*, int) { return 0; }, settings);
  if (interrupted) throw Interrupted();

  Solution s;
  s.solver = str("cbc ", CBC_VERSION);
  s.iterations = cbc.getNodeCount();
  const double* best = cbc.bestSolution();
  s.has_solution = best != nullptr;
  if (s.has_solution) {
    s.values.assign(best, best + cols);
    // CBC accepts integers within 1e-6; hand out exact ones.
    for (std::int32_t j = 0; j < cols; ++j)
      if (model.types()[j] == VarType::Integer) s.values[j] = std::round(s.values[j]);
    s.objective = objective_of(model, s.values);
  }
  // secondaryStatus: 0 done, 1 infeasible, 2 gap reached, 3 node limit, 4 time, 5 event,
  // 6 solution limit, 7 relaxation unbounded, 8 iteration limit.
  switch (cbc.secondaryStatus()) {
    case 0:
    case 2:
      s.status = s.has_solution ? Status::Optimal : Status::Infeasible;
      break;
    case 1:
      s.status = Status::Infeasible;
      break;
    case 4:
      s.status = Status::TimeLimit;
      break;
    case 3:
    case 8:
      s.status = Status::IterationLimit;
      break;
    case 7:
      s.status = Status::Unbounded;
      break;
    default:
      s.status = cbc.isProvenOptimal() && s.has_solution ? Status::Optimal
                 : cbc.isProvenInfeasible()              ? Status::Infeasible
                                                         : Status::Error;
  }
  s.best_bound = s.status == Status::Optimal ? s.objective : cbc.getBestPossibleObjValue() + model.objective_offset();
  s.message = std::string(status_name(s.status));
  if (s.status == Status::Error)
    s.message = str("CBC stopped with status ", cbc.status(), " (secondary ", cbc.secondaryStatus(), ")");
  return s;
}

}  // namespace servelab::solvers::lp::backend

#endif  // SERVELAB_HAS_LP
