"""The tuning experiment of :func:`servelab.rrl.tune` with every episode served by
``servelab.simulate`` (RrlTuner held at the configuration, service times from the ``rrl_cpu``
config model) instead of the episode model: the same arrivals, load levels, learner, oracle search,
replays and convergence rule, step for step. Noise-free (the simulator serves the profile's mean)
and for the CPU space's latency objectives with the Q-learners (``"rrl"``, ``"qlearning"``).

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
from .tuning import ConfigSpace, LearnerConfig, QLearner, TuningRun, _learner, draw_episodes

METHODS = ("rrl", "qlearning")


def _evenly_spaced(total: int, count: int) -> list[int]:
    """The oracle's scored episodes, chosen as the C++ tuning run chooses them."""
    count = min(count, total)
    out: list[int] = []
    for k in range(count):
        i = 0 if count == 1 else (k * (total - 1) + (count - 1) // 2) // (count - 1)
        if not out or out[-1] != i:
            out.append(i)
    return out


def tune_simulated(
    space: ConfigSpace,
    arrivals: Any,
    method: str = "rrl",
    *,
    objective: str = "mean",
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
        raise ValueError(f"method={method!r}: the simulated episodes run {', '.join(METHODS)}")
    if objective not in ("mean", "p95"):
        raise ValueError(f"objective={objective!r} must be 'mean' or 'p95' here")
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
    q = QLearner(space, model.to_dict(), states=max_states, rate_scale=8 * width,
                 objective=objective, region=method == "rrl", learner=cfg, seed=seed)  # fmt: skip

    def metric(config: int, episode: np.ndarray) -> float:
        served = episode_in_simulator(space, config, episode, model=model)
        return served["mean_ms" if objective == "mean" else "p95_ms"]

    scored = [episodes[i] for i in _evenly_spaced(steps, oracle_episodes)]
    surface = np.array([[metric(c, e) for e in scored] for c in range(space.size)])
    best = int(np.argmin(surface.mean(axis=1)))  # the first of equals, as the search in C++
    cols: dict[str, list[float]] = {k: [] for k in (
        "config", "greedy", "state", "rate_qps", "metric_ms", "chosen_ms", "greedy_ms",
        "oracle_ms", "learn_ns")}  # fmt: skip
    for t in range(steps):
        s = level(rates[0] if t == 0 else rates[t - 1])
        t0 = time.perf_counter_ns()
        c = q.choose(s)
        t1 = time.perf_counter_ns()
        seen = metric(c, episodes[t])
        t2 = time.perf_counter_ns()
        q.learn(s, c, float(rates[t]), seen, level(rates[t]))
        t3 = time.perf_counter_ns()
        g = q.greedy(s)
        greedy = seen if g == c else metric(g, episodes[t])
        oracle = seen if best == c else greedy if best == g else metric(best, episodes[t])
        for key, value in (("config", c), ("greedy", g), ("state", s), ("rate_qps", rates[t]),
                           ("metric_ms", seen), ("chosen_ms", seen), ("greedy_ms", greedy),
                           ("oracle_ms", oracle), ("learn_ns", t1 - t0 + t3 - t2)):  # fmt: skip
            cols[key].append(value)
    columns = {k: np.asarray(v, dtype=np.uint32 if k in ("config", "greedy", "state") else float)
               for k, v in cols.items()}  # fmt: skip
    for key in ("", "chosen_", "greedy_", "oracle_"):
        columns[f"{key}cost"] = np.log1p(columns[f"{key or 'metric_'}ms"])
    converged = _rrl.convergence_step(columns["greedy_ms"], columns["oracle_ms"], tolerance, window)
    options = {"steps": steps, "episode_requests": episode_requests,
               "state_width_qps": state_width_qps, "max_states": max_states,
               "oracle_episodes": oracle_episodes, "tolerance": tolerance,
               "window": window}  # fmt: skip
    oracle = {"config": best, "values": list(space.values(best)),
              "describe": space.describe(best), "cost": float(np.log1p(surface[best]).mean()),
              "metric_ms": float(surface[best].mean()), "feasible": True,
              "evaluated": space.size}  # fmt: skip
    return TuningRun(
        method=method, objective=objective, slo_ms=0.0, space=space, columns=columns,
        oracle=oracle, converged_step=int(converged), mean_region_size=float(q.mean_region_size),
        states=max_states, state_width_qps=width,
        settings={**options, "seed": seed, "learner": cfg, "model": model.to_dict(),
                  "world": "simulate"},
    )  # fmt: skip
