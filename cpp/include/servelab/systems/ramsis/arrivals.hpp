// The arrival process one worker's MDP sees: the central arrival distribution PF(k, T) combined
// with the load balancer (Sec. 4.4, Appendix I).
//
// Every supported case reduces to one shape, which the builder evaluates exactly: the worker
// receives every `stride`-th event of a Poisson process of rate `event_rate`.
//  - Poisson central arrivals, round-robin over K workers: stride K, rate lambda (Eq. 1-3; the
//    per-worker inter-arrivals are Erlang-K).
//  - Erlang-r (Gamma with integer shape r) central inter-arrivals: each arrival is every r-th event
//    of a Poisson process of rate r * lambda, so round-robin gives stride r * K, rate r * lambda.
//  - Shortest-queue-first (Appendix I): the worker sees a Poisson process whose rate depends on its
//    queue length n, lambda_w(n) = (lambda / (K mu))^K mu for n >= 3, lambda / K otherwise; stride 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace servelab::ramsis {

enum class Balancer { RoundRobin, ShortestQueue };  // "round_robin" / "shortest_queue"

struct ArrivalModel {
  std::string kind = "poisson";  // "poisson" or "erlang" (alias "gamma" with an integer shape)
  double shape = 1.0;            // erlang: inter-arrival shape r (CV^2 = 1/r); must be an integer >= 1
};

// Validated (ValueError naming the field): the Erlang shape as an integer (1 for Poisson).
std::int32_t erlang_shape(const ArrivalModel& model);

struct WorkerArrivals {
  double event_rate_per_ns = 0.0;  // rate of the underlying Poisson process
  std::int32_t stride = 1;         // the worker gets every stride-th event
};

// The process worker sees while its queue holds `queue_length` queries. load_qps: total load at
// the central queue; service_rate_qps: the worker's service rate mu (shortest-queue only).
WorkerArrivals worker_arrivals(const ArrivalModel& model, Balancer balancer, double load_qps, std::int32_t workers,
                               std::int32_t queue_length, double service_rate_qps);

std::string balancer_name(Balancer balancer);
Balancer parse_balancer(const std::string& name);  // ValueError naming the value

// Poisson helpers, robust against under/overflow (computed around the mode in log space).
// pmf[k - k0] = P(N = k) for k in [k0, k1), mean mu >= 0.
void poisson_pmf_range(double mu, std::int64_t k0, std::int64_t k1, double* out);
// cdf[k] = P(N <= k) for k in [0, k1).
void poisson_cdf_prefix(double mu, std::int64_t k1, double* out);
// w[x] proportional to P(N = base + x), x in [0, count), normalised in log space (so it is a
// proper conditional even when every term underflows); mu == 0 with base > 0: uniform.
void conditional_poisson_weights(double mu, std::int64_t base, std::int32_t count, double* out);

}  // namespace servelab::ramsis
