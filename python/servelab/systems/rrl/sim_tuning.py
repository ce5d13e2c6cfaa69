"""The tuning experiment of :func:`servelab.rrl.tune` with every episode served by
``servelab.simulate`` (RrlTuner held at the configuration, service times from the ``rrl_cpu``
config model) instead of the episode model: the same arrivals, load levels, learner, oracle search,
replays and convergence rule, step for step. Noise-free (the simulator serves the profile's mean),
for the CPU space, every method of ``tune`` (``"rrl"``, ``"qlearning"``, ``"capes"``,
``"deeprm"``) and every objective (``"mean"``, ``"p95"``, ``"slo"`` with ``slo_ms``).

It is the one-scheduler-code-path check of the experiments: with ``noise_cv=0`` it makes the same
choices as ``tune`` (tests/python/test_rrl_episode_agreement.py), at a few milliseconds per
simulated episode against microseconds, so the figures and fidelity tables run on ``tune``.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ... import workload as _workload
from ..._core import rrl as _rrl
from .model import PerfModel
from .sim_policy import episode_in_simulator
from .tuning import (
    METHODS,
    ConfigSpace,
    LearnerConfig,
    QLearner,
    TuningRun,
    _learner,
    _objective,
    _share,
    draw_episodes,
)


def _evenly_spaced(total: int, count: int) -> list[int]:
    """The oracle's scored episodes, chosen as the C++ tuning run chooses them."""
    count = min(count, total)
    out: list[int] = []
    for k in range(count):
        i = 0 if count == 1 else (k * (total - 1) + (count - 1) // 2) // (count - 1)
        if not out or out[-1] != i:
            out.append(i)
    return out


def _pooled_p95(latencies: list[np.ndarray]) -> float:
    """The nearest-rank 95th percentile of every scored request, as the C++ oracle takes it."""
    pooled = np.sort(np.concatenate(latencies))
    return float(pooled[math.ceil(0.95 * pooled.size) - 1])


def _slo_oracle(p95: np.ndarray, shares: np.ndarray, slo_ms: float) -> tuple[int, bool]:
    """The least share whose pooled p95 meets the SLO (lower p95 among equal shares, then the
    first); when none does, the lowest p95, flagged infeasible: the C++ search's rule."""
    best, feasible = -1, False
    for c in range(p95.size):
        if p95[c] > slo_ms:
            continue
        if (
            not feasible
            or shares[c] < shares[best]
            or (shares[c] == shares[best] and p95[c] < p95[best])
        ):
            best, feasible = c, True
    return (best, True) if feasible else (int(np.argmin(p95)), False)


def tune_simulated(
    space: ConfigSpace,
    arrivals: Any,
    method: str = "rrl",
    *,
    objective: str = "mean",
    slo_ms: float | None = None,
    steps: int = 200,
    episode_requests: int = 200,
    learner: LearnerConfig | dict[str, Any] | None = None,
    model: PerfModel | None = None,
    state_width_qps: float = 0.0,
    max_states: int = 32,
    oracle_episodes: int = 50,
    tolerance: float = 0.1,
    window: int = 50,
    seed: int = 0,
) -> TuningRun:
    """:func:`servelab.rrl.tune` with each episode run by ``servelab.simulate``; the same
    arguments (``model.noise_cv`` must be 0). ``settings["world"]`` is ``"simulate"``."""
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not one of {', '.join(METHODS)}")
    slo = _objective(objective, slo_ms)
    model = model or PerfModel(noise_cv=0.0)
    if not isinstance(model, PerfModel):
        raise ValueError(f"model={model!r} must be a servelab.rrl.PerfModel")
    if model.noise_cv != 0:
        raise ValueError(
            f"model.noise_cv={model.noise_cv!r}: simulated episodes are noise-free, set 0"
        )
    if not (isinstance(state_width_qps, int | float) and state_width_qps >= 0):
        raise ValueError(f"state_width_qps={state_width_qps!r} must be >= 0 (0: automatic)")
    process = _workload.make_arrival_process(arrivals) if isinstance(arrivals, str) else arrivals
    episodes = draw_episodes(process, steps, episode_requests, seed)  # validates steps, sizes
    rates = np.array([(e.size - 1) / (e[-1] / 1e3) if e[-1] > 0 else 1e9 for e in episodes])
    width = float(state_width_qps)
    if width == 0:
        mean = process.mean_rate
        width = (mean if math.isfinite(mean) and mean > 0 else rates[0]) / 2

    def level(rate: float) -> int:
        return int(min(round(rate / width), max_states - 1))

    cfg = _learner(learner).to_dict()
    if method != "rrl":
        cfg.pop("radius")
    m = model.to_dict()
    if method in ("capes", "deeprm"):
        q: Any = _rrl.DeepRlTuner(space, method, m, rate_scale=8 * width, objective=objective,
                                  slo_ms=slo, learner=cfg, seed=seed)  # fmt: skip
        decide, best_of = q.decide, q.best
    else:
        q = QLearner(space, m, states=max_states, rate_scale=8 * width, objective=objective,
                     slo_ms=slo, region=method == "rrl", learner=cfg, seed=seed)  # fmt: skip
        decide, best_of = (lambda s, _rate: q.choose(s)), q.greedy
    shares = np.array([_share(space, m, c) for c in range(space.size)])
    metric_key = "mean_ms" if objective == "mean" else "p95_ms"  # the p95 for "p95" and "slo"

    def served(config: int, episode: np.ndarray) -> tuple[float, float, np.ndarray]:
        """(metric_ms, cost, latencies in ms) of one episode served by the simulator."""
        out = episode_in_simulator(space, config, episode, model=model)
        c = out["result"].columns
        metric = out[metric_key]
        cost = _rrl.objective_cost(objective, slo, metric, shares[config])
        return metric, cost, (c["finish_ns"] - c["arrival_ns"]) / 1e6

    scored = [episodes[i] for i in _evenly_spaced(steps, oracle_episodes)]
    table = [[served(c, e) for e in scored] for c in range(space.size)]
    metric_mean = np.array([np.mean([x[0] for x in row]) for row in table])
    cost_mean = np.array([np.mean([x[1] for x in row]) for row in table])
    feasible = True
    if objective == "slo":
        p95 = np.array([_pooled_p95([x[2] for x in row]) for row in table])
        best, feasible = _slo_oracle(p95, shares, slo)
    else:
        best = int(np.argmin(metric_mean))  # the first of equals, as the search in C++
    cols: dict[str, list[float]] = {k: [] for k in (
        "config", "greedy", "state", "rate_qps", "metric_ms", "cost", "chosen_ms", "greedy_ms",
        "oracle_ms", "chosen_cost", "greedy_cost", "oracle_cost", "learn_ns")}  # fmt: skip
    for t in range(steps):
        prev = rates[0] if t == 0 else rates[t - 1]
        s = level(prev)
        t0 = time.perf_counter_ns()
        c = decide(s, prev)
        t1 = time.perf_counter_ns()
        seen = served(c, episodes[t])
        t2 = time.perf_counter_ns()
        q.learn(s, c, float(rates[t]), seen[0], level(rates[t]))
        t3 = time.perf_counter_ns()
        g = best_of(s)
        greedy = seen if g == c else served(g, episodes[t])
        oracle = seen if best == c else greedy if best == g else served(best, episodes[t])
        row = {"config": c, "greedy": g, "state": s, "rate_qps": rates[t], "metric_ms": seen[0],
               "cost": seen[1], "chosen_ms": seen[0], "greedy_ms": greedy[0],
               "oracle_ms": oracle[0], "chosen_cost": seen[1], "greedy_cost": greedy[1],
               "oracle_cost": oracle[1], "learn_ns": t1 - t0 + t3 - t2}  # fmt: skip
        for key, value in row.items():
            cols[key].append(value)
    columns = {k: np.asarray(v, dtype=np.uint32 if k in ("config", "greedy", "state") else float)
               for k, v in cols.items()}  # fmt: skip
    key = "cost" if objective == "slo" else "ms"  # as the C++ run decides convergence
    converged = _rrl.convergence_step(
        columns[f"greedy_{key}"], columns[f"oracle_{key}"], tolerance, window
    )
    options = {"steps": steps, "episode_requests": episode_requests,
               "state_width_qps": state_width_qps, "max_states": max_states,
               "oracle_episodes": oracle_episodes, "tolerance": tolerance,
               "window": window}  # fmt: skip
    oracle = {"config": best, "values": list(space.values(best)),
              "describe": space.describe(best), "cost": float(cost_mean[best]),
              "metric_ms": float(metric_mean[best]), "feasible": bool(feasible),
              "evaluated": space.size}  # fmt: skip
    return TuningRun(
        method=method, objective=objective, slo_ms=slo, space=space, columns=columns,
        oracle=oracle, converged_step=int(converged), mean_region_size=float(q.mean_region_size),
        states=max_states, state_width_qps=width,
        settings={**options, "seed": seed, "learner": cfg, "model": m, "world": "simulate"},
    )  # fmt: skip
