// Bayesian optimisation as in Ribbon (SC'21): a Gaussian process on the evaluated configs, then
// the unpruned, unevaluated config with the largest expected improvement (with exploration xi) is
// evaluated next. Pruned configs are skipped by the acquisition, as Ribbon's "ei_prune" does.
//
// The GP models a score in [0, 1]-like units so that xi means the same on every problem:
// Ribbon's score when minimising cost (see SearchState::fitness), value / best |value| when
// maximising. Inputs are the raw counts, as in Ribbon (one instance is one unit of distance in
// every dimension), or each count scaled to [0, 1] with normalize=true. On Ribbon's lookup tables
// raw counts reach the optimum in fewer evaluations than normalised ones.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "gaussian_process.hpp"
#include "methods.hpp"
#include "search_state.hpp"

namespace servelab::solvers::search {
namespace {

std::vector<double> log_grid(double low, double high, std::int64_t count) {
  std::vector<double> grid;
  for (std::int64_t k = 0; k < count; ++k) {
    const double t = count == 1 ? 0.0 : static_cast<double>(k) / static_cast<double>(count - 1);
    grid.push_back(low * std::pow(high / low, t));
  }
  return grid;
}

class Inputs {
 public:
  Inputs(const SearchSpace& space, bool normalize) {
    for (const auto& dim : space.dimensions()) {
      offset_.push_back(normalize ? static_cast<double>(dim.lower) : 0.0);
      const auto width = static_cast<double>(dim.upper - dim.lower);
      scale_.push_back(normalize && width > 0 ? 1.0 / width : 1.0);
      widest_ = std::max(widest_, width);
    }
    if (normalize) widest_ = 1.0;
  }
  Eigen::MatrixXd rows(const std::vector<std::size_t>& points, const SearchState& state) const {
    Eigen::MatrixXd x(static_cast<Eigen::Index>(points.size()), static_cast<Eigen::Index>(offset_.size()));
    for (std::size_t r = 0; r < points.size(); ++r) {
      const Config& c = state.point(points[r]);
      for (std::size_t d = 0; d < c.size(); ++d) {
        x(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(d)) =
            (static_cast<double>(c[d]) - offset_[d]) * scale_[d];
      }
    }
    return x;
  }
  // The extent of the input box, so the length-scale grid follows the input units.
  double widest() const { return std::max(widest_, 1.0); }

 private:
  std::vector<double> offset_, scale_;
  double widest_ = 0.0;
};

double expected_improvement(double mean, double stddev, double best, double xi) {
  const double gain = mean - best - xi;
  if (stddev <= 1e-12) return std::max(gain, 0.0);
  const double z = gain / stddev;
  const double cdf = 0.5 * std::erfc(-z / std::numbers::sqrt2);
  const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2 * std::numbers::pi);
  return gain * cdf + stddev * pdf;
}

SearchResult run_bayesian(const Params& params, const Problem& problem, const SearchOptions& options,
                          const std::string& description) {
  const double xi = params.get_float("xi");
  const auto initial = static_cast<std::size_t>(params.get_int("initial"));
  GaussianProcess::Settings settings;
  settings.kernel = params.get_string("kernel") == "rbf" ? Kernel::Rbf : Kernel::Matern52;
  settings.noise = params.get_float("noise");
  SearchState state(problem, options, description, PruningRules::of(problem));
  const Inputs inputs(problem.space, params.get_bool("normalize"));
  settings.length_scales =
      log_grid(params.get_float("length_scale_min") * inputs.widest(),
               params.get_float("length_scale_max") * inputs.widest(), params.get_int("length_scale_grid"));

  std::vector<std::size_t> observed;
  while (observed.size() < initial && !state.should_stop()) {
    const std::size_t i = random_alive(state);
    state.evaluate(i);
    observed.push_back(i);
  }
  while (!state.should_stop()) {
    Eigen::VectorXd y(static_cast<Eigen::Index>(observed.size()));
    double magnitude = 0.0;
    for (const std::size_t i : observed) magnitude = std::max(magnitude, std::abs(state.fitness(i)));
    const double unit = problem.goal == Goal::MaximizeValue && magnitude > 0 ? magnitude : 1.0;
    for (std::size_t r = 0; r < observed.size(); ++r)
      y(static_cast<Eigen::Index>(r)) = state.fitness(observed[r]) / unit;
    const GaussianProcess gp(inputs.rows(observed, state), y, settings);

    const std::vector<std::size_t> candidates = state.alive_points();
    Eigen::VectorXd mean, stddev;
    gp.predict(inputs.rows(candidates, state), mean, stddev);
    const double best = y.maxCoeff();
    // Largest EI; ties (e.g. EI = 0 everywhere) go to the larger mean, then at random.
    std::vector<std::size_t> ties;
    double top_ei = -1.0, top_mean = 0.0;
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      const auto k = static_cast<Eigen::Index>(c);
      const double ei = expected_improvement(mean(k), stddev(k), best, xi);
      const bool beats = ei > top_ei || (ei == top_ei && mean(k) > top_mean);
      if (beats) {
        top_ei = ei;
        top_mean = mean(k);
        ties.clear();
      }
      if (beats || (ei == top_ei && mean(k) == top_mean)) ties.push_back(candidates[c]);
    }
    const std::size_t next = ties[random_index(ties.size(), state)];
    state.evaluate(next);
    observed.push_back(next);
  }
  return state.finish();
}

}  // namespace

void register_bayesian(Registry<Searcher>& registry) {
  ParamSpec kernel;
  kernel.name = "kernel";
  kernel.type = ParamType::String;
  kernel.default_value = std::string("matern52");
  kernel.doc = "GP kernel: 'matern52' (Ribbon's) or 'rbf'";
  kernel.choices = {"matern52", "rbf"};
  registry.add(method_entry(
      "bayesian",
      "Ribbon's Bayesian optimisation: GP (marginal-likelihood length scale), expected improvement over the "
      "unpruned points.",
      {float_param("xi", 0.1, 0.0, std::nullopt, "exploration margin of expected improvement (score units)"), kernel,
       int_param("initial", 2, 1, "random configs evaluated before the GP takes over (Ribbon: 2)"),
       bool_param("normalize", false, "scale each count to [0, 1] (false: raw counts, as Ribbon)"),
       float_param("noise", 1e-6, 0.0, std::nullopt, "added to the kernel diagonal (scikit-learn's alpha)", true),
       float_param("length_scale_min", 0.05, 0.0, std::nullopt, "smallest length scale tried, per unit of input extent",
                   true),
       float_param("length_scale_max", 5.0, 0.0, std::nullopt, "largest length scale tried, per unit of input extent",
                   true),
       int_param("length_scale_grid", 24, 1, "length scales tried (log-spaced), the best by marginal likelihood")},
      &run_bayesian));
}

}  // namespace servelab::solvers::search
