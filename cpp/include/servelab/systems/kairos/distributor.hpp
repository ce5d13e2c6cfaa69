// Kairos's query distributor (Kairos, HPDC'23, Sec. 5.1) as a scheduler.
//
// Queries wait in the central queue. At every scheduling step (an arrival, a finished batch, a
// worker becoming ready, and the instants at which a QoS penalty of the matrix changes state) the
// controller builds the queries x instances matrix of completion times from now,
//   L_ij = remaining busy time of instance j + predicted latency of query i on j,
// weights it by the heterogeneity coefficient C_j (the latency of the largest query on the base
// type divided by its latency on j's type), penalises pairs that would miss QoS, and solves the
// rectangular min-cost assignment (Jonker-Volgenant, solvers::AssignmentSolver). Every query is
// matched when there are fewer queries than instances, every instance otherwise. Only the pairs
// whose instance is idle now are dispatched, one query per batch (a query of `size` items is one
// batch of that size); the others wait for the next step. Busy instances take part in the
// matching, so a query may wait for a fast instance that is about to finish instead of taking a
// slow idle one. The step repeats while it dispatches, as the artifact's busy loop would. Among
// assignments of equal cost, older queries start first.
//
// Two formulations:
//   Paper (Eq. 2-8): cost = C_j L'_ij with L'_ij = L_ij if L_ij + W_i <= xi T_qos, else
//     penalty x T_qos (10 x in the paper), W_i the time query i has waited and xi = 0.98 the
//     noise safeguard. Every pending query is a row (window = 0; of the queries that can no
//     longer meet QoS anywhere, whose rows are all alike, the oldest N stand for the others).
//     Three additions where the paper is silent (below): a learned tail in the QoS check (tail),
//     penalised pairs held back unless the query is lost anyway, oldest first among contenders.
//   Artifact (kairos_query_distributor.py): rows = the 2N oldest pending queries (window = 2);
//     slack_ij = -C_j L_ij; with t_qos the time left to the target (0 once it has passed),
//     r = t_qos - L_ij and a safeguard of (1 - xi) T_qos, a pair with r - safeguard < 0 (and a
//     query not yet late) gets slack -500 if r >= 0 else -1000; cost = -slack (ms). C_j is
//     rounded to 2 decimals and predictions to whole ms.
//
// The QoS target T_qos is qos_ms, or each query's own deadline - arrival when qos_ms = 0. The base
// type is `base`, or the hardware fastest on the largest query every instance covers (ClusterRoles).
// Latencies come from a LatencyPredictor (learned online, or the profile). `noise` > 0 perturbs
// every prediction by additive Gaussian noise of standard deviation noise x prediction (Fig. 16b:
// 0.05), drawn once per (query, instance type) from Rng(seed, "scheduler/kairos").
//
// Where the paper is silent or does not fit its own QoS metric (choices of the paper variant):
//   * A tail, not only the mean, in the QoS check. Eq. 5 asks L_ij + W_i <= xi T_qos of one
//     predicted latency, and the paper assumes a run-to-run variance below 0.5% of the mean, so a
//     mean and a p99 coincide. On the artifact's measurements they do not: on t3.xlarge the p99 is
//     1.3-2.6x the mean for every model but rm2, and the heterogeneity coefficient (C_t3 =
//     0.15-0.19) makes the slow instance the cheapest column for every small query whose mean
//     fits. A matching that sends most queries there misses the p99 target on its tail alone, at
//     any rate. With tail = p (paper default 99, the QoS percentile) each pair has a tail
//       tail_ij = m_j x latency_ij,   m_j = the p-th percentile of measured / predicted service time
//     over the last kTailWindow batches of j's (hardware, model), each compared with the
//     prediction (noise included) it was dispatched on; only batches whose prediction was settled
//     (the profile, or a lookup-table entry) count, so the warm-up line's errors do not linger.
//     m_j is 1 before any such batch and at least 1 after. A pair is then one of three kinds:
//       fits    remaining + tail + W_i <= xi T_qos     cost C_j L_ij (Eq. 2)
//       risky   only the mean fits                     cost T_qos + C_j L_ij
//       misses  the mean does not fit                  cost C_j x penalty x T_qos (Eq. 8)
//     Any fitting pair of a query is cheaper than any risky one (C_j L_ij <= T_qos), so a slow,
//     noisy instance gets the queries its tail serves within QoS and, beyond those, only overflow
//     that has no fitting instance in the matching (where the mean says it will probably make it);
//     it may go unused. The cost keeps the mean: the objective is resource usage. The margin also
//     absorbs prediction noise (noise > 0). tail = 0 is the paper as written (every pair fits or
//     misses on the mean).
//   * How predictions start: see LatencyPredictor (online: 0 ms before a pair's first batch, then
//     a line, then the lookup table).
//   * Penalised pairs are not started unless the query is lost anyway. Eq. 7 matches every query
//     when there are fewer queries than instances, so a query that fits QoS only on a busy fast
//     instance whose column went to another query is matched to a penalised pair, typically on a
//     slow idle instance (C_j x penalty x T_qos is least there). Dispatching that pair (as "only
//     idle pairs start" would) is a certain violation, though the query could meet QoS by waiting
//     a few ms for the fast instance. So a penalised pair on an idle instance starts only when the
//     query misses xi T_qos on every instance type even if it started now (it is lost for the
//     p99 whatever happens, and is then placed where its time is worth least); otherwise the
//     query waits for the next matching (Sec. 5.1: queries "may need to wait in a queue until
//     more resources become available and restart another round").
//     The penalised cost of such a query (one that can still meet QoS) also grows by its waiting
//     time plus its fastest predicted latency, so that queries contending for one fast instance
//     take it oldest first (by cost alone the smallest would, and large queries starved into
//     violations). Rows of queries lost anyway keep Eq. 8's cost, so they stay alike.
//
// Pairs an instance cannot serve (the model is missing or the size is beyond its profile) get a
// cost above any full assignment of allowed pairs and are never dispatched. A query no live
// worker can serve is dropped on arrival ("no worker can serve it").
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "servelab/core/params.hpp"
#include "servelab/core/rng.hpp"
#include "servelab/sched/policy_helpers.hpp"
#include "servelab/sched/scheduler_registry.hpp"
#include "servelab/solvers/lap/assignment.hpp"
#include "servelab/systems/kairos/cluster_roles.hpp"
#include "servelab/systems/kairos/latency_predictor.hpp"

namespace servelab::kairos {

enum class Variant { Paper, Artifact };
Variant parse_variant(std::string_view name);  // "paper" | "artifact"; ValueError otherwise
std::string_view variant_name(Variant variant);

struct KairosOptions {
  Variant variant = Variant::Paper;
  double qos_ms = 0.0;  // 0: each query's deadline - arrival
  std::string base;     // empty: the fastest type on the largest query
  double noise = 0.0;   // standard deviation of the prediction noise, relative to the prediction
  PredictorSource predictor = PredictorSource::Online;
  double xi = 0.98;              // QoS safeguard: completion within xi T_qos counts as meeting it
  double penalty = 10.0;         // paper: L'_ij = penalty x T_qos for a pair that misses QoS
  std::int64_t window = 0;       // rows: the window x instances oldest queries (0: all pending)
  std::int64_t table_after = 3;  // observations a size needs before its lookup-table mean is used
  std::int64_t coef_batch = 0;   // size at which C_j is measured (0: ClusterRoles::largest)
  // Percentile of measured / predicted service time that makes a pair risky (0: none, the mean
  // alone as in the paper's Eq. 5 and the artifact; paper default 99, the QoS percentile).
  double tail = 0.0;
  std::string description = "kairos";

  // ValueError naming the field and value.
  void validate() const;
  // The defaults of a variant: paper (online predictor, all rows) or artifact (profile, 2N rows).
  static KairosOptions defaults(Variant variant);
};

// The inputs of one matrix entry, in milliseconds.
struct EntryInputs {
  double coefficient = 1.0;  // C_j
  double remaining_ms = 0;   // remaining busy time of instance j
  double latency_ms = 0;     // predicted latency of query i on j
  double waited_ms = 0;      // W_i
  double qos_ms = 0;         // T_qos of query i
  double tail_ms = 0;        // predicted tail latency of query i on j for the QoS check (<= latency_ms: none)
};
// Eq. 5 with the safeguard fails on the mean: remaining + latency + waited > xi T_qos.
bool misses_qos(const EntryInputs& e, double xi);
// The mean meets Eq. 5 but the tail does not: remaining + max(latency, tail) + waited > xi T_qos.
bool risks_qos(const EntryInputs& e, double xi);
// Eq. 2 with Eq. 8: C_j L'_ij; C_j x penalty x T_qos when misses_qos, T_qos + C_j L_ij when
// risks_qos (see above).
double paper_cost(const EntryInputs& e, double xi, double penalty);
// The artifact's -slack_ij.
double artifact_cost(const EntryInputs& e, double xi);
// C_j = base / type latency at the coefficient size (1 when either is unknown, i.e. not > 0),
// rounded to 2 decimals when `round2`.
double heterogeneity_coefficient(double base_ms, double type_ms, bool round2);

class KairosDistributor final : public sched::Scheduler {
 public:
  explicit KairosDistributor(KairosOptions options);

  std::string describe() const override { return options_.description; }
  void on_start(const sched::ClusterView& view, sched::Actions& actions) override;
  void on_arrival(const sched::Query& query, const sched::ClusterView& view, sched::Actions& actions) override;
  void on_batch_done(const sched::BatchDone& done, const sched::ClusterView& view, sched::Actions& actions) override;
  void on_timer(std::int64_t tag, const sched::ClusterView& view, sched::Actions& actions) override;
  void on_worker_ready(sched::WorkerId worker, const sched::ClusterView& view, sched::Actions& actions) override;

  // One matching: builds the matrix over the pending queries and the idle or busy instances,
  // solves it and dispatches the pairs whose instance is idle. Returns how many it dispatched.
  std::int64_t decide_once(const sched::ClusterView& view, sched::Actions& actions);

  struct Stats {
    std::int64_t decisions = 0;    // matrices built and solved
    std::int64_t dispatched = 0;   // queries dispatched
    std::int64_t timer_steps = 0;  // steps run because a penalty changed state
    std::int64_t max_rows = 0;     // largest matrix: rows
    std::int64_t total_rows = 0;   // rows summed over the decisions
    std::int64_t held = 0;         // paper: matched to an idle instance it would miss QoS on, kept waiting
  };
  const Stats& stats() const { return stats_; }
  const KairosOptions& options() const { return options_; }
  const ClusterRoles& roles() const { return roles_; }
  // C_j of each worker as used by the last decision (1 for workers not in it).
  double coefficient(sched::WorkerId worker) const;
  const LatencyPredictor& predictor() const { return predictor_; }
  // The tail margin m_j of a (hardware, model) pair (1 before any settled batch or when tail = 0).
  double tail_margin(sched::HardwareId hardware, sched::ModelId model) const;
  // Batches of a ratio window: the tail margin is the percentile of the last this many ratios.
  static constexpr std::size_t kTailWindow = 400;

 private:
  void step(const sched::ClusterView& view, sched::Actions& actions);
  void refresh_workers(const sched::ClusterView& view);
  void refresh_coefficients(const sched::ClusterView& view);
  double noise_factor(sched::QueryId id, std::size_t type_class);
  // Predicted latency (ms) and model of a query on each worker class (model -1: cannot serve);
  // returns the smallest latency (inf when no class can serve it).
  // Also the tail latency for the QoS check (tail_ms); returns the smallest tail latency.
  double predict_row(const sched::ClusterView& view, const sched::Query& q, double* latency_ms, double* tail_ms,
                     sched::ModelId* model);
  void observe_ratio(const sched::BatchDone& done, const sched::ClusterView& view);
  void select_rows(const sched::ClusterView& view, std::int64_t n_cols);
  void forget(const sched::Query& q);
  void resync(const std::deque<sched::QueryId>& queue);
  Nanos qos_key(const sched::Query& q) const;
  // After a decision that started nothing: when a penalty of its matrix changes state next.
  Nanos next_penalty_change(Nanos now, std::int64_t n_rows, std::int64_t n_cols) const;
  double query_qos_ms(const sched::Query& query) const;

  KairosOptions options_;
  LatencyPredictor predictor_;
  ClusterRoles roles_;
  Rng rng_{0, "scheduler/kairos"};
  solvers::AssignmentSolver solver_;
  Stats stats_;

  // Workers with the same hardware and models behave alike: predictions are made per class.
  sched::WorkerId known_workers_ = -1;
  std::vector<std::int32_t> class_of_;      // by worker
  std::vector<sched::WorkerId> class_rep_;  // a worker of each class
  std::vector<double> class_coef_;          // C_j by class
  bool coefficients_fresh_ = false;
  std::vector<Nanos> finish_;  // predicted end of the batch we started, by worker (-1: none)
  // The prediction (ms, noise included) the running batch of each worker was dispatched on, and
  // whether it was settled (profile or lookup table); 0: none.
  std::vector<double> dispatched_ms_;
  std::vector<char> dispatched_settled_;
  // Measured / predicted service time of recent settled batches, by (hardware, model): a ring of
  // kTailWindow, and the margin (its tail percentile) recomputed on each new ratio.
  struct TailRatios {
    std::vector<double> ring;
    std::size_t next = 0;
    double margin = 1.0;
  };
  std::map<std::pair<sched::HardwareId, sched::ModelId>, TailRatios> tail_ratios_;

  // Scratch, reused between decisions.
  std::vector<sched::WorkerId> cols_;
  std::vector<char> col_idle_;
  std::vector<Nanos> col_free_;
  std::vector<double> col_remaining_ms_;
  std::vector<std::int32_t> col_class_;
  std::vector<sched::QueryId> rows_;
  std::vector<Nanos> row_arrival_;
  std::vector<char> row_hopeless_, missing_;
  std::vector<double> row_qos_ms_;
  std::vector<double> cost_, latency_ms_, tail_ms_;
  std::vector<sched::ModelId> model_;
  std::unordered_map<sched::QueryId, std::vector<double>> noise_;  // standard normals by class
  std::vector<double> row_latency_, row_tail_;
  std::vector<sched::ModelId> row_model_;

  // Pending queries when every one is a row (window = 0): those that may still meet QoS, in
  // arrival order, and those that cannot any more, by (T_qos, id).
  struct LiveQuery {
    sched::QueryId id;
    double fastest_ms;  // its smallest predicted latency (NaN: not computed yet)
  };
  std::vector<LiveQuery> live_;
  std::set<std::pair<Nanos, sched::QueryId>> hopeless_;

  Nanos next_change_ = sched::kNever;  // when a penalty of the last matrix changes state
  Nanos timer_at_ = sched::kNever;
  std::int64_t timer_tag_ = 0;
};

// kairos(variant='paper', qos_ms=0, base='', noise=0, predictor='auto', xi=0.98, penalty=10,
// window=-1, table_after=3, coef_batch=0, tail=-1); 'auto' and -1 take the variant's defaults.
void register_kairos(sched::SchedulerRegistry& registry);
KairosOptions kairos_options_from(const Params& params);

}  // namespace servelab::kairos
