#include "servelab/systems/hera/cluster.hpp"

#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>

#include "servelab/core/errors.hpp"
#include "servelab/core/interrupt.hpp"
#include "servelab/core/rng.hpp"

namespace servelab::hera {

void ClusterTables::validate() const {
  const auto nn = static_cast<std::size_t>(n);
  if (n < 1) throw ValueError(str("cluster: n=", n, " models; need at least 1"));
  if (isolated_qps.size() != nn)
    throw ValueError(str("cluster: isolated_qps has ", isolated_qps.size(), " entries, n=", n));
  if (high.size() != nn) throw ValueError(str("cluster: high has ", high.size(), " entries, n=", n));
  if (affinity.size() != nn * nn)
    throw ValueError(str("cluster: affinity has ", affinity.size(), " entries, n*n=", nn * nn));
  if (pair_qps.size() != nn * nn)
    throw ValueError(str("cluster: pair_qps has ", pair_qps.size(), " entries, n*n=", nn * nn));
  for (std::size_t i = 0; i < nn; ++i)
    if (!(isolated_qps[i] >= 0) || !std::isfinite(isolated_qps[i]))
      throw ValueError(str("cluster: isolated_qps[", i, "]=", isolated_qps[i], " must be >= 0"));
  for (std::size_t i = 0; i < nn * nn; ++i) {
    if (!(pair_qps[i] >= 0) || !std::isfinite(pair_qps[i]))
      throw ValueError(str("cluster: pair_qps[", i / nn, "][", i % nn, "]=", pair_qps[i], " must be >= 0"));
    if (!std::isfinite(affinity[i]))
      throw ValueError(str("cluster: affinity[", i / nn, "][", i % nn, "] is not finite"));
  }
}

Selection parse_selection(std::string_view name) {
  if (name == "hera") return Selection::Hera;
  if (name == "hera_random") return Selection::HeraRandom;
  if (name == "random") return Selection::Random;
  if (name == "deeprecsys") return Selection::DeepRecSys;
  throw KeyError(str("selection='", name, "'; known: hera, hera_random, random, deeprecsys"));
}

std::string_view selection_name(Selection s) {
  switch (s) {
    case Selection::Hera:
      return "hera";
    case Selection::HeraRandom:
      return "hera_random";
    case Selection::Random:
      return "random";
    case Selection::DeepRecSys:
      return "deeprecsys";
  }
  return "?";
}

double ClusterPlan::emu() const {
  if (servers.empty()) return 0.0;
  double sum = 0;
  for (const auto& s : servers) sum += s.emu;
  return sum / static_cast<double>(servers.size());
}

namespace {

class Placer {
 public:
  Placer(const ClusterTables& t, std::span<const double> target, std::uint64_t seed, std::int64_t max_servers)
      : t_(t), target_(target), rng_(seed, "hera/cluster"), max_servers_(max_servers) {
    plan_.serviced.assign(static_cast<std::size_t>(t.n), 0.0);
  }

  bool unmet(int i) const { return plan_.serviced[i] < target_[i]; }
  double pair(int i, int j) const { return t_.pair_qps[static_cast<std::size_t>(i) * t_.n + j]; }
  bool can_pair(int i, int j) const { return i != j && pair(i, j) > 0 && pair(j, i) > 0; }
  // A pair's server EMU: each model's QPS there as a fraction of its isolated QPS.
  double pair_emu(int i, int j) const { return pair(i, j) / t_.isolated_qps[i] + pair(j, i) / t_.isolated_qps[j]; }

  // False when the server limit is reached (the plan is then infeasible).
  bool add(int a, int b) {
    if (static_cast<std::int64_t>(plan_.servers.size()) >= max_servers_) return false;
    core::check_interrupt();
    Server s;
    s.a = a;
    s.b = b;
    s.qps_a = b < 0 ? t_.isolated_qps[a] : pair(a, b);
    s.qps_b = b < 0 ? 0.0 : pair(b, a);
    s.emu = s.qps_a / t_.isolated_qps[a] + (b < 0 ? 0.0 : s.qps_b / t_.isolated_qps[b]);
    plan_.serviced[a] += s.qps_a;
    if (b >= 0) plan_.serviced[b] += s.qps_b;
    plan_.servers.push_back(s);
    return true;
  }

  // A uniformly drawn element of `candidates`, or -1 when empty.
  int draw(const std::vector<int>& candidates) {
    if (candidates.empty()) return -1;
    boost::random::uniform_int_distribution<std::size_t> pick(0, candidates.size() - 1);
    return candidates[pick(rng_.engine())];
  }

  ClusterPlan finish(bool ok) {
    if (!ok) {
      plan_.feasible = false;
      std::string short_of;
      for (int i = 0; i < t_.n; ++i)
        if (unmet(i))
          short_of +=
              str(short_of.empty() ? "" : ", ", "model ", i, " (", plan_.serviced[i], " of ", target_[i], " QPS)");
      plan_.reason = str("max_servers=", max_servers_, " reached before every target was met; short: ", short_of);
    }
    return std::move(plan_);
  }

  const ClusterTables& t_;
  std::span<const double> target_;
  Rng rng_;
  std::int64_t max_servers_;
  ClusterPlan plan_;
};

// Every model alone until its target is met.
bool place_alone(Placer& p, int model) {
  while (p.unmet(model))
    if (!p.add(model, -1)) return false;
  return true;
}

// Line 9's partner for low model i, among the models still short of their targets that can share
// a node with it: a high model first (the "prime candidates", Sec. VI-B), the highest-affinity one
// or a random one for Hera(Random); when none is left, another low model, since only (high, high)
// pairs are ruled out (Sec. VII-A1), and only a pair that keeps the server's EMU >= 1 (Hera's
// pairs never fall below 100%). -1: the low model runs alone.
int choose_partner(Placer& p, int i, bool random_partner) {
  const auto& t = p.t_;
  for (const bool want_high : {true, false}) {
    std::vector<int> candidates;
    for (int j = 0; j < t.n; ++j)
      if (static_cast<bool>(t.high[j]) == want_high && p.unmet(j) && p.can_pair(i, j) &&
          (want_high || p.pair_emu(i, j) >= 1.0))
        candidates.push_back(j);
    if (candidates.empty()) continue;
    if (random_partner) return p.draw(candidates);
    int best = candidates.front();
    for (int j : candidates)
      if (t.affinity[static_cast<std::size_t>(i) * t.n + j] > t.affinity[static_cast<std::size_t>(i) * t.n + best])
        best = j;
    return best;
  }
  return -1;
}

// Algorithm 2: low models first, each with its partner (above) until its target is met; then the
// high models alone.
bool place_hera(Placer& p, bool random_partner) {
  const auto& t = p.t_;
  for (int i = 0; i < t.n; ++i) {
    if (t.high[i]) continue;
    while (p.unmet(i))
      if (!p.add(i, choose_partner(p, i, random_partner))) return false;
  }
  for (int i = 0; i < t.n; ++i)
    if (t.high[i] && !place_alone(p, i)) return false;
  return true;
}

// Random: a random model still short of its target, with a random other one still short (any
// scalability), alone when it is the last one short.
bool place_random(Placer& p) {
  const auto& t = p.t_;
  for (;;) {
    std::vector<int> short_models;
    for (int i = 0; i < t.n; ++i)
      if (p.unmet(i)) short_models.push_back(i);
    if (short_models.empty()) return true;
    const int a = p.draw(short_models);
    std::vector<int> partners;
    for (int j : short_models)
      if (p.can_pair(a, j)) partners.push_back(j);
    if (!p.add(a, p.draw(partners))) return false;
  }
}

}  // namespace

ClusterPlan schedule_cluster(const ClusterTables& tables, std::span<const double> target_qps, Selection selection,
                             std::uint64_t seed, std::int64_t max_servers) {
  tables.validate();
  if (target_qps.size() != static_cast<std::size_t>(tables.n))
    throw ValueError(str("cluster: target_qps has ", target_qps.size(), " entries, n=", tables.n));
  if (max_servers < 0) throw ValueError(str("cluster: max_servers=", max_servers, " must be >= 0"));
  Placer p(tables, target_qps, seed, max_servers);
  for (int i = 0; i < tables.n; ++i) {
    if (!(target_qps[i] >= 0) || !std::isfinite(target_qps[i]))
      throw ValueError(str("cluster: target_qps[", i, "]=", target_qps[i], " must be a finite number >= 0"));
    if (target_qps[i] > 0 && !(tables.isolated_qps[i] > 0)) {
      ClusterPlan plan;
      plan.serviced.assign(static_cast<std::size_t>(tables.n), 0.0);
      plan.feasible = false;
      plan.reason =
          str("model ", i, " has target_qps=", target_qps[i], " but cannot be served on one server (isolated QPS 0)");
      return plan;
    }
  }
  bool ok = true;
  switch (selection) {
    case Selection::Hera:
      ok = place_hera(p, false);
      break;
    case Selection::HeraRandom:
      ok = place_hera(p, true);
      break;
    case Selection::Random:
      ok = place_random(p);
      break;
    case Selection::DeepRecSys:
      for (int i = 0; i < tables.n && ok; ++i) ok = place_alone(p, i);
      break;
  }
  return p.finish(ok);
}

}  // namespace servelab::hera
