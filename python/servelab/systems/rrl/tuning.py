"""One simulated tuning experiment (Sec. 6): a learner picks a parallelism configuration per
measurement episode of ``episode_requests`` consecutive requests, the performance model serves
them, and the learner learns from the episode's latency. The static best-in-hindsight
configuration (the oracle, found by exhaustive search on the model over the same arrivals) is the
yardstick: the run records, per episode, noise-free replays of the chosen, the greedy (lowest Q)
and the oracle configuration, from which regret and convergence follow.

Methods: ``"rrl"`` (region-based Q-learning with the MLP estimator, Eq. 1-3, Algorithm 1),
``"qlearning"`` (point-based Q-learning, the same learner without regions or estimator), and the
paper's deep-RL baselines as documented simplifications (systems/rrl/deep_rl.hpp in the C++ core):
``"capes"`` (deep Q-learning, 2 x 200 hidden units) and ``"deeprm"`` (REINFORCE, 20 hidden units),
both moving one knob one step per episode.
Objectives: ``"mean"`` and ``"p95"`` latency, or ``"slo"``: the least resources (CPU cores or GPU
batch threads) whose episode p95 meets ``slo_ms``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._core import rrl as _rrl
from .model import PerfModel

METHODS = ("rrl", "qlearning", "capes", "deeprm")
OBJECTIVES = ("mean", "p95", "slo")
ConfigSpace = _rrl.ConfigSpace
LatencyEstimator = _rrl.LatencyEstimator
QLearner = _rrl.QLearner


@dataclass(frozen=True)
class LearnerConfig:
    """The learner's settings (cpp/include/servelab/systems/rrl/q_learner.hpp, estimator.hpp).

    radius: the region radius delta in grid steps (rrl only; 1 = nearest neighbours; the artifact
    uses 3); beta: Boltzmann inverse temperature per unit of cost (costs are ln(1 + latency_ms));
    gamma: discount; lr_power: alpha = (1 + visits)^-lr_power; constant_lr > 0 replaces it (the
    artifact's 0.3); initial: Q's start, "optimistic" (1/|C|, Algorithm 1: every configuration not
    yet reached looks best, so the first steps sweep the space) or "first" (every Q at the first
    measured cost, as the artifact starts); the estimator: hidden1 x hidden2 ReLU units, FTRL
    (ftrl_alpha, ftrl_beta, ftrl_l1, ftrl_l2), minibatch `batch`, `train_steps` per observation,
    then with plateau_patience > 0 more steps until the loss over the memory has not improved in
    plateau_patience checks plateau_every steps apart (at most max_train_steps; the artifact
    retrains to such a plateau after every observation), replay `memory`, and
    `estimator`, where its arithmetic runs: "eigen" (built in, the default) or "libtorch" (loads
    servelab's torch backend on first use; the same seeded weights and minibatches); the
    deep-RL baselines: drl_hidden (0: CAPES 200 per layer, DeepRM 20), drl_learning_rate
    (RMSProp), drl_gamma, drl_epsilon_steps (CAPES), drl_batch, drl_target_every, drl_trajectory
    (DeepRM), drl_memory.
    """

    radius: float = 1.0
    beta: float = 20.0
    gamma: float = 0.0
    lr_power: float = 0.8
    constant_lr: float = 0.0
    hidden1: int = 256
    hidden2: int = 64
    ftrl_alpha: float = 0.05
    ftrl_beta: float = 1.0
    ftrl_l1: float = 0.0
    ftrl_l2: float = 0.0
    batch: int = 4
    train_steps: int = 1
    plateau_patience: int = 0
    plateau_every: int = 10
    max_train_steps: int = 500
    initial: str = "optimistic"
    memory: int = 100_000
    estimator: str = "eigen"
    drl_hidden: int = 0
    drl_learning_rate: float = 0.001
    drl_gamma: float = 0.9
    drl_epsilon_steps: int = 1000
    drl_batch: int = 32
    drl_target_every: int = 100
    drl_trajectory: int = 20
    drl_memory: int = 10_000

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _learner(learner: LearnerConfig | dict[str, Any] | None) -> LearnerConfig:
    if learner is None:
        return LearnerConfig()
    if isinstance(learner, LearnerConfig):
        return learner
    if isinstance(learner, dict):
        known = {f.name for f in dataclasses.fields(LearnerConfig)}
        unknown = sorted(set(learner) - known)
        if unknown:
            raise KeyError(
                f"learner has no option {unknown[0]!r} (known: {', '.join(sorted(known))})"
            )
        return LearnerConfig(**learner)
    raise ValueError(f"learner={learner!r} must be a LearnerConfig, a dict or None")


def _objective(objective: str, slo_ms: float | None) -> float:
    if objective not in OBJECTIVES:
        raise ValueError(f"objective={objective!r} is not one of {', '.join(OBJECTIVES)}")
    if objective == "slo":
        if slo_ms is None:
            raise ValueError("objective='slo' needs slo_ms (the p95 latency target, ms)")
        if not (isinstance(slo_ms, int | float) and math.isfinite(slo_ms) and slo_ms > 0):
            raise ValueError(f"slo_ms={slo_ms!r} must be a positive finite number of ms")
        return float(slo_ms)
    if slo_ms is not None:
        raise ValueError(f"slo_ms={slo_ms!r} is only used by objective='slo'")
    return 0.0


@dataclass
class TuningRun:
    """A finished tuning experiment. ``columns`` hold one value per episode:

    config, greedy, state (ints); rate_qps; metric_ms, cost (observed, with noise); chosen_ms,
    greedy_ms, oracle_ms and *_cost (noise-free replays of the same episode); learn_ns (wall time
    of the learning step, not deterministic). ``metric`` is the objective's latency: the mean
    (objective "mean") or the 95th percentile of the episode.
    """

    method: str
    objective: str
    slo_ms: float
    space: ConfigSpace
    columns: dict[str, np.ndarray]
    oracle: dict[str, Any]
    converged_step: int
    mean_region_size: float
    states: int
    state_width_qps: float
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def steps(self) -> int:
        return int(self.columns["config"].size)

    def regret(self) -> np.ndarray:
        """Cumulative regret: sum over episodes of (chosen - oracle) noise-free objective latency,
        ms (for the SLO objective: of the cost)."""
        key = "cost" if self.objective == "slo" else "ms"
        return np.cumsum(self.columns[f"chosen_{key}"] - self.columns[f"oracle_{key}"])

    def resource_share(self) -> np.ndarray:
        """Per episode, the chosen configuration's share of the resources (cores on CPU, batch
        threads on GPU), as the SLO objective counts it (Fig. 15)."""
        configs, inverse = np.unique(self.columns["config"], return_inverse=True)
        model = self.settings.get("model", {})
        return np.array([_share(self.space, model, int(c)) for c in configs])[inverse]

    def summary(self, tail: int | None = None) -> dict[str, Any]:
        """Scalar results; the last ``tail`` episodes (default: the convergence window, at least a
        tenth of the run) describe where the learner ended up."""
        c = self.columns
        n = self.steps
        tail = max(1, min(n, tail or max(self.settings.get("window", 50), n // 10)))
        last = slice(n - tail, n)
        final_greedy = int(c["greedy"][-1])
        out: dict[str, Any] = {
            "method": self.method,
            "objective": self.objective,
            "steps": n,
            "converged_step": self.converged_step,
            "converged": self.converged_step >= 0,
            "mean_region_size": self.mean_region_size,
            "final_config": self.space.describe(final_greedy),
            "final_latency_ms": float(c["greedy_ms"][last].mean()),
            "oracle_config": self.oracle["describe"],
            "oracle_latency_ms": float(c["oracle_ms"][last].mean()),
            "final_ratio": float(c["greedy_ms"][last].sum() / c["oracle_ms"][last].sum()),
            "mean_chosen_latency_ms": float(c["chosen_ms"].mean()),
            "tail_chosen_latency_ms": float(c["chosen_ms"][last].mean()),
            "mean_regret_ms": float((c["chosen_ms"] - c["oracle_ms"]).mean()),
            "median_learn_us": float(np.median(c["learn_ns"]) / 1e3),
        }
        if self.objective == "slo":
            out["slo_ms"] = self.slo_ms
            out["slo_feasible"] = bool(self.oracle["feasible"])
            out["violation_rate"] = float((c["chosen_ms"] > self.slo_ms).mean())
            out["tail_violation_rate"] = float((c["chosen_ms"][last] > self.slo_ms).mean())
            # the learned policy without exploration (the greedy configuration), at the end
            out["tail_greedy_violation_rate"] = float((c["greedy_ms"][last] > self.slo_ms).mean())
            model = self.settings.get("model", {})
            shares = np.array([_share(self.space, model, int(x)) for x in c["config"][last]])
            out["tail_resource_share"] = float(shares.mean())
            if not self.oracle["feasible"]:
                out["note"] = (
                    f"no configuration meets slo_ms={self.slo_ms:g}: the oracle is the fastest, "
                    f"{self.oracle['describe']}"
                )
        return out

    def to_frame(self) -> Any:
        """The per-episode columns as a pandas DataFrame (with the configurations described)."""
        import pandas as pd  # on use: keeps `import servelab.rrl` light

        frame = pd.DataFrame({k: v for k, v in self.columns.items()})
        frame.insert(0, "step", np.arange(self.steps))
        return frame


def _share(space: ConfigSpace, model: dict[str, float], config: int) -> float:
    return float(_rrl.episode(space, model, config, np.zeros(1))["resource_share"])


def tune(
    space: ConfigSpace,
    arrivals: Any,
    method: str = "rrl",
    *,
    objective: str = "mean",
    slo_ms: float | None = None,
    steps: int = 2000,
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
    """Runs one simulated tuning experiment; ``arrivals`` is an ArrivalProcess or a spec string.
    The same seed gives the same run (the learn_ns timings aside)."""
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not one of {', '.join(METHODS)}")
    slo = _objective(objective, slo_ms)
    cfg = _learner(learner)
    model = model or PerfModel()
    if not isinstance(model, PerfModel):
        raise ValueError(f"model={model!r} must be a servelab.rrl.PerfModel")
    learner_dict = cfg.to_dict()
    if method != "rrl":
        learner_dict.pop("radius")  # no region
    options = {
        "steps": steps,
        "episode_requests": episode_requests,
        "state_width_qps": state_width_qps,
        "max_states": max_states,
        "oracle_episodes": oracle_episodes,
        "tolerance": tolerance,
        "window": window,
    }
    raw = _rrl.tune(
        space, arrivals, method, objective, slo, model.to_dict(), learner_dict, options, seed
    )
    columns = {k: raw[k] for k in raw if isinstance(raw[k], np.ndarray)}
    return TuningRun(
        method=method,
        objective=objective,
        slo_ms=slo,
        space=space,
        columns=columns,
        oracle=dict(raw["oracle"]),
        converged_step=int(raw["converged_step"]),
        mean_region_size=float(raw["mean_region_size"]),
        states=int(raw["states"]),
        state_width_qps=float(raw["state_width_qps"]),
        settings={**options, "seed": seed, "learner": learner_dict, "model": model.to_dict()},
    )


def draw_episodes(
    arrivals: Any, steps: int, episode_requests: int = 200, seed: int = 0
) -> np.ndarray:
    """Arrival times (ms from each episode's first request), shape [steps, episode_requests]."""
    return _rrl.draw_episodes(arrivals, steps, episode_requests, seed)


def episode(
    space: ConfigSpace,
    config: int,
    arrivals_ms: Any,
    *,
    model: PerfModel | None = None,
    objective: str = "mean",
    slo_ms: float | None = None,
    seed: int | None = None,
) -> dict[str, float]:
    """One episode under a configuration: mean_ms, p95_ms, metric_ms, cost, resource_share
    (seed None: noise-free)."""
    slo = _objective(objective, slo_ms)
    return _rrl.episode(
        space, (model or PerfModel()).to_dict(), config, arrivals_ms, objective, slo, seed
    )


def surface(
    space: ConfigSpace,
    episodes: Any,
    *,
    model: PerfModel | None = None,
    objective: str = "mean",
    slo_ms: float | None = None,
) -> np.ndarray:
    """The noise-free objective latency (ms) of every configuration over the episodes (Fig. 4-5)."""
    slo = _objective(objective, slo_ms)
    return _rrl.surface(space, (model or PerfModel()).to_dict(), list(episodes), objective, slo)


def oracle(
    space: ConfigSpace,
    episodes: Any,
    *,
    model: PerfModel | None = None,
    objective: str = "mean",
    slo_ms: float | None = None,
) -> dict[str, Any]:
    """The static best-in-hindsight configuration over the episodes, by exhaustive search."""
    slo = _objective(objective, slo_ms)
    return dict(
        _rrl.oracle(space, (model or PerfModel()).to_dict(), list(episodes), objective, slo)
    )
