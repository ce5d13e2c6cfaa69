"""What RRL's serving policies share (``RrlTuner`` for the CPU space, ``RrlBatchTuner`` for the
GPU space): the learner, episodes of ``episode_requests`` completed queries whose latency (mean or
p95) and arrival rate it learns from, and each worker's position on its machine (a hardware type
is one machine, whose first workers the configuration puts to work).

A subclass serves queries, appends each completed query's latency in ms to ``_latencies``, counts
arrivals in ``_arrivals``, applies ``_config`` in ``_apply`` and calls ``_end_episode_if_due``
after each completed batch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import _core
from .model import PerfModel
from .tuning import ConfigSpace, LearnerConfig, QLearner


class EpisodeLearner(_core.Scheduler):
    """The learner and the episode bookkeeping of an RRL serving policy."""

    def __init__(
        self,
        space: ConfigSpace,
        *,
        model: PerfModel | None,
        method: str,
        objective: str,
        episode_requests: int,
        learner: LearnerConfig | None,
        seed: int,
    ) -> None:
        super().__init__()
        if method not in ("rrl", "qlearning"):
            raise ValueError(f"method={method!r} must be 'rrl' or 'qlearning'")
        if objective not in ("mean", "p95"):
            raise ValueError(f"objective={objective!r} must be 'mean' or 'p95'")
        if isinstance(episode_requests, bool) or not isinstance(episode_requests, int):
            raise ValueError(f"episode_requests={episode_requests!r} must be a positive integer")
        if episode_requests < 1:
            raise ValueError(f"episode_requests={episode_requests!r} must be a positive integer")
        self.space = space
        self.method, self.objective, self.episode_requests = method, objective, episode_requests
        cfg = (learner or LearnerConfig()).to_dict()
        self._q = QLearner(
            space, (model or PerfModel()).to_dict(), learner=cfg, region=method == "rrl", seed=seed
        )
        self._config = 0
        self._rank: list[int] = []  # worker -> its position among the workers of its hardware
        self._latencies: list[float] = []  # ms, this episode
        self._episode_start_s = 0.0
        self._arrivals = 0
        self.history: list[dict[str, Any]] = []  # one entry per finished episode

    def _apply(self, view: Any, actions: Any) -> None:
        raise NotImplementedError

    def _check_machine(self, view: Any, knob: str, what: str) -> None:
        """ValueError unless some hardware type has as many workers as ``knob`` may ask for."""
        most = max(dict(self.space.knobs)[knob])
        counts = np.bincount([view.hardware(w) for w in range(view.num_workers)])
        if counts.max(initial=0) < most:
            raise ValueError(
                f"the cluster has at most {counts.max(initial=0)} workers of one hardware type; "
                f"the space asks for up to {most} {what}"
            )

    def _position(self, view: Any, worker: int) -> int:
        """The worker's position among its hardware's workers (0 for the first)."""
        while len(self._rank) <= worker:  # workers added while serving join at the end
            w = len(self._rank)
            hw = view.hardware(w)
            self._rank.append(sum(1 for v in range(w) if view.hardware(v) == hw))
        return self._rank[worker]

    def _end_episode_if_due(self, view: Any, actions: Any) -> None:
        if len(self._latencies) >= self.episode_requests:
            self._learn(view, actions)

    def _episode_extras(self) -> dict[str, Any]:
        """More of this episode's figures for its ``history`` entry; reset them here."""
        return {}

    def _learn(self, view: Any, actions: Any) -> None:
        lat = np.asarray(self._latencies)
        metric = float(lat.mean() if self.objective == "mean" else np.percentile(lat, 95))
        span = view.now - self._episode_start_s
        rate = self._arrivals / span if span > 0 else 0.0
        self._q.learn(0, self._config, rate, metric, 0)
        values = list(self.space.values(self._config))
        self.history.append({
            "end_s": view.now, "config": self._config, "values": values,
            "metric_ms": metric, "mean_ms": float(lat.mean()), "rate_qps": rate,
            **self._episode_extras(),
        })  # fmt: skip
        self._latencies, self._arrivals, self._episode_start_s = [], 0, view.now
        self._config = self._q.choose(0)
        self._apply(view, actions)

    def greedy(self) -> list[int]:
        """The configuration of lowest Q: the knobs' values in the space's order."""
        return list(self.space.values(self._q.greedy(0)))


def learner_params() -> list[Any]:
    """The registered parameters every RRL tuner policy takes for its learner (``rrl_tuner``,
    ``rrl_batch_tuner``), after its own space's."""
    from ...schedulers import Param  # on use: keeps servelab.rrl light

    return [
        Param("method", str, "rrl", "rrl (regions) or qlearning (points)",
              choices=("rrl", "qlearning")),
        Param("objective", str, "mean", "episode latency: mean or p95", choices=("mean", "p95")),
        Param("episode_requests", int, 50, "completed requests per learning step", 1, 1e6),
        Param("radius", float, 1.0, "region radius, grid steps", 0, 64, min_exclusive=True),
        Param("seed", int, 0, "the learner's seed", 0, 2**62),
        Param("estimator", str, "eigen", "where the latency estimator runs",
              choices=("eigen", "libtorch")),
    ]  # fmt: skip
