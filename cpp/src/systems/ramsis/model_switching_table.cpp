#include "servelab/systems/ramsis/model_switching_table.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <numeric>
#include <thread>
#include <utility>

#include "servelab/cluster/cluster_spec.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/sim/engine.hpp"
#include "servelab/workload/arrivals.hpp"
#include "servelab/workload/workload.hpp"

namespace servelab::ramsis {
namespace {

// The largest sustainable rate of `workers` workers serving model curve `c` in batches up to `cap`.
double capacity_qps(const ModelCurve& c, std::int64_t cap, std::int32_t workers) {
  double best = 0;
  for (std::int64_t b = 1; b <= std::min<std::int64_t>(cap, static_cast<std::int64_t>(c.latency.size())); ++b) {
    best = std::max(best, static_cast<double>(b) * kNanosPerSecond / static_cast<double>(c.latency[b - 1]));
  }
  return best * workers;
}

// Late served queries and served queries (the artifact's violation rate is their ratio: queries
// still queued when the run is cut off are not counted).
std::pair<std::int64_t, std::int64_t> late_and_served(const cluster::RunResult& r) {
  const auto& q = r.queries;
  std::int64_t served = 0, late = 0;
  for (std::size_t i = 0; i < q.size_of(); ++i) {
    if (q.status[i] != static_cast<std::int8_t>(cluster::QueryStatus::Completed)) continue;
    ++served;
    late += q.finish[i] > q.deadline[i] ? 1 : 0;
  }
  return {late, served};
}

}  // namespace

ModelSwitchingResult generate_model_switching_table(const ModelSwitchingSearch& s) {
  if (!s.profile) throw ValueError("model switching search: no profile");
  const profile::Profile& profile = *s.profile;
  const std::int32_t hw = profile.hardware_index(s.hardware);
  if (s.workers < 1) throw ValueError(str("workers=", s.workers, " must be >= 1"));
  if (s.slo <= 0) throw ValueError(str("slo=", s.slo, " ns must be positive"));
  if (s.duration <= 0) throw ValueError(str("duration=", s.duration, " ns must be positive"));
  if (s.replications < 1) throw ValueError(str("replications=", s.replications, " must be >= 1"));
  if (!(s.target_violation > 0 && s.target_violation <= 1)) {
    throw ValueError(str("target_violation=", s.target_violation, " must be in (0, 1]"));
  }
  validate_load_grid(s.loads_qps, "loads");

  ModelSwitchingResult out;
  out.candidates = s.models;
  if (out.candidates.empty()) {
    for (std::size_t m = 0; m < profile.models().size(); ++m) {
      if (profile.has_latency(hw, static_cast<std::int32_t>(m))) out.candidates.push_back(profile.models()[m]);
    }
  }
  if (out.candidates.empty()) throw ValueError(str("no model has a latency profile on hardware '", s.hardware, "'"));
  std::vector<ModelCurve> curves;
  for (const auto& name : out.candidates) {
    const std::int32_t m = profile.model_index(name);
    if (!profile.has_latency(hw, m)) {
      throw ValueError(str("model '", name, "' has no latency profile on hardware '", s.hardware, "'"));
    }
    curves.push_back(profile_curve(profile, hw, m, s.statistic));
  }
  // Most accurate first (unknown accuracy last; ties keep the candidate order).
  std::vector<std::size_t> order(curves.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const double x = curves[a].accuracy, y = curves[b].accuracy;
    if (std::isnan(x)) return false;
    if (std::isnan(y)) return true;
    return x > y;
  });
  std::size_t fastest = 0;
  for (std::size_t i = 1; i < curves.size(); ++i) {
    if (curves[i].latency[0] < curves[fastest].latency[0]) fastest = i;
  }

  const std::size_t n_loads = s.loads_qps.size();
  out.table.loads_qps = s.loads_qps;
  out.table.models.assign(n_loads, "");
  out.violation.assign(n_loads, std::vector<double>(curves.size(), std::numeric_limits<double>::quiet_NaN()));
  out.simulated.assign(n_loads, std::vector<std::uint8_t>(curves.size(), 0));

  const auto search_load = [&](std::size_t li) {
    const double load = s.loads_qps[li];
    const std::int64_t cap = adaptive_batch_rule(curves, s.slo, load / s.workers, 1.0).max_batch;
    for (const std::size_t ci : order) {
      const ModelCurve& c = curves[ci];
      double v = 1.0;
      if (capacity_qps(c, cap, s.workers) >= load) {
        cluster::RunSpec spec;
        spec.profile = s.profile;
        // Every candidate is loaded: the batch cap weighs them all, as the artifact does.
        spec.workers = {cluster::WorkerGroup{s.hardware, s.workers, out.candidates, {}}};
        workload::Application app{"query", 1.0, s.slo, nullptr, 0.0};
        spec.workload = std::make_shared<const workload::Workload>(std::make_shared<const workload::Poisson>(load),
                                                                   std::vector<workload::Application>{app},
                                                                   workload::kUnlimitedCount, s.duration);
        spec.decision_statistic = s.statistic;
        spec.service_statistic = s.statistic;
        spec.drain_limit = s.slo;  // whatever is not done by then is late anyway; not counted as served
        LoadGranularOptions options;
        options.fixed_load_qps = load;
        options.slo = s.slo;
        std::int64_t late = 0, served = 0;
        for (std::int32_t rep = 0; rep < s.replications; ++rep) {
          spec.seed = s.seed + static_cast<std::uint64_t>(rep);
          const auto scheduler = make_model_switching({{load}, {out.candidates[ci]}}, options);
          const auto [l, n] = late_and_served(sim::simulate(spec, *scheduler));
          late += l, served += n;
        }
        v = served == 0 ? 1.0 : static_cast<double>(late) / static_cast<double>(served);
        out.simulated[li][ci] = 1;
      }
      out.violation[li][ci] = v;
      if (v < s.target_violation) {
        out.table.models[li] = out.candidates[ci];
        return;
      }
    }
    out.table.models[li] = out.candidates[fastest];
  };

  const std::int32_t threads = std::clamp<std::int32_t>(s.threads, 1, static_cast<std::int32_t>(n_loads));
  if (threads == 1) {
    for (std::size_t li = 0; li < n_loads; ++li) {
      core::check_interrupt();
      search_load(li);
    }
    return out;
  }
  // Loads are independent: helpers take them from a shared counter; this thread works too and is
  // the one that watches for an interruption.
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto work = [&] {
    for (std::size_t li; !stop && (li = next.fetch_add(1)) < n_loads;) {
      try {
        search_load(li);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
        stop = true;
      }
    }
  };
  std::vector<std::thread> helpers;
  for (std::int32_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  try {
    for (std::size_t li; !stop && (li = next.fetch_add(1)) < n_loads;) {
      core::check_interrupt();
      search_load(li);
    }
  } catch (...) {
    std::lock_guard lock(error_mutex);
    if (!error) error = std::current_exception();
    stop = true;
  }
  for (auto& h : helpers) h.join();
  if (error) std::rethrow_exception(error);
  return out;
}

}  // namespace servelab::ramsis
