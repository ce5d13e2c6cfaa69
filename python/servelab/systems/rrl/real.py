"""A short real tuning run: RRL's learner picks the intra-op thread count of a real CPU executor,
measuring each choice on the executor itself (the profiler's timed batches), and the configuration
it settles on is then timed against the executor's default.

Only the executors' ``intra_op_threads`` knob is tuned: request parallelism needs the serving loop
with several workers, and no executor exposes inter-op threads as a run-time knob yet. Each episode
times ``repeats`` batches of ``batch`` queries; the final comparison alternates the two
configurations so that machine-wide drift (other processes) hits both alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import executors
from .model import PerfModel
from .spaces import machine_cores
from .tuning import ConfigSpace, LearnerConfig, QLearner

KNOB = "intra_op_threads"
MAX_THREADS = 1024


@dataclass
class ExecutorTuning:
    executor: str
    threads: list[int]  # the candidate thread counts
    chosen: list[int] = field(default_factory=list)  # per episode
    latency_ms: list[float] = field(default_factory=list)  # per episode, median of its batches
    best_threads: int = 0
    best_ms: float = 0.0  # the settled configuration, final comparison (median)
    default_ms: float = 0.0  # the executor's default, final comparison (median)

    @property
    def speedup(self) -> float:
        """Default latency / tuned latency (> 1: the tuned configuration is faster)."""
        return self.default_ms / self.best_ms


def tune_executor(
    executor: Any,
    *,
    threads: list[int] | None = None,
    episodes: int = 30,
    batch: int = 32,
    repeats: int = 5,
    final_repeats: int = 40,
    learner: LearnerConfig | None = None,
    seed: int = 0,
) -> ExecutorTuning:
    """Tunes the executor's intra-op threads over ``threads`` (default 1..2x this machine's cores)
    with region-based Q-learning on measured latencies; returns the run and the final comparison."""
    threads = list(range(1, 2 * machine_cores() + 1) if threads is None else threads)
    if not threads:
        raise ValueError("threads=[] is empty: give the thread counts to try")
    if any(isinstance(t, bool) or not isinstance(t, int) for t in threads):
        raise ValueError(f"threads={threads!r} must be integers")
    if min(threads) < 1 or max(threads) > MAX_THREADS:
        # Checked here: an executor given tens of thousands of threads may not survive it.
        raise ValueError(f"threads={threads!r} must be thread counts in 1..{MAX_THREADS}")
    threads = sorted(set(threads))
    builder = executors.make_executor(executor)
    session = builder.open(seed=seed)
    if KNOB not in session.knobs():
        raise ValueError(
            f"executor {builder.describe()} has no {KNOB!r} knob "
            f"(its knobs: {', '.join(session.knobs()) or 'none'})"
        )
    for name, value in (("episodes", episodes), ("batch", batch), ("repeats", repeats)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}={value!r} must be a positive integer")
    space = ConfigSpace("cpu", [("workers", [1]), ("inter_op", [1]), ("intra_op", threads)])
    cfg = (learner or LearnerConfig()).to_dict()
    q = QLearner(space, PerfModel(cores=machine_cores()).to_dict(), learner=cfg, seed=seed)
    run = ExecutorTuning(builder.describe(), threads)

    def measure(config: dict[str, int], count: int) -> np.ndarray:
        timed = session.time_batches([1] * batch, repeats=count, warmup=1, config=config)
        return np.asarray(timed["wall_ns"], dtype=float) / 1e6

    for _ in range(episodes):
        c = q.choose(0)
        t = space.values(c)[2]
        ms = float(np.median(measure({KNOB: t}, repeats)))
        q.learn(0, c, 0.0, ms, 0)
        run.chosen.append(t)
        run.latency_ms.append(ms)
    run.best_threads = space.values(q.greedy(0))[2]
    best, default = [], []
    for _ in range(final_repeats):  # alternate, one batch each
        best.append(measure({KNOB: run.best_threads}, 1)[0])
        default.append(measure({}, 1)[0])
    run.best_ms, run.default_ms = float(np.median(best)), float(np.median(default))
    return run
