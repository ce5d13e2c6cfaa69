// Kairos's query distributor: cost matrix, assignment, dispatch to idle instances.
#include "servelab/systems/kairos/distributor.hpp"

#include <algorithm>
#include <boost/random/normal_distribution.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>

#include "servelab/core/errors.hpp"
#include "servelab/sched/policy_helpers.hpp"

namespace servelab::kairos {

namespace {

// The artifact's slack penalties (ms): a pair that only fits without the safeguard, one that misses.
constexpr double kArtifactNearMiss = -500.0;
constexpr double kArtifactMiss = -1000.0;
// Per row, on busy instances: small enough never to overturn a real cost difference (1 ns per row).
constexpr double kTieBreakMs = 1e-6;
constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

// The first integer nanosecond strictly after `t` (ns, as a double), saturating.
Nanos first_after(double t) {
  if (!(t < 9.0e18)) return sched::kNever;
  return static_cast<Nanos>(std::floor(t)) + 1;
}

}  // namespace

Variant parse_variant(std::string_view name) {
  if (name == "paper") return Variant::Paper;
  if (name == "artifact") return Variant::Artifact;
  throw ValueError(str("variant='", name, "' is not one of 'paper', 'artifact'"));
}

std::string_view variant_name(Variant variant) { return variant == Variant::Paper ? "paper" : "artifact"; }

void KairosOptions::validate() const {
  if (!(std::isfinite(qos_ms) && qos_ms >= 0)) throw ValueError(str("qos_ms=", qos_ms, " must be >= 0 (0: deadlines)"));
  if (!(std::isfinite(noise) && noise >= 0)) throw ValueError(str("noise=", noise, " must be >= 0"));
  if (!(std::isfinite(xi) && xi > 0 && xi <= 1)) throw ValueError(str("xi=", xi, " must be in (0, 1]"));
  if (!(std::isfinite(penalty) && penalty > 0)) throw ValueError(str("penalty=", penalty, " must be > 0"));
  if (window < 0) throw ValueError(str("window=", window, " must be >= 0 (0: every pending query)"));
  if (table_after < 1) throw ValueError(str("table_after=", table_after, " must be >= 1"));
  if (coef_batch < 0) throw ValueError(str("coef_batch=", coef_batch, " must be >= 0 (0: the largest query)"));
  if (!(std::isfinite(tail) && tail >= 0 && tail < 100))
    throw ValueError(str("tail=", tail, " must be in [0, 100) (0: the mean)"));
}

KairosOptions KairosOptions::defaults(Variant variant) {
  KairosOptions o;
  o.variant = variant;
  if (variant == Variant::Artifact) {
    o.predictor = PredictorSource::Profile;
    o.window = 2;
  } else {
    o.tail = 99.0;
  }
  return o;
}

bool misses_qos(const EntryInputs& e, double xi) {
  return !(e.remaining_ms + e.latency_ms + e.waited_ms <= xi * e.qos_ms);
}

bool risks_qos(const EntryInputs& e, double xi) {
  return !misses_qos(e, xi) && !(e.remaining_ms + std::max(e.latency_ms, e.tail_ms) + e.waited_ms <= xi * e.qos_ms);
}

double paper_cost(const EntryInputs& e, double xi, double penalty) {
  const double completion = e.remaining_ms + e.latency_ms;             // L_ij
  if (misses_qos(e, xi)) return e.coefficient * penalty * e.qos_ms;    // Eq. 8
  if (risks_qos(e, xi)) return e.qos_ms + e.coefficient * completion;  // the tail misses
  return e.coefficient * completion;
}

double artifact_cost(const EntryInputs& e, double xi) {
  const double completion = e.remaining_ms + e.latency_ms;
  const double t_qos = e.waited_ms >= e.qos_ms ? 0.0 : e.qos_ms - e.waited_ms;  // 0 once late
  const double residual = t_qos - completion;
  double slack = e.coefficient * -completion;
  if (residual - (1.0 - xi) * e.qos_ms < 0 && t_qos > 0) slack = residual >= 0 ? kArtifactNearMiss : kArtifactMiss;
  return -slack;
}

double heterogeneity_coefficient(double base_ms, double type_ms, bool round2) {
  if (!(base_ms > 0 && type_ms > 0 && std::isfinite(base_ms) && std::isfinite(type_ms))) return 1.0;
  const double c = base_ms / type_ms;
  return round2 ? std::nearbyint(c * 100.0) / 100.0 : c;
}

KairosDistributor::KairosDistributor(KairosOptions options)
    : options_(std::move(options)),
      predictor_(options_.predictor, options_.table_after, options_.variant == Variant::Artifact) {
  options_.validate();
}

void KairosDistributor::on_start(const ClusterView& view, sched::Actions&) {
  rng_ = Rng(view.seed(), "scheduler/kairos");
  if (!options_.base.empty()) view.profile().hardware_index(options_.base);  // KeyError for unknown names
  known_workers_ = -1;
  refresh_workers(view);
}

void KairosDistributor::refresh_workers(const ClusterView& view) {
  if (view.num_workers() == known_workers_) return;
  known_workers_ = view.num_workers();
  roles_ = find_roles(view, options_.base);
  class_of_.assign(known_workers_, -1);
  class_rep_.clear();
  for (WorkerId w = 0; w < known_workers_; ++w) {
    for (std::size_t c = 0; c < class_rep_.size(); ++c) {
      const WorkerId r = class_rep_[c];
      if (view.hardware(r) == view.hardware(w) && view.models(r) == view.models(w)) {
        class_of_[w] = static_cast<std::int32_t>(c);
        break;
      }
    }
    if (class_of_[w] < 0) {
      class_of_[w] = static_cast<std::int32_t>(class_rep_.size());
      class_rep_.push_back(w);
    }
  }
  finish_.resize(known_workers_, -1);
  dispatched_ms_.resize(known_workers_, 0.0);
  dispatched_settled_.resize(known_workers_, 0);
  coefficients_fresh_ = false;
}

void KairosDistributor::refresh_coefficients(const ClusterView& view) {
  if (coefficients_fresh_ && !predictor_.learns()) return;
  class_coef_.assign(class_rep_.size(), 1.0);
  const ModelId model = roles_.model;
  const std::int64_t batch = options_.coef_batch > 0 ? options_.coef_batch : roles_.largest;
  if (model >= 0 && batch >= 1 && roles_.base >= 0) {
    // The base latency: from a base worker when there is one, else straight from the profile.
    double base_ms = -1.0;
    for (const WorkerId r : class_rep_) {
      if (view.hardware(r) == roles_.base && view.has_model(r, model) && batch <= view.max_batch(r, model)) {
        base_ms = predictor_.predict_ms(view, r, model, batch);
        break;
      }
    }
    const auto& profile = view.profile();
    if (base_ms < 0 && profile.has_latency(roles_.base, model) && batch <= profile.max_batch(roles_.base, model)) {
      base_ms = profile.latency(roles_.base, model, batch, view.decision_statistic()) * 1e3;
    }
    for (std::size_t c = 0; c < class_rep_.size(); ++c) {
      const WorkerId r = class_rep_[c];
      if (!view.has_model(r, model) || batch > view.max_batch(r, model)) continue;
      class_coef_[c] = heterogeneity_coefficient(base_ms, predictor_.predict_ms(view, r, model, batch),
                                                 options_.variant == Variant::Artifact);
    }
  }
  coefficients_fresh_ = true;
}

double KairosDistributor::coefficient(WorkerId worker) const {
  if (worker < 0 || static_cast<std::size_t>(worker) >= class_of_.size()) return 1.0;
  const auto c = static_cast<std::size_t>(class_of_[worker]);
  return c < class_coef_.size() ? class_coef_[c] : 1.0;
}

double KairosDistributor::query_qos_ms(const sched::Query& query) const {
  return qos_target_ms(options_.qos_ms, query);
}

double KairosDistributor::noise_factor(QueryId id, std::size_t type_class) {
  auto& normals = noise_[id];
  boost::random::normal_distribution<double> normal(0.0, 1.0);
  while (normals.size() <= type_class) normals.push_back(normal(rng_.engine()));
  return std::max(0.0, 1.0 + options_.noise * normals[type_class]);
}

void KairosDistributor::on_arrival(const sched::Query& query, const ClusterView& view, sched::Actions& actions) {
  if (!any_live_worker_serves(view, query)) {
    actions.drop(query.id, "no worker can serve it");
    return;
  }
  actions.enqueue(query.id);
  if (options_.window == 0) live_.push_back({query.id, kUnknown});
  step(view, actions);
}

void KairosDistributor::on_batch_done(const sched::BatchDone& done, const ClusterView& view, sched::Actions& actions) {
  observe_ratio(done, view);
  predictor_.observe(view.hardware(done.worker), done.model, done.items, done.measured());
  step(view, actions);
}

void KairosDistributor::observe_ratio(const sched::BatchDone& done, const ClusterView& view) {
  if (done.worker < 0 || static_cast<std::size_t>(done.worker) >= dispatched_ms_.size()) return;
  const auto w = static_cast<std::size_t>(done.worker);
  const double predicted = dispatched_ms_[w];
  const bool settled = dispatched_settled_[w] != 0;
  dispatched_ms_[w] = 0.0;
  if (options_.tail <= 0 || !settled || !(predicted > 0) || done.measured() <= 0) return;
  auto& t = tail_ratios_[{view.hardware(done.worker), done.model}];
  const double ratio = nanos_to_millis(done.measured()) / predicted;
  if (t.ring.size() < kTailWindow) {
    t.ring.push_back(ratio);
  } else {
    t.ring[t.next] = ratio;
    t.next = (t.next + 1) % kTailWindow;
  }
  // Nearest rank: the smallest ratio with at least tail% of the window at or below it (the
  // largest one until the window holds 100 / (100 - tail) ratios).
  std::vector<double> sorted(t.ring);
  const auto n = sorted.size();
  const auto rank = static_cast<std::size_t>(std::ceil(options_.tail / 100.0 * static_cast<double>(n)));
  const std::size_t k = std::min(n - 1, rank == 0 ? 0 : rank - 1);
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k), sorted.end());
  const double margin = std::max(1.0, sorted[k]);
  t.margin = margin;
}

double KairosDistributor::tail_margin(sched::HardwareId hardware, ModelId model) const {
  if (options_.tail <= 0) return 1.0;
  const auto it = tail_ratios_.find({hardware, model});
  return it == tail_ratios_.end() ? 1.0 : it->second.margin;
}

void KairosDistributor::on_worker_ready(WorkerId, const ClusterView& view, sched::Actions& actions) {
  step(view, actions);
}

void KairosDistributor::on_timer(std::int64_t tag, const ClusterView& view, sched::Actions& actions) {
  if (tag != timer_tag_) return;  // superseded by a later plan
  timer_at_ = sched::kNever;
  ++stats_.timer_steps;
  step(view, actions);
}

void KairosDistributor::step(const ClusterView& view, sched::Actions& actions) {
  next_change_ = sched::kNever;
  while (!view.idle_workers().empty() && !view.central_queue().empty()) {
    if (decide_once(view, actions) == 0) {
      // Nothing to start now; look again when a penalty in the matrix changes state (the
      // artifact re-solves continuously, so it would notice then).
      if (next_change_ != sched::kNever && next_change_ != timer_at_) {
        actions.set_timer(next_change_, ++timer_tag_);
        timer_at_ = next_change_;
      }
      break;
    }
  }
}

double KairosDistributor::predict_row(const ClusterView& view, const sched::Query& q, double* latency_ms,
                                      double* tail_ms, ModelId* model) {
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t c = 0; c < class_rep_.size(); ++c) {
    const ModelId m = sched::pick_model(view, class_rep_[c], q);
    model[c] = m;
    latency_ms[c] = 0.0;
    tail_ms[c] = 0.0;
    if (m < 0) continue;
    double ms = predictor_.predict_ms(view, class_rep_[c], m, q.size);
    if (options_.noise > 0) ms *= noise_factor(q.id, c);
    latency_ms[c] = ms;
    tail_ms[c] = ms * tail_margin(view.hardware(class_rep_[c]), m);
    best = std::min(best, ms);
  }
  return best;
}

Nanos KairosDistributor::qos_key(const sched::Query& q) const { return qos_target(options_.qos_ms, q); }

void KairosDistributor::forget(const sched::Query& q) {
  if (options_.window > 0) return;
  const auto it = std::find_if(live_.begin(), live_.end(), [&](const LiveQuery& l) { return l.id == q.id; });
  if (it != live_.end()) {
    live_.erase(it);
  } else {
    hopeless_.erase({qos_key(q), q.id});
  }
}

void KairosDistributor::resync(const std::deque<QueryId>& queue) {
  // Queries reached the central queue without an arrival (a removed worker's queue) or left it
  // without a dispatch: rebuild the bookkeeping from the queue itself.
  std::vector<QueryId> pending(queue.begin(), queue.end());
  std::sort(pending.begin(), pending.end());
  std::vector<QueryId> lost;
  for (auto it = hopeless_.begin(); it != hopeless_.end();) {
    if (std::binary_search(pending.begin(), pending.end(), it->second)) {
      lost.push_back(it->second);
      ++it;
    } else {
      it = hopeless_.erase(it);
    }
  }
  std::sort(lost.begin(), lost.end());
  live_.clear();
  for (const QueryId id : pending) {
    if (!std::binary_search(lost.begin(), lost.end(), id)) live_.push_back({id, kUnknown});
  }
}

void KairosDistributor::select_rows(const ClusterView& view, std::int64_t n_cols) {
  rows_.clear();
  const auto& queue = view.central_queue();
  if (options_.window > 0) {
    const auto n = std::min<std::int64_t>(static_cast<std::int64_t>(queue.size()), options_.window * n_cols);
    rows_.assign(queue.begin(), queue.begin() + n);
    return;
  }
  // Every pending query is a row. A query that misses xi x T_qos on every instance type even if
  // it started now is penalised in every column, for good (waiting only grows), and all such
  // queries with one T_qos have the same row, C_j x penalty x T_qos: an optimal assignment uses
  // at most one per column, so the oldest n_cols of them stand for all. That keeps the matrix
  // small when an overloaded queue grows without changing the solution.
  if (live_.size() + hopeless_.size() != queue.size()) resync(queue);
  const Nanos now = view.now();
  row_latency_.resize(class_rep_.size());
  row_tail_.resize(class_rep_.size());
  row_model_.resize(class_rep_.size());
  const bool relearn = predictor_.learns();
  std::size_t kept = 0;
  for (LiveQuery live : live_) {
    const sched::Query q = view.query(live.id);
    // Fixed predictions (the profile, noise drawn once per query) need computing once.
    if (std::isnan(live.fastest_ms) || relearn) {
      live.fastest_ms = predict_row(view, q, row_latency_.data(), row_tail_.data(), row_model_.data());
    }
    if (std::isfinite(live.fastest_ms) &&
        live.fastest_ms + nanos_to_millis(now - q.arrival) > options_.xi * query_qos_ms(q)) {
      hopeless_.insert({qos_key(q), live.id});
      continue;
    }
    live_[kept++] = live;
    rows_.push_back(live.id);
  }
  live_.resize(kept);
  for (auto it = hopeless_.begin(); it != hopeless_.end();) {
    const Nanos qos = it->first;
    for (std::int64_t k = 0; k < n_cols && it != hopeless_.end() && it->first == qos; ++k, ++it) {
      rows_.push_back(it->second);
    }
    it = hopeless_.lower_bound({qos, std::numeric_limits<QueryId>::max()});
  }
  std::sort(rows_.begin(), rows_.end());  // ids in arrival order: row i is the i-th oldest
}

std::int64_t KairosDistributor::decide_once(const ClusterView& view, sched::Actions& actions) {
  refresh_workers(view);
  next_change_ = sched::kNever;
  const Nanos now = view.now();
  cols_.clear();
  col_idle_.clear();
  col_free_.clear();
  col_remaining_ms_.clear();
  col_class_.clear();
  bool any_idle = false;
  for (WorkerId w = 0; w < view.num_workers(); ++w) {
    const auto s = view.status(w);
    if (s != sched::WorkerStatus::Idle && s != sched::WorkerStatus::Busy) continue;
    const bool idle = s == sched::WorkerStatus::Idle;
    // A busy instance is free when our own prediction of its batch says (noise and learning
    // included), or the view's when we did not start it; never in the past (it overran).
    const Nanos free_at = idle ? now : std::max(now, finish_[w] >= 0 ? finish_[w] : view.busy_until(w));
    cols_.push_back(w);
    col_idle_.push_back(idle ? 1 : 0);
    col_free_.push_back(free_at);
    col_remaining_ms_.push_back(nanos_to_millis(free_at - now));
    col_class_.push_back(class_of_[w]);
    any_idle = any_idle || idle;
  }
  if (!any_idle || view.central_queue().empty()) return 0;
  ++stats_.decisions;
  refresh_coefficients(view);

  const auto n_cols = static_cast<std::int64_t>(cols_.size());
  select_rows(view, n_cols);
  const auto n_rows = static_cast<std::int64_t>(rows_.size());
  if (n_rows == 0) return 0;
  stats_.max_rows = std::max(stats_.max_rows, n_rows);
  stats_.total_rows += n_rows;

  const std::size_t n_classes = class_rep_.size();
  latency_ms_.assign(static_cast<std::size_t>(n_rows) * n_classes, 0.0);
  tail_ms_.assign(static_cast<std::size_t>(n_rows) * n_classes, 0.0);
  model_.assign(static_cast<std::size_t>(n_rows) * n_classes, -1);
  cost_.resize(static_cast<std::size_t>(n_rows * n_cols));
  row_arrival_.resize(static_cast<std::size_t>(n_rows));
  row_qos_ms_.resize(static_cast<std::size_t>(n_rows));
  row_hopeless_.resize(static_cast<std::size_t>(n_rows));
  missing_.assign(static_cast<std::size_t>(n_rows * n_cols), 0);

  const bool paper = options_.variant == Variant::Paper;
  double max_cost = 0.0;
  for (std::int64_t i = 0; i < n_rows; ++i) {
    const sched::Query q = view.query(rows_[i]);
    const double waited = nanos_to_millis(now - q.arrival);
    double fastest = 0.0;
    const double qos = query_qos_ms(q);
    row_arrival_[i] = q.arrival;
    row_qos_ms_[i] = qos;
    const auto at = static_cast<std::size_t>(i) * n_classes;
    fastest = predict_row(view, q, &latency_ms_[at], &tail_ms_[at], &model_[at]);
    // Lost for QoS whatever happens (its fastest prediction, started now, is too late).
    row_hopeless_[i] = !(fastest + waited <= options_.xi * qos) ? 1 : 0;
    const double* latency = &latency_ms_[at];
    const double* tail = &tail_ms_[at];
    const ModelId* model = &model_[at];
    double* out = &cost_[static_cast<std::size_t>(i * n_cols)];
    // L_ij = remaining + latency is additive, so swapping two queries between an idle and a busy
    // instance of one type often costs the same. Among such ties, the older query starts now.
    const double tie_break = kTieBreakMs * static_cast<double>(n_rows - i);
    for (std::int64_t j = 0; j < n_cols; ++j) {
      const auto c = static_cast<std::size_t>(col_class_[j]);
      if (model[c] < 0) {
        out[j] = std::numeric_limits<double>::quiet_NaN();  // forbidden; priced below
        continue;
      }
      const EntryInputs e{class_coef_[c], col_remaining_ms_[j], latency[c], waited, qos, tail[c]};
      double entry = paper ? paper_cost(e, options_.xi, options_.penalty) : artifact_cost(e, options_.xi);
      if (paper && misses_qos(e, options_.xi)) {
        missing_[static_cast<std::size_t>(i * n_cols + j)] = 1;
        // A query that can still meet QoS elsewhere: the older it is, the dearer leaving it on a
        // penalised pair, so contenders for one fast instance take it oldest first.
        if (!row_hopeless_[i]) entry += waited + fastest;
      }
      if (!col_idle_[j]) entry += tie_break;
      out[j] = entry;
      max_cost = std::max(max_cost, entry);
    }
  }
  // A forbidden pair costs more than any assignment of allowed pairs, so the solver uses one only
  // where a full assignment needs it; such pairs are never dispatched.
  const double forbidden = (max_cost + 1.0) * static_cast<double>(std::min(n_rows, n_cols) + 1);
  for (double& entry : cost_) {
    if (std::isnan(entry)) entry = forbidden;
  }
  const auto& plan = solver_.solve(cost_, n_rows, n_cols);

  std::int64_t dispatched = 0;
  for (std::int64_t i = 0; i < n_rows; ++i) {
    const std::int32_t j = plan.row_to_col[i];
    if (j < 0 || !col_idle_[j] || cost_[i * n_cols + j] >= forbidden) continue;  // waits (or cannot go)
    // Paper: a pair predicted to miss QoS starts only when the query misses it everywhere anyway;
    // otherwise the query waits for a later matching (an instance it fits on becomes free).
    if (paper && missing_[static_cast<std::size_t>(i * n_cols + j)] && !row_hopeless_[i]) {
      ++stats_.held;
      continue;
    }
    const WorkerId w = cols_[j];
    const auto at = static_cast<std::size_t>(i) * n_classes + static_cast<std::size_t>(col_class_[j]);
    const QueryId id = rows_[i];
    actions.dispatch(w, model_[at], {&id, 1});
    finish_[w] = now + static_cast<Nanos>(std::llround(latency_ms_[at] * 1e6));
    dispatched_ms_[w] = latency_ms_[at];
    dispatched_settled_[w] = predictor_.settled(view, w, model_[at], view.query(id).size) ? 1 : 0;
    noise_.erase(id);
    forget(view.query(id));
    ++dispatched;
  }
  stats_.dispatched += dispatched;
  if (dispatched == 0) next_change_ = next_penalty_change(now, n_rows, n_cols);
  return dispatched;
}

Nanos KairosDistributor::next_penalty_change(Nanos now, std::int64_t n_rows, std::int64_t n_cols) const {
  // While instance j is busy, L_ij + W_i stays constant; from the moment it is free (free_at), it
  // grows with time. A threshold on it below free_at was crossed already (L_ij + W_i is what it
  // will be at free_at); one above it is crossed just after it.
  const bool paper = options_.variant == Variant::Paper;
  const std::size_t n_classes = class_rep_.size();
  Nanos next = sched::kNever;
  auto consider = [&](double threshold_ns, Nanos free_at) {
    if (threshold_ns < static_cast<double>(free_at)) return;
    const Nanos t = first_after(threshold_ns);
    if (t > now && t < next) next = t;
  };
  for (std::int64_t i = 0; i < n_rows; ++i) {
    const auto arrival = static_cast<double>(row_arrival_[i]);
    const double qos = row_qos_ms_[i];
    const double waited = nanos_to_millis(now - row_arrival_[i]);
    const auto at = static_cast<std::size_t>(i) * n_classes;
    if (!paper) {
      // The query becomes late (t_qos = 0) at its deadline, busy instance or not: the artifact
      // lifts its penalty then.
      const auto late = static_cast<Nanos>(std::ceil(arrival + qos * 1e6));
      if (late > now && late < next) next = late;
    }
    for (std::int64_t j = 0; j < n_cols; ++j) {
      const auto c = static_cast<std::size_t>(col_class_[j]);
      if (model_[at + c] < 0) continue;
      const double lat_ns = latency_ms_[at + c] * 1e6;
      if (paper) {
        // The mean's threshold (Eq. 8) and the tail's (the risk surcharge).
        for (const double ms : {latency_ms_[at + c], std::max(latency_ms_[at + c], tail_ms_[at + c])}) {
          if (col_remaining_ms_[j] + ms + waited <= options_.xi * qos) {
            consider(arrival + options_.xi * qos * 1e6 - ms * 1e6, col_free_[j]);
          }
        }
      } else {
        const double deadline = arrival + qos * 1e6;
        consider(deadline - lat_ns - (1.0 - options_.xi) * qos * 1e6, col_free_[j]);
        consider(deadline - lat_ns, col_free_[j]);
      }
    }
  }
  return next;
}

KairosOptions kairos_options_from(const Params& p) {
  KairosOptions o = KairosOptions::defaults(parse_variant(p.get_string("variant")));
  o.qos_ms = p.get_float("qos_ms");
  o.base = p.get_string("base");
  o.noise = p.get_float("noise");
  if (p.get_string("predictor") != "auto") o.predictor = parse_predictor_source(p.get_string("predictor"));
  o.xi = p.get_float("xi");
  o.penalty = p.get_float("penalty");
  if (p.get_int("window") >= 0) o.window = p.get_int("window");
  o.table_after = p.get_int("table_after");
  o.coef_batch = p.get_int("coef_batch");
  if (p.get_float("tail") >= 0) o.tail = p.get_float("tail");
  o.description = p.describe();
  return o;
}

void register_kairos(sched::SchedulerRegistry& registry) {
  registry.add(
      {"kairos",
       "Kairos (HPDC'23) query distributor: min-cost matching of pending queries to instances on completion time "
       "weighted by heterogeneity coefficients, with a QoS penalty; dispatches the pairs whose instance is idle.",
       {
           ParamSpec{"variant",
                     ParamType::String,
                     std::string("paper"),
                     "'paper' (Eq. 2-8, every pending query) or 'artifact' (2N oldest queries, -500/-1000 slack "
                     "penalties, coefficients to 2 decimals, whole-ms predictions)",
                     {},
                     {},
                     false,
                     {"paper", "artifact"}},
           qos_ms_param("QoS target T_qos in ms (0: each query's deadline - arrival)"),
           base_type_param(),
           ParamSpec::non_negative("noise", 0.0,
                                   "standard deviation of additive Gaussian noise on predictions, relative to the "
                                   "prediction (Fig. 16b: 0.05)"),
           ParamSpec{"predictor",
                     ParamType::String,
                     std::string("auto"),
                     "latency prediction: 'online' (linear model, then lookup table), 'online_from_profile' (lookup "
                     "table, profile before), 'profile'; 'auto': online for paper, profile for artifact",
                     {},
                     {},
                     false,
                     {"auto", "profile", "online", "online_from_profile"}},
           ParamSpec{
               "xi", ParamType::Float, 0.98, "QoS safeguard: a pair must finish within xi x T_qos", 0.0, 1.0, true, {}},
           ParamSpec::positive("penalty", 10.0, "paper: a pair missing QoS costs C_j x penalty x T_qos"),
           ParamSpec{"window",
                     ParamType::Int,
                     std::int64_t{-1},
                     "rows: the window x instances oldest pending queries (0: all; -1: paper all, artifact 2)",
                     -1.0,
                     {},
                     false,
                     {}},
           ParamSpec{"table_after",
                     ParamType::Int,
                     std::int64_t{3},
                     "observations a size needs before its lookup-table mean replaces the linear model",
                     1.0,
                     {},
                     false,
                     {}},
           ParamSpec{"coef_batch",
                     ParamType::Int,
                     std::int64_t{0},
                     "query size at which C_j is measured (0: the largest size every instance covers)",
                     0.0,
                     {},
                     false,
                     {}},
           ParamSpec{"tail",
                     ParamType::Float,
                     -1.0,
                     "percentile of measured/predicted service time (learned per instance type) used in the QoS "
                     "check (0: the mean; -1: paper 99, artifact 0)",
                     -1.0,
                     100.0,
                     false,
                     {}},
       },
       [](const Params& p) { return std::make_shared<KairosDistributor>(kairos_options_from(p)); }});
}

}  // namespace servelab::kairos
