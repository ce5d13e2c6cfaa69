"""Short real tuning runs on this machine.

:func:`tune_executor`: RRL's learner picks the intra-op thread count of a real CPU executor,
measuring each choice on the executor itself (the profiler's timed batches), and the configuration
it settles on is then timed against the executor's default. Each episode times ``repeats`` batches
of ``batch`` queries; the final comparison alternates the two configurations so that machine-wide
drift (other processes) hits both alike.

:func:`tune_serving`: the whole configuration (request parallelism, inter-op and intra-op threads)
tuned in the real serving loop by :class:`~servelab.rrl.RrlTuner`, the policy the simulator runs
too, on measured request latencies; then the learned configuration and the default serve the same
arrivals in alternating rounds. ``space="gpu"``: the batching configuration (batch size, batch
timeout, batch threads) instead, by :class:`~servelab.rrl.RrlBatchTuner`, which forms the batches
itself and sets the executor's ``max_batch_items`` and ``intra_op_threads`` with set_config.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import executors
from .batch_policy import BATCH_KNOB, RrlBatchTuner, gpu_knob_values
from .model import PerfModel
from .spaces import gpu_space, machine_cores
from .tuning import ConfigSpace, LearnerConfig, QLearner

KNOB = "intra_op_threads"
INTER_KNOB = "inter_op_threads"
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


def _check_accepted(
    instance: Any, describe: str, configs: list[dict[str, int]], batch: int
) -> None:
    """Times one batch under each configuration before tuning, so that a configuration the
    executor rejects is a ValueError naming the knob, the value and the executor's reason, not
    a failed episode (or, while serving, dropped requests) halfway through the run."""
    for config in configs:
        try:
            instance.time_batches([1] * batch, repeats=1, warmup=0, config=config)
        except Exception as error:  # the executor's own check, whatever type it raises
            knobs = ", ".join(f"{k}={v}" for k, v in config.items())
            raise ValueError(f"executor {describe} rejects {knobs}: {error}") from error


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
    instance = builder.open(seed=seed)
    if KNOB not in instance.knobs():
        raise ValueError(
            f"executor {builder.describe()} has no {KNOB!r} knob "
            f"(its knobs: {', '.join(instance.knobs()) or 'none'})"
        )
    for name, value in (("episodes", episodes), ("batch", batch), ("repeats", repeats)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}={value!r} must be a positive integer")
    _check_accepted(instance, builder.describe(), [{KNOB: t} for t in threads], batch)
    space = ConfigSpace("cpu", [("workers", [1]), ("inter_op", [1]), ("intra_op", threads)])
    cfg = (learner or LearnerConfig()).to_dict()
    q = QLearner(space, PerfModel(cores=machine_cores()).to_dict(), learner=cfg, seed=seed)
    run = ExecutorTuning(builder.describe(), threads)

    def measure(config: dict[str, int], count: int) -> np.ndarray:
        timed = instance.time_batches([1] * batch, repeats=count, warmup=1, config=config)
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


@dataclass
class ServingTuning:
    """A real serving run tuned by RRL, then the learned configuration against the default."""

    executor: str
    space: list[tuple[str, list[int]]]  # the knobs tuned (cpu: workers, inter_op, intra_op)
    rate_qps: float
    batch: int  # items per request
    history: list[dict[str, Any]]  # per learning episode: values, metric_ms, rate_qps
    learned: list[int]  # the knobs' values of lowest Q at the end, in the space's order
    tuned_ms: list[float] = field(default_factory=list)  # per comparison round, mean latency
    default_ms: list[float] = field(default_factory=list)  # the same rounds, default config
    load_average: tuple[float, float] = (0.0, 0.0)  # 1-minute, at the start and at the end
    notes: list[str] = field(default_factory=list)  # knobs the executor lacks, so never set

    @property
    def tuned_median_ms(self) -> float:
        return float(np.median(self.tuned_ms))

    @property
    def default_median_ms(self) -> float:
        return float(np.median(self.default_ms))

    @property
    def speedup(self) -> float:
        """Default mean latency / tuned mean latency, medians over the rounds (> 1: faster)."""
        return self.default_median_ms / self.tuned_median_ms


def _serving_scenario(
    rate: float, batch: int, requests: int, workers: int, max_items: int = 0
) -> dict[str, Any]:
    from ... import profiles  # on use: servelab.rrl loads without the run machinery

    # The profile only says which batches fit a worker; the executor sets every service time.
    profile = profiles.Profile("rrl real serving")
    profile.add_hardware("cpu", 0.0)
    profile.add_model("model", 1.0)
    profile.set_latency("cpu", "model", max(batch, max_items), samples_s=[1e-3])
    return {
        "profile": profile,
        "workers": [{"hardware": "cpu", "count": workers, "models": ["model"]}],
        "workload": {"arrivals": f"poisson(rate={float(rate)!r})", "count": requests,
                     "apps": [{"name": "model", "slo_ms": 3.6e6,
                               "sizes": f"constant(value={batch})"}]},
        "drain_s": 30.0,
    }  # fmt: skip


def tune_serving(
    executor: Any = "recsys(model=rm2, backend=onednn)",
    *,
    space: str | ConfigSpace = "cpu",
    rate: float = 30.0,
    batch: int | None = None,
    cores: int | None = None,
    episodes: int = 40,
    episode_requests: int = 20,
    rounds: int = 6,
    round_requests: int = 150,
    method: str = "rrl",
    seed: int = 0,
) -> ServingTuning:
    """RRL tunes a real executor in ``servelab.serve``: Poisson requests of ``batch`` items
    (default 32; 1 for the GPU space) at ``rate`` per second on up to ``cores`` workers (default
    this machine's cores), a configuration per episode of ``episode_requests`` requests, learned
    from the measured latencies. Then ``rounds`` times, alternately, the learned configuration (the
    tuner held at it) and the default (``fcfs`` on every worker, one request per batch, the
    executor's own thread settings) each serve ``round_requests`` requests of the same arrivals;
    their mean latencies are kept.

    ``space="cpu"``: :class:`RrlTuner` chooses the request parallelism (workers serving), the
    inter-op and the intra-op threads (knobs the executor lacks stay at 1). ``space="gpu"`` (or a
    gpu :class:`ConfigSpace`; default ``gpu_space(max_batch=32, max_timeout_ms=20,
    max_threads=cores)``): :class:`RrlBatchTuner` chooses the batch size, batch timeout and batch
    threads, sets ``max_batch_items`` to the batch size and ``intra_op_threads`` to ``cores //
    batch_threads``; a knob the executor lacks is named in ``notes`` and never set."""
    from ... import run  # on use: servelab.rrl loads without the run machinery

    cores = machine_cores() if cores is None else cores
    kind = space if isinstance(space, str) else getattr(space, "kind", None)
    if kind not in ("cpu", "gpu") or (kind == "cpu" and not isinstance(space, str)):
        raise ValueError(f"space={space!r} must be 'cpu', 'gpu' or a gpu ConfigSpace")
    batch = (32 if kind == "cpu" else 1) if batch is None else batch
    checks = (("cores", cores), ("episodes", episodes), ("episode_requests", episode_requests),
              ("rounds", rounds), ("round_requests", round_requests), ("batch", batch))  # fmt: skip
    for name, value in checks:
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}={value!r} must be a positive integer")
    if cores > 64:
        raise ValueError(f"cores={cores} must be at most 64 (one thread knob value per core)")
    if not (isinstance(rate, int | float) and np.isfinite(rate) and rate > 0):
        raise ValueError(f"rate={rate!r} must be a positive number of requests per second")
    builder = executors.make_executor(executor)
    instance = builder.open(seed=seed)
    if kind == "gpu":
        if isinstance(space, str):
            space = gpu_space(max_batch=32, max_timeout_ms=20, max_threads=cores)
        tuner, fixed_tuner, workers, max_items, notes = _gpu_tuners(
            space, instance, builder.describe(), cores, batch, method, episode_requests,
            round_requests, seed,
        )  # fmt: skip
    else:
        tuner, fixed_tuner, workers, max_items, notes = _cpu_tuners(
            instance, builder.describe(), cores, batch, method, episode_requests, round_requests,
            seed,
        )  # fmt: skip
    load_before = os.getloadavg()[0]
    scenario = _serving_scenario(rate, batch, episodes * episode_requests, workers, max_items)
    run.serve(scenario, scheduler=tuner, executor=builder, seed=seed)
    learned = tuner.greedy()
    out = ServingTuning(builder.describe(), [(k, list(v)) for k, v in tuner.space.knobs],
                        float(rate), batch, tuner.history, learned, notes=notes)  # fmt: skip
    compare = _serving_scenario(rate, batch, round_requests, workers, max_items)
    for r in range(rounds):  # alternate, so that drift in the machine's load hits both alike
        for policy, into in ((fixed_tuner(learned), out.tuned_ms), ("fcfs", out.default_ms)):
            res = run.serve(compare, scheduler=policy, executor=builder, seed=seed + 1 + r)
            into.append(float(res.summary()["latency_ms"]["mean"]))
    out.load_average = (load_before, os.getloadavg()[0])
    return out


def _held(space: ConfigSpace, values: list[int]) -> ConfigSpace:
    """The one-configuration space of ``values``: a tuner on it never changes its choice."""
    return ConfigSpace(
        space.kind, [(k, [v]) for (k, _), v in zip(space.knobs, values, strict=True)]
    )


def _cpu_tuners(
    instance: Any, describe: str, cores: int, batch: int, method: str, episode_requests: int,
    round_requests: int, seed: int,
) -> tuple[Any, Any, int, int, list[str]]:  # fmt: skip
    """The learning RrlTuner over the CPU space, a maker of one held at a configuration, the
    workers, the largest batch and the notes (none: a missing knob stays at 1)."""
    from .sim_policy import RrlTuner  # the same policy in both worlds

    knobs = instance.knobs()
    if KNOB not in knobs:
        raise ValueError(
            f"executor {describe} has no {KNOB!r} knob (its knobs: {', '.join(knobs) or 'none'})"
        )
    threads = list(range(1, cores + 1))
    inter = threads if INTER_KNOB in knobs else [1]
    extremes = [{KNOB: cores}] + ([{INTER_KNOB: cores, KNOB: cores}] if len(inter) > 1 else [])
    _check_accepted(instance, describe, extremes, batch)
    space = ConfigSpace("cpu", [("workers", threads), ("inter_op", inter), ("intra_op", threads)])
    tuner = RrlTuner(space, model=PerfModel(cores=cores), method=method,
                     episode_requests=episode_requests, seed=seed)  # fmt: skip

    def held(values: list[int]) -> Any:  # never relearns within a round
        return RrlTuner(_held(space, values), episode_requests=round_requests + 1, seed=seed)

    return tuner, held, cores, batch, []


def _gpu_tuners(
    space: ConfigSpace, instance: Any, describe: str, cores: int, batch: int, method: str,
    episode_requests: int, round_requests: int, seed: int,
) -> tuple[Any, Any, int, int, list[str]]:  # fmt: skip
    """The learning RrlBatchTuner over ``space``, a maker of one held at a configuration, the
    workers (one per batch thread), the largest batch and the notes naming knobs not set."""
    values = gpu_knob_values(space)
    knobs, notes = instance.knobs(), []
    batch_knob = BATCH_KNOB if BATCH_KNOB in knobs else ""
    thread_knob = KNOB if KNOB in knobs else ""
    for knob, what in ((BATCH_KNOB, "batch size"), (KNOB, "threads per batch thread")):
        if knob not in knobs:
            has = ", ".join(knobs) or "none"
            notes.append(
                f"executor {describe} has no {knob!r} knob (its knobs: {has}): "
                f"the {what} is not set on it; the policy's batching still applies"
            )
    workers, max_items = max(values["batch_threads"]), max(values["batch_size"])
    if workers > cores:
        raise ValueError(f"batch_threads up to {workers} is more than cores={cores}")
    widest = {k: v for k, v in ((batch_knob, max_items), (thread_knob, cores)) if k}
    _check_accepted(instance, describe, [widest], max(batch, max_items))
    common = {"cores": cores, "batch_knob": batch_knob, "thread_knob": thread_knob, "seed": seed}
    tuner = RrlBatchTuner(space, model=PerfModel(cores=cores), method=method,
                          episode_requests=episode_requests, **common)  # fmt: skip

    def held(values: list[int]) -> Any:  # never relearns within a round
        return RrlBatchTuner(_held(space, values), episode_requests=round_requests + 1, **common)

    return tuner, held, workers, max_items, notes
