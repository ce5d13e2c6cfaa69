"""RRL as a serving policy: the learner tunes the workers' parallelism through the core's
``set_config`` action while the policy serves requests, in ``servelab.simulate`` and unchanged in
``servelab.serve``.

:class:`RrlTuner` serves requests first come, first served, one per worker, on the first
``workers`` workers of each hardware type (request parallelism per machine), and sets
``inter_op_threads`` and ``intra_op_threads`` on every worker. After every ``episode_requests``
completed requests it hands the episode's latency (mean or p95) and arrival rate to the learner
(region-based Q-learning, or point-based with ``method="qlearning"``) and applies the
configuration it chooses next.

In the simulator the knobs change service times through the ``rrl_cpu`` config model
(:func:`config_model_spec`: RRL's parallelism performance model, ``docs/rrl.md``); in the real
loop the executors read the knobs they support (the recsys executors: ``intra_op_threads``).
:func:`tune_in_simulator` runs the whole loop on a one-model profile whose service time is the
model's ``base_ms``, so the simulated latencies are the model's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import _core
from .episode_learner import EpisodeLearner, learner_params
from .model import PerfModel
from .spaces import cpu_space
from .tuning import ConfigSpace, LearnerConfig

INTER_KNOB = "inter_op_threads"
INTRA_KNOB = "intra_op_threads"
HARDWARE = "cpu"
MODEL = "model"


def config_model_spec(model: PerfModel, *, request_parallelism: bool = True) -> str:
    """The ``rrl_cpu`` config model (``servelab.list_config_models()``) of a PerfModel: service
    times scale from one thread of each kind, alone, to the worker's knobs and busy workers."""
    m = model.to_dict()
    fields = ("cores", "base_ms", "intra_fraction", "inter_fraction", "op_width", "interference")
    args = ", ".join(f"{k}={m[k]!r}" for k in (*fields, "sync_ms"))
    return f"rrl_cpu({args}, request_parallelism={'true' if request_parallelism else 'false'})"


def _knob_values(space: ConfigSpace) -> dict[str, list[int]]:
    knobs = dict(space.knobs)
    missing = [k for k in ("workers", "inter_op", "intra_op") if k not in knobs]
    if space.kind != "cpu" or missing or len(knobs) != 3:
        raise ValueError(
            f"space has knobs {sorted(knobs)} of kind {space.kind!r}; RrlTuner needs a cpu space "
            "with exactly workers, inter_op and intra_op"
        )
    return knobs


class RrlTuner(EpisodeLearner):
    """FCFS over the first ``workers`` workers of each hardware type, with the parallelism chosen
    by RRL per episode. A hardware type is one machine, as for the ``rrl_cpu`` config model, which
    counts the busy workers of a hardware type as the requests sharing its cores."""

    def __init__(
        self,
        space: ConfigSpace,
        *,
        model: PerfModel | None = None,
        method: str = "rrl",
        objective: str = "mean",
        episode_requests: int = 50,
        learner: LearnerConfig | None = None,
        seed: int = 0,
    ) -> None:
        _knob_values(space)
        super().__init__(
            space, model=model, method=method, objective=objective,
            episode_requests=episode_requests, learner=learner, seed=seed,
        )  # fmt: skip
        self._workers = 0  # request parallelism in force (set by _apply)
        self._running: dict[int, int] = {}  # worker -> query id

    def describe(self) -> str:
        return (
            f"rrl_tuner(method='{self.method}', objective='{self.objective}', "
            f"episode_requests={self.episode_requests})"
        )

    # --- configuration ---
    def _apply(self, view: Any, actions: Any) -> None:
        workers, inter, intra = self.space.values(self._config)
        self._workers = int(workers)
        for w in range(view.num_workers):
            if view.status(w) == "stopped":
                continue
            if view.config(w, INTER_KNOB, 0) != inter:
                actions.set_config(w, INTER_KNOB, int(inter))
            if view.config(w, INTRA_KNOB, 0) != intra:
                actions.set_config(w, INTRA_KNOB, int(intra))

    def on_start(self, view: Any, actions: Any) -> None:
        self._check_machine(view, "workers", "(request parallelism on one machine)")
        self._config = self._q.choose(0)
        self._apply(view, actions)

    # --- serving: FCFS, one request per worker ---
    def on_arrival(self, query: Any, view: Any, actions: Any) -> None:
        self._arrivals += 1
        if not view.central_queue():
            self._serve(query, view, actions)

    def _serve(self, query: Any, view: Any, actions: Any) -> bool:
        for worker in view.idle_workers():  # ascending ids
            if self._position(view, worker) >= self._workers:
                continue  # beyond this machine's request parallelism
            for model in view.models(worker):
                if query.size <= view.max_batch(worker, model):
                    actions.dispatch(worker, model, query.id)
                    self._running[worker] = query.id
                    return True
        return False

    def _drain(self, view: Any, actions: Any) -> None:
        for qid in list(view.central_queue()):
            if not self._serve(view.query(qid), view, actions):
                return

    def on_worker_ready(self, worker: int, view: Any, actions: Any) -> None:
        self._drain(view, actions)

    def on_batch_done(self, done: Any, view: Any, actions: Any) -> None:
        qid = self._running.pop(done.worker, None)
        if qid is not None:
            self._latencies.append((done.finish_s - view.query(qid).arrival_s) * 1e3)
        self._end_episode_if_due(view, actions)
        self._drain(view, actions)


REGISTERED_NAME = "rrl_tuner"


def _from_params(
    cores: int,
    method: str,
    objective: str,
    episode_requests: int,
    radius: float,
    seed: int,
    estimator: str = "eigen",
) -> RrlTuner:
    learner = LearnerConfig(radius=radius, estimator=estimator)
    return RrlTuner(cpu_space(cores), model=PerfModel(cores=cores), method=method,
                    objective=objective, episode_requests=episode_requests, learner=learner,
                    seed=seed)  # fmt: skip


def register_tuner() -> str:
    """Registers :class:`RrlTuner` as the scheduler ``rrl_tuner`` (once per process), so that a
    scenario names it like any policy: ``"rrl_tuner(cores=2, episode_requests=50)"`` tunes the
    CPU space of ``cores`` cores. Returns the name."""
    from ...schedulers import Param, register_scheduler  # on use: keeps servelab.rrl light

    if REGISTERED_NAME in {e["name"] for e in _core.list_schedulers()}:
        return REGISTERED_NAME
    register_scheduler(
        REGISTERED_NAME,
        _from_params,
        doc="RRL tuning the workers' parallelism knobs with set_config while serving FCFS",
        params=[
            Param("cores", int, 2, "the CPU space's cores (workers, inter/intra threads)", 1, 64),
            *learner_params(),
        ],
    )  # fmt: skip
    return REGISTERED_NAME


@dataclass
class SimulatedTuning:
    result: Any  # servelab.Result of the whole run
    history: list[dict[str, Any]]  # per episode: config values, metric_ms, mean_ms, rate_qps
    greedy: list[int]  # the learned configuration (workers, inter_op, intra_op)
    config_model: str

    def episode_frame(self) -> Any:
        import pandas as pd  # only when asked: importing servelab.rrl stays light

        return pd.DataFrame(self.history)


def _one_model_profile(model: PerfModel) -> Any:
    """One hardware and one model whose profiled service time is ``model.base_ms``: the rrl_cpu
    config model then makes every simulated service time the performance model's."""
    from ... import profiles  # here: servelab.rrl loads without the run machinery

    profile = profiles.Profile("rrl performance model")
    profile.add_hardware(HARDWARE, 0.0)
    profile.add_model(MODEL, 1.0)
    profile.set_latency(HARDWARE, MODEL, 1, samples_s=[model.base_ms / 1e3])
    return profile


def episode_in_simulator(
    space: ConfigSpace, config: int, arrivals_ms: Any, *, model: PerfModel | None = None
) -> dict[str, Any]:
    """One measurement episode of :func:`servelab.rrl.episode` served by ``servelab.simulate``
    instead of the episode model: the requests arriving at ``arrivals_ms`` (from an idle server),
    :class:`RrlTuner` held at ``config`` on ``workers`` workers of one machine, service times
    from the ``rrl_cpu`` config model, noise-free. Returns mean_ms, p95_ms (nearest rank, as the
    episode model) and the Result; the two agree (tests/python/test_rrl_episode_agreement.py)."""
    from ... import run  # here: servelab.rrl loads without the run machinery

    model = model or PerfModel()
    knobs = _knob_values(space)
    if isinstance(config, bool) or not isinstance(config, int | np.integer):
        raise ValueError(f"config={config!r} must be a configuration index")
    if not 0 <= config < space.size:
        raise ValueError(f"config={config} is not in 0..{space.size - 1}")
    times = np.asarray(arrivals_ms, dtype=float)
    if times.ndim != 1 or times.size < 1 or not np.all(np.isfinite(times)):
        raise ValueError("arrivals_ms must be a non-empty 1-d array of finite times (ms)")
    if np.any(times < 0) or np.any(np.diff(times) < 0):
        raise ValueError("arrivals_ms must be non-negative and non-decreasing")
    workers, inter, intra = (int(v) for v in space.values(config))
    fixed = ConfigSpace("cpu", [("workers", [workers]), ("inter_op", [inter]),
                                ("intra_op", [intra])])  # fmt: skip
    tuner = RrlTuner(fixed, model=model, episode_requests=int(times.size))
    scenario = {
        "profile": _one_model_profile(model),
        "workers": [{"hardware": HARDWARE, "count": max(knobs["workers"]), "models": [MODEL]}],
        "workload": {"arrivals": {"name": "replay", "timestamps_s": (times / 1e3).tolist()},
                     "count": int(times.size),
                     "apps": [{"name": MODEL, "slo_ms": 3.6e6}]},
        "scheduler": tuner, "seed": 0, "service": "mean",
    }  # fmt: skip
    result = run.simulate(scenario, config_model=config_model_spec(model))
    c = result.columns
    latency = np.sort((c["finish_ns"] - c["arrival_ns"]) / 1e6)
    rank = int(np.ceil(0.95 * latency.size)) - 1
    return {"mean_ms": float(latency.mean()), "p95_ms": float(latency[rank]), "result": result}


def tune_in_simulator(
    space: ConfigSpace | None = None,
    *,
    rate: float,
    requests: int = 5000,
    model: PerfModel | None = None,
    method: str = "rrl",
    objective: str = "mean",
    episode_requests: int = 50,
    learner: LearnerConfig | None = None,
    seed: int = 0,
) -> SimulatedTuning:
    """Runs :class:`RrlTuner` in ``servelab.simulate`` on Poisson arrivals at ``rate`` requests/s:
    one model whose profiled service time is ``model.base_ms`` (one thread, alone), scaled by the
    ``rrl_cpu`` config model as the tuner sets the knobs. ``space`` defaults to the CPU space of
    ``model.cores`` cores."""
    from ... import run  # here: servelab.rrl loads without the run machinery

    model = model or PerfModel()
    space = space or cpu_space(int(model.cores))
    knobs = _knob_values(space)
    if not (isinstance(rate, int | float) and not isinstance(rate, bool) and np.isfinite(rate)):
        raise ValueError(f"rate={rate!r} must be a positive number of requests per second")
    if rate <= 0:
        raise ValueError(f"rate={rate!r} must be a positive number of requests per second")
    if isinstance(requests, bool) or not isinstance(requests, int) or requests < 1:
        raise ValueError(f"requests={requests!r} must be a positive integer")
    profile = _one_model_profile(model)
    tuner = RrlTuner(space, model=model, method=method, objective=objective,
                     episode_requests=episode_requests, learner=learner, seed=seed)  # fmt: skip
    config_model = _core.make_config_model(config_model_spec(model))
    scenario = {
        "profile": profile,
        "workers": [{"hardware": HARDWARE, "count": int(max(knobs["workers"])), "models": [MODEL]}],
        "workload": {"arrivals": f"poisson(rate={float(rate)!r})", "count": requests,
                     "apps": [{"name": MODEL, "slo_ms": 3.6e6}]},
        "scheduler": tuner, "seed": seed, "service": "mean",
    }  # fmt: skip
    result = run.simulate(scenario, config_model=config_model)
    return SimulatedTuning(result, tuner.history, tuner.greedy(), config_model.describe())
