"""A plain numpy/scipy implementation of RAMSIS's per-worker MDP, value iteration and guarantees.

The reference the benchmark (bench_ramsis_policy.py) times servelab against, and the tests compare
with: the same states, actions, rewards and transition probabilities as servelab's builder, but
computed straight from the paper's Eq. 2 with dense numpy algebra per (queue length, model) and
slot, then value iteration and power iteration on scipy sparse matrices.

Eq. 2 as matrices, for a maximal batch served in tau and a next slot j' with intervals B, C, D
(Fig. 4): with y = (k_A mod K) + k_B the events of the round-robin cycle used by the end of B, and
z = the events after the worker's first arrival up to the end of C,
    S[x, n'] = sum_{y, z} pB[y - x] * pC[z + K - y] * P(k_D in [(n'-1)K - z, n'K - 1 - z]),
i.e. a product of a (K x K), a (K x Z) and a (Z x N) matrix; a state's row mixes S over the phase
x with weights proportional to Poisson((n-1)K + x; lambda (SLO - T_j)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln
from scipy.stats import binom


def poisson_pmf(mu: float, ks: np.ndarray) -> np.ndarray:
    ks = np.asarray(ks, dtype=np.float64)
    if mu <= 0:
        return (ks == 0).astype(np.float64)
    return np.exp(ks * np.log(mu) - mu - gammaln(ks + 1))


def phase_weights(mu: float, base: int, count: int) -> np.ndarray:
    """P(N = base + x) normalised over x in [0, count) in log space (uniform: mu = 0 < base)."""
    ks = base + np.arange(count, dtype=np.float64)
    if mu <= 0:
        return np.full(count, 1.0 / count) if base > 0 else (ks == 0).astype(np.float64)
    logs = ks * np.log(mu) - mu - gammaln(ks + 1)
    w = np.exp(logs - logs.max())
    return w / w.sum()


@dataclass
class Mdp:
    levels: np.ndarray  # slack levels, ns
    n_of_state: np.ndarray
    j_of_state: np.ndarray
    state_begin: np.ndarray
    pair_model: np.ndarray
    pair_batch: np.ndarray
    pair_violates: np.ndarray
    reward: np.ndarray
    P: sp.csr_matrix  # pairs x states


def slack_levels(
    latency: np.ndarray, slo: int, max_queue: int, discretisation: str, intervals: int
):
    if discretisation == "fld":
        levels = [(slo * i) // intervals for i in range(intervals + 1)]
    else:
        lat = latency[:, : min(max_queue, latency.shape[1])]
        levels = [0, slo] + [int(x) for x in lat[lat <= slo].ravel()]
    return np.unique(np.array(levels, dtype=np.int64))


def extend_ols(latency: np.ndarray, batch: int) -> np.ndarray:
    """Extends each model to `batch` with an OLS line over its batches (never below its last)."""
    have = latency.shape[1]
    if batch <= have:
        return latency
    b = np.arange(1, have + 1, dtype=np.float64)
    out = [latency]
    extra = np.empty((latency.shape[0], batch - have), dtype=np.int64)
    for m in range(latency.shape[0]):
        slope, intercept = np.polyfit(b, latency[m].astype(np.float64), 1)
        for i, bb in enumerate(range(have + 1, batch + 1)):
            extra[m, i] = int(np.rint(max(intercept + slope * bb, float(latency[m, -1]))))
    out.append(extra)
    return np.concatenate(out, axis=1)


def _finish(
    entries: dict[int, float], overflow_state: int, prune: float
) -> tuple[np.ndarray, np.ndarray]:
    states = np.fromiter(entries.keys(), dtype=np.int64, count=len(entries))
    probs = np.fromiter(entries.values(), dtype=np.float64, count=len(entries))
    order = np.argsort(states)
    states, probs = states[order], probs[order]
    total = probs.sum()
    overflow = max(0.0, 1.0 - total)
    if overflow > 0:
        states, probs = np.append(states, overflow_state), np.append(probs, overflow)
    probs = probs / (total + overflow)
    keep = (probs > 0) & (probs >= prune)
    states, probs = states[keep], probs[keep]
    return states, probs / probs.sum()


def _maximal_kernel(lam, K, slo, T, N, n, tau):
    """S[j', x, n'] for n' = 1..N and the empty-queue mass e[x], for a maximal batch of n."""
    L = len(T)
    Z = (N + 1) * K
    S = np.zeros((L, K, N + 1))
    cdf_tau = np.cumsum(poisson_pmf(lam * tau, np.arange(K)))
    empty = cdf_tau[K - 1 - np.arange(K)]
    x = np.arange(K)
    y = np.arange(K)
    z = np.arange(Z)
    nps = np.arange(1, N + 1)
    for jp in range(L - 1):
        lower = tau - slo + T[jp] if jp > 0 else 0.0
        upper = tau - slo + T[jp + 1]
        tb = max(0.0, lower)
        tc = max(0.0, upper) - tb
        td = max(0.0, tau - max(0.0, upper))
        if tc <= 0:
            continue
        pb = poisson_pmf(lam * tb, np.arange(K))
        diff = y[None, :] - x[:, None]
        PB = np.where(diff >= 0, pb[np.clip(diff, 0, K - 1)], 0.0)  # x -> y
        pc = poisson_pmf(lam * tc, np.arange(Z + K))
        PC = pc[z[None, :] + K - y[:, None]]  # y -> z
        cdf_d = np.cumsum(poisson_pmf(lam * td, np.arange(Z + 1)))
        hi = nps[None, :] * K - 1 - z[:, None]
        lo = (nps[None, :] - 1) * K - z[:, None] - 1
        W = np.where(hi >= 0, cdf_d[np.clip(hi, 0, Z)], 0.0) - np.where(
            lo >= 0, cdf_d[np.clip(lo, 0, Z)], 0.0
        )
        S[jp, :, 1:] = PB @ PC @ W
    return S, empty


def _variable_row(lam, K, slo, T, N, n, j, b, tau):
    L = len(T)
    ta = slo - T[j]
    q0 = (n - 1) * K
    w = phase_weights(lam * ta, q0, K)
    g = np.zeros((L, K))
    if ta <= 0:
        g[max(np.searchsorted(T, T[j] - tau, side="right") - 1, 0), :] = 1.0
    else:
        f = np.array([0.0] + [np.clip(T[i] - T[j] + tau, 0.0, ta) for i in range(1, L)] + [ta])
        qs = q0 + np.arange(K)
        above = binom.cdf(b * K - 1, qs[None, :], (f / ta)[:, None])  # P(T_bK > f | q)
        g = np.clip(above[:-1] - above[1:], 0.0, None)
    amax = N - (n - b)
    cdf = np.cumsum(poisson_pmf(lam * tau, np.arange((amax + 2) * K)))

    def cdf_at(q):
        return np.where(q < 0, 0.0, cdf[np.clip(q, 0, len(cdf) - 1)])

    a = np.arange(amax + 1)[:, None]
    xs = np.arange(K)[None, :]
    A = cdf_at(a * K + K - 1 - xs) - cdf_at(a * K - xs - 1)  # (a, x)
    P = np.einsum("x,sx,ax->as", w, g, A)
    return {
        int((n - b + ai) * L + s): float(P[ai, s])
        for ai in range(amax + 1)
        for s in range(L)
        if P[ai, s] > 0
    }


def build(
    latency_ns: np.ndarray,
    accuracy: np.ndarray,
    *,
    slo_ns: int,
    load_qps: float,
    workers: int,
    max_queue: int = 32,
    discretisation: str = "fld",
    intervals: int = 100,
    batching: str = "maximal",
    prune: float = 1e-12,
) -> Mdp:
    """The MDP of servelab's builder (Poisson arrivals, round-robin, models as given - no Pareto
    pruning here) from latency_ns [model, batch - 1] and accuracy [model]."""
    N, K = max_queue, workers
    latency = extend_ols(np.asarray(latency_ns, dtype=np.int64), N + 1)
    acc = np.asarray(accuracy, dtype=np.float64)
    M = latency.shape[0]
    T = slack_levels(latency, slo_ns, N, discretisation, intervals).astype(np.float64)
    L = len(T)
    lam = load_qps * 1e-9
    n_states = (N + 1) * L + 1
    overflow = (N + 1) * L
    default = [0] + [int(np.argmin(latency[:, n - 1])) for n in range(1, N + 2)]

    specs = []  # (state, model, batch, violates, reward)
    state_begin = [0]
    for s in range(n_states):
        n, j = (N + 1, 0) if s == overflow else divmod(s, L)
        if n == 0:
            specs.append((s, -1, 0, False, 0.0))
        else:
            first = len(specs)
            if n <= N:
                smallest = n if batching == "maximal" else 1
                for bb in range(n, smallest - 1, -1):
                    for m in range(M):
                        if latency[m, bb - 1] <= T[j]:
                            specs.append((s, m, bb, False, acc[m] * bb / n))
            d = default[n]
            if not any(p[1] == d and p[2] == n for p in specs[first:]):
                specs.append((s, d, n, True, 0.0))
        state_begin.append(len(specs))

    rows: list[tuple[np.ndarray, np.ndarray]] = [None] * len(specs)  # type: ignore[list-item]
    kernels = {}
    for p, (s, m, bb, _, _) in enumerate(specs):
        n, j = (N + 1, 0) if s == overflow else divmod(s, L)
        if n == 0:
            rows[p] = (np.array([L + L - 1]), np.array([1.0]))
            continue
        tau = float(latency[m, bb - 1])
        if bb == n:
            if (n, m) not in kernels:
                kernels[(n, m)] = _maximal_kernel(lam, K, float(slo_ns), T, N, n, tau)
            S, empty = kernels[(n, m)]
            w = phase_weights(lam * (slo_ns - T[j]), (n - 1) * K, K)
            mixed = np.einsum("x,jxn->nj", w, S)  # (n', j')
            nz_n, nz_j = np.nonzero(mixed[1:, : L - 1] > 0)
            states = (nz_n + 1) * L + nz_j
            entries = dict(zip(states.tolist(), mixed[nz_n + 1, nz_j].tolist(), strict=True))
            entries[L + L - 1] = float(w @ empty)
        else:
            entries = _variable_row(lam, K, float(slo_ns), T, N, n, j, bb, tau)
        rows[p] = _finish(entries, overflow, prune)

    indptr = np.concatenate([[0], np.cumsum([len(r[0]) for r in rows])])
    indices = np.concatenate([r[0] for r in rows])
    data = np.concatenate([r[1] for r in rows])
    P = sp.csr_matrix((data, indices, indptr), shape=(len(specs), n_states))
    return Mdp(
        levels=T.astype(np.int64),
        n_of_state=np.array([N + 1 if s == overflow else s // L for s in range(n_states)]),
        j_of_state=np.array([0 if s == overflow else s % L for s in range(n_states)]),
        state_begin=np.array(state_begin),
        pair_model=np.array([p[1] for p in specs]),
        pair_batch=np.array([p[2] for p in specs]),
        pair_violates=np.array([p[3] for p in specs]),
        reward=np.array([p[4] for p in specs]),
        P=P,
    )


def value_iteration(mdp: Mdp, sweeps: int = 100) -> np.ndarray:
    """`sweeps` undiscounted sweeps from V = 0; the greedy policy of the final values (ties: the
    first action). Returns the chosen action index per state."""
    V = np.zeros(mdp.P.shape[1])
    starts = mdp.state_begin[:-1]
    for _ in range(sweeps):
        Q = mdp.reward + mdp.P @ V
        V = np.maximum.reduceat(Q, starts)
    Q = mdp.reward + mdp.P @ V
    choice = np.empty(len(starts), dtype=np.int64)
    for s, (a, b) in enumerate(zip(mdp.state_begin[:-1], mdp.state_begin[1:], strict=True)):
        choice[s] = int(np.argmax(Q[a:b]))
    return choice


def guarantees(mdp: Mdp, choice: np.ndarray, tol: float = 1e-12, max_iter: int = 100000) -> dict:
    """Expected accuracy / violation per query from the stationary distribution (power iteration
    from the empty state)."""
    pairs = mdp.state_begin[:-1] + choice
    P = mdp.P[pairs]
    pi = np.zeros(P.shape[0])
    pi[0] = 1.0
    PT = P.T.tocsr()
    for _ in range(max_iter):
        new = PT @ pi
        new /= new.sum()
        done = np.abs(new - pi).sum() < tol
        pi = new
        if done:
            break
    batch = mdp.pair_batch[pairs].astype(np.float64)
    model = mdp.pair_model[pairs]
    violates = mdp.pair_violates[pairs]
    q = pi * batch
    return {
        "distribution": pi,
        "violation": q[violates].sum() / q.sum(),
        "weights": q,
        "model": model,
    }


def generate(latency_ns, accuracy, *, sweeps: int = 100, **options) -> tuple[Mdp, np.ndarray, dict]:
    """build + value_iteration + guarantees; returns (mdp, choice, guarantees)."""
    mdp = build(latency_ns, accuracy, **options)
    choice = value_iteration(mdp, sweeps)
    return mdp, choice, guarantees(mdp, choice)
