#include "servelab/systems/infaas/get_variant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <tuple>

#include "servelab/core/errors.hpp"

namespace servelab::infaas {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Sort keys: smaller is better. Both searches build the same keys, so they agree exactly.
using ActiveKey = std::tuple<double, double, double, VariantId, WorkerId>;                 // cost, util, latency, v, w
using InactiveKey = std::tuple<int, double, double, double, VariantId, double, WorkerId>;  // unplaceable, load+lat, ...
using ClosestKey = std::tuple<double, double, VariantId>;                                  // distance, latency, v

void check(const MetadataStore& store, const Requirements& req) {
  if (req.batch < 1) throw ValueError(str("batch=", req.batch, " must be >= 1"));
  if (!(std::isfinite(req.accuracy) && req.accuracy >= 0 && req.accuracy <= 1)) {
    throw ValueError(str("accuracy=", req.accuracy, " must be a fraction in [0, 1]"));
  }
  if (std::isnan(req.latency_ms)) throw ValueError("latency_ms=nan is not a number");
  if (req.architecture.empty()) {
    if (req.task.empty()) throw ValueError("give a task (an application's goals) or a registered model");
    store.by_task(req.task);  // KeyError when unknown
  } else {
    store.by_architecture(req.architecture);
  }
}

bool by_model(const Requirements& req) { return !req.architecture.empty(); }

bool matches(const Variant& v, const Requirements& req) {
  const double lat = v.latency_at(req.batch);
  if (lat == kInf) return false;
  if (by_model(req)) return true;  // a registered model is served whatever the goals
  return v.accuracy >= req.accuracy && (req.latency_ms <= 0 || lat <= req.latency_ms);
}

bool in_scope(const Variant& v, const Requirements& req) {
  return by_model(req) ? v.architecture == req.architecture : v.task == req.task;
}

double distance(const Variant& v, const Requirements& req) {
  const double lat = v.latency_at(req.batch);
  const double acc_gap = std::max(0.0, req.accuracy - v.accuracy) / std::max(req.accuracy, 1e-9);
  const double lat_gap = req.latency_ms > 0 ? std::max(0.0, lat - req.latency_ms) / req.latency_ms : 0.0;
  return acc_gap + lat_gap;
}

WorkerId least_utilised_active(const MetadataStore& store, VariantId v) {
  WorkerId best = -1;
  double best_util = kInf;
  for (const Instance& i : store.instances(v)) {
    if (i.state != VariantState::Active) continue;
    const double u = store.utilisation(i.worker);
    if (u < best_util || (u == best_util && i.worker < best)) best = i.worker, best_util = u;
  }
  return best;
}

Choice closest(const MetadataStore& store, const Requirements& req, std::span<const VariantId> scope) {
  ClosestKey best{kInf, kInf, -1};
  for (const VariantId id : scope) {
    const Variant& v = store.variant(id);
    const double lat = v.latency_at(req.batch);
    if (lat == kInf) continue;
    best = std::min(best, ClosestKey{distance(v, req), lat, id});
  }
  Choice out;
  const VariantId id = std::get<2>(best);
  if (id < 0) {
    out.reason = str("no variant of ", by_model(req) ? "model '" + req.architecture + "'" : "task '" + req.task + "'",
                     " serves a batch of ", req.batch);
    return out;
  }
  const Variant& v = store.variant(id);
  out.kind = ChoiceKind::Closest;
  out.variant = id;
  out.worker = least_utilised_active(store, id);
  if (out.worker < 0) {
    for (const auto& [u, w] : store.workers_of(v.hardware)) {
      out.worker = w;
      break;
    }
  }
  out.reason = str("no variant of task '", req.task, "' meets accuracy >= ", req.accuracy,
                   " and latency <= ", req.latency_ms, " ms at batch ", req.batch, "; closest: '", v.name,
                   "' (accuracy ", v.accuracy, ", ", v.latency_at(req.batch), " ms)");
  return out;
}

std::span<const VariantId> whole_scope(const MetadataStore& store, const Requirements& req) {
  return by_model(req) ? store.by_architecture(req.architecture) : store.by_task(req.task);
}

}  // namespace

std::string_view choice_kind_name(ChoiceKind kind) {
  switch (kind) {
    case ChoiceKind::Active:
      return "active";
    case ChoiceKind::Inactive:
      return "inactive";
    case ChoiceKind::Closest:
      return "closest";
    case ChoiceKind::None:
      return "none";
  }
  return "?";
}

Choice get_variant(const MetadataStore& store, const Requirements& req) {
  check(store, req);
  std::span<const VariantId> scope;
  if (by_model(req)) {
    scope = store.by_architecture(req.architecture);
  } else {
    // Most accurate first: the variants meeting the floor are a prefix.
    const auto& ids = store.by_task(req.task);
    const auto end = std::partition_point(ids.begin(), ids.end(),
                                          [&](VariantId v) { return store.variant(v).accuracy >= req.accuracy; });
    scope = std::span<const VariantId>(ids.data(), static_cast<std::size_t>(end - ids.begin()));
  }
  // 1. Active instances.
  ActiveKey best_active{kInf, kInf, kInf, -1, -1};
  for (const VariantId id : scope) {
    if (store.active_instances(id) == 0) continue;
    const Variant& v = store.variant(id);
    if (!matches(v, req)) continue;
    for (const Instance& i : store.instances(id)) {
      if (i.state != VariantState::Active) continue;
      best_active = std::min(
          best_active, ActiveKey{v.cost_per_s, store.utilisation(i.worker), v.latency_at(req.batch), id, i.worker});
    }
  }
  if (std::get<3>(best_active) >= 0)
    return {ChoiceKind::Active, std::get<3>(best_active), std::get<4>(best_active), {}};
  // 2. A new instance: lowest load + inference latency, on the least-utilised worker without one.
  InactiveKey best{2, kInf, kInf, kInf, -1, kInf, -1};
  for (const VariantId id : scope) {
    const Variant& v = store.variant(id);
    if (!matches(v, req)) continue;
    const double lat = v.latency_at(req.batch);
    const double total = v.load_s * 1000.0 + lat;
    InactiveKey key{1, total, v.cost_per_s, lat, id, 0.0, -1};
    for (const auto& [u, w] : store.workers_of(v.hardware)) {
      if (store.state(id, w) != VariantState::Inactive) continue;
      key = InactiveKey{0, total, v.cost_per_s, lat, id, u, w};
      break;
    }
    best = std::min(best, key);
  }
  if (std::get<4>(best) >= 0) return {ChoiceKind::Inactive, std::get<4>(best), std::get<6>(best), {}};
  // 3. Nothing meets the goals: the nearest of all the task's (or model's) variants.
  return closest(store, req, whole_scope(store, req));
}

Choice get_variant_brute_force(const MetadataStore& store, const Requirements& req) {
  check(store, req);
  std::vector<VariantId> scope;
  for (VariantId id = 0; id < store.num_variants(); ++id) {
    if (in_scope(store.variant(id), req) && (by_model(req) || store.variant(id).accuracy >= req.accuracy)) {
      scope.push_back(id);
    }
  }
  ActiveKey best_active{kInf, kInf, kInf, -1, -1};
  for (const VariantId id : scope) {
    const Variant& v = store.variant(id);
    if (!matches(v, req)) continue;
    for (WorkerId w = 0; w < store.num_workers(); ++w) {
      if (!store.alive(w) || store.state(id, w) != VariantState::Active) continue;
      best_active =
          std::min(best_active, ActiveKey{v.cost_per_s, store.utilisation(w), v.latency_at(req.batch), id, w});
    }
  }
  if (std::get<3>(best_active) >= 0)
    return {ChoiceKind::Active, std::get<3>(best_active), std::get<4>(best_active), {}};
  InactiveKey best{2, kInf, kInf, kInf, -1, kInf, -1};
  for (const VariantId id : scope) {
    const Variant& v = store.variant(id);
    if (!matches(v, req)) continue;
    const double lat = v.latency_at(req.batch);
    const double total = v.load_s * 1000.0 + lat;
    best = std::min(best, InactiveKey{1, total, v.cost_per_s, lat, id, 0.0, -1});
    for (WorkerId w = 0; w < store.num_workers(); ++w) {
      if (!store.alive(w) || store.worker_hardware(w) != v.hardware) continue;
      if (store.state(id, w) != VariantState::Inactive) continue;
      best = std::min(best, InactiveKey{0, total, v.cost_per_s, lat, id, store.utilisation(w), w});
    }
  }
  if (std::get<4>(best) >= 0) return {ChoiceKind::Inactive, std::get<4>(best), std::get<6>(best), {}};
  return closest(store, req, whole_scope(store, req));
}

}  // namespace servelab::infaas
