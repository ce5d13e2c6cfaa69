"""The simulation harness of the RAMSIS evaluation (paper sec. 7, artifact ``run_sim.py``).

One call runs one method on one configuration and returns a :class:`RamsisRun` (the full
:class:`~servelab.Result` plus the paper's two metrics)::

    from servelab import ramsis

    run = ramsis.simulate("image", "ramsis", workers=60, load=2000, data="shared/data/ramsis")
    run.summary["accuracy_per_satisfied_query"], run.summary["violation_rate"]
    trace = ramsis.simulate("image", "jellyfish", workers=70, trace=True, data=...)

The setup follows the artifact (NOTES.md of the data):

- Tasks: ``image`` (the 9 Pareto-front torchvision models, SLOs 150/300/500 ms) and ``text``
  (5 BERT models, SLOs 100/200/300 ms). Latency is one number per (model, batch): the p95 of the
  profile (``derived/mdp_latency_table.csv``), used both for decisions and as the simulated,
  fixed service time.
- Constant load: Poisson arrivals at ``load`` queries/s for 30 s; every method is told the load
  (the paper's "perfect load monitor": one policy, one model-switching entry, one Jellyfish rule).
- Trace: the Twitter trace (``trace=True`` reads ``twitter_trace/`` of ``data``) for 300 s; every
  method estimates the load over the last 0.5 s and uses its choice for the smallest grid load at
  or above the estimate, the grid being 200..4000 queries/s in steps of 200.
- RAMSIS dispatches round-robin into per-worker EDF queues; Jellyfish+ and ModelSwitching serve an
  in-order central queue. No method drops queries.

Metrics (``RamsisRun.summary``), as the artifact computes them over the queries served by the end
of the run: ``accuracy_per_satisfied_query`` (mean profiled accuracy, in %, of the queries that met
their deadline) and ``violation_rate`` (late served queries / served queries); plus
``violation_rate_all`` (queries that did not finish by their deadline, served or not, over all).
"""

from __future__ import annotations

import csv
import functools
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import _core
from ..profiles import Profile
from ..results import COMPLETED, Result
from .trace import TRACE_DURATION_S, LoadTrace, read_load_trace

HARDWARE = "cloud_cpu"
#: The statistic RAMSIS, its baselines and the artifact's simulator use for latency.
PERCENTILE = 95
#: The artifact's policy grid for the trace: 200..4000 queries/s in steps of 200.
POLICY_LOADS: tuple[float, ...] = tuple(200.0 * i for i in range(1, 21))
#: The constant loads of the paper's Fig. 6: 400..4000 queries/s in steps of 400.
CONSTANT_LOADS: tuple[float, ...] = tuple(400.0 * i for i in range(1, 11))
CONSTANT_DURATION_S = 30.0
METHODS = ("ramsis", "jellyfish", "model_switching")
DATA_ENV = "SERVELAB_RAMSIS_DATA"


@dataclass(frozen=True)
class Task:
    """One inference task of the evaluation."""

    name: str
    folder: str  # the profile folder of the artifact
    models: tuple[str, ...]  # fastest first (the artifact's order)
    slos_ms: tuple[float, ...]  # the paper's three SLOs


TASKS: dict[str, Task] = {
    "image": Task(
        "image",
        "image_cloud_cpu",
        (
            "shufflenet_v2_x0_5",
            "mobilenet_v3_large",
            "efficientnet_b0",
            "efficientnet_b2",
            "efficientnet_b3",
            "efficientnet_b4",
            "efficientnet_v2_s",
            "efficientnet_v2_m",
            "efficientnet_v2_l",
        ),
        (150.0, 300.0, 500.0),
    ),
    "text": Task(
        "text",
        "text_cloud_cpu",
        ("bert_tiny", "bert_mini", "bert_small", "bert_medium", "bert_base"),
        (100.0, 200.0, 300.0),
    ),
}


def get_task(task: str | Task) -> Task:
    if isinstance(task, Task):
        return task
    if task not in TASKS:
        raise KeyError(f"task={task!r} is not one of {', '.join(TASKS)}")
    return TASKS[task]


def data_dir(data: str | os.PathLike[str] | None = None) -> Path:
    """The RAMSIS data folder (``derived/``, ``twitter_trace/``): ``data``, else $SERVELAB_RAMSIS_DATA."""
    if data is None:
        data = os.environ.get(DATA_ENV)
        if not data:
            raise ValueError(
                f"data=None: give the RAMSIS data folder (with derived/ and twitter_trace/) or set "
                f"${DATA_ENV}"
            )
    path = Path(data)
    if not (path / "derived").is_dir():
        raise FileNotFoundError(f"data={str(path)!r} has no derived/ folder (the RAMSIS data set)")
    return path


@functools.cache
def _task_profile(task: Task, data: Path, percentile: int) -> Profile:
    latency: dict[str, dict[int, float]] = {m: {} for m in task.models}
    table = data / "derived" / "mdp_latency_table.csv"
    with table.open(newline="") as f:
        for line, row in enumerate(csv.DictReader(f), start=2):
            if row["task"] != task.folder or row["model"] not in latency:
                continue
            if int(row["percentile"]) != percentile:
                continue
            try:
                latency[row["model"]][int(row["batch_size"])] = float(row["latency_us"]) / 1e6
            except ValueError:
                raise ValueError(f"{table}:{line}: bad batch_size or latency_us in {row}") from None
    accuracy: dict[str, float] = {}
    with (data / "derived" / "accuracy.csv").open(newline="") as f:
        for row in csv.DictReader(f):
            accuracy[row["model"]] = float(row["top1_accuracy_pct"]) / 100.0
    profile = Profile(f"RAMSIS artifact, {task.folder}, p{percentile} latency (derived table)")
    profile.add_hardware(HARDWARE)
    profile.set_price(HARDWARE, 0.0)  # cost is not what the RAMSIS experiments compare
    for model in task.models:
        if not latency[model]:
            raise ValueError(f"{table}: no p{percentile} latency for {task.folder}/{model}")
        if model not in accuracy:
            raise KeyError(f"derived/accuracy.csv has no accuracy for {model}")
        for batch, seconds in sorted(latency[model].items()):
            profile.set_latency(HARDWARE, model, batch, samples_s=[seconds])
        profile.set_accuracy(model, accuracy[model])
    return profile


def task_profile(
    task: str | Task = "image",
    data: str | os.PathLike[str] | None = None,
    *,
    percentile: int = PERCENTILE,
) -> Profile:
    """The task's models on one ``cloud_cpu`` worker type: the p95 latency (one value per batch
    1..32, from ``derived/mdp_latency_table.csv``) and the top-1 accuracy as a fraction."""
    if percentile not in (90, 95):
        raise ValueError(f"percentile={percentile!r}: the derived table has 90 and 95")
    return _task_profile(get_task(task), data_dir(data).resolve(), percentile)


def twitter_trace(data: str | os.PathLike[str] | None = None) -> LoadTrace:
    """The Twitter load trace of the data folder (``twitter_trace/twitter_04_25_norm.txt``)."""
    return read_load_trace(data_dir(data) / "twitter_trace" / "twitter_04_25_norm.txt")


@dataclass
class RamsisRun:
    """One simulated run: the configuration, the full Result and the paper's metrics."""

    method: str
    task: str
    workers: int
    slo_ms: float
    load_qps: float | None  # None for a trace
    trace: str | None
    result: Result
    summary: dict[str, Any] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        """A flat dict for tables: configuration + summary."""
        return {
            "method": self.method,
            "task": self.task,
            "workers": self.workers,
            "slo_ms": self.slo_ms,
            "load_qps": self.load_qps,
            "trace": self.trace,
            **self.summary,
        }


def summarize(result: Result) -> dict[str, Any]:
    """The artifact's metrics over the served queries (see the module doc)."""
    c = result.columns
    served = c["status"] == COMPLETED
    met = served & (c["finish_ns"] <= c["deadline_ns"])
    n, n_served, n_met = len(served), int(served.sum()), int(met.sum())
    accuracy = c["accuracy"][met].astype(np.float64)
    batch = c["batch_queries"][served]
    return {
        "queries": n,
        "served": n_served,
        "accuracy_per_satisfied_query": float(accuracy.mean() * 100) if n_met else None,
        "violation_rate": (n_served - n_met) / n_served if n_served else None,
        "violation_rate_all": (n - n_met) / n if n else None,
        "mean_batch": float(batch.mean()) if n_served else None,
    }


def _trace(trace: Any, data: Any) -> LoadTrace:
    if trace is True or trace == "twitter":
        return twitter_trace(data)
    if isinstance(trace, LoadTrace):
        return trace
    if isinstance(trace, str | os.PathLike):
        return read_load_trace(trace)
    raise ValueError(f"trace={trace!r} must be True/'twitter', a LoadTrace or a trace file path")


@functools.cache
def _policies_cached(
    task: Task, data: Path, slo_ms: float, workers: int, loads: tuple[float, ...]
) -> Any:
    from . import policy_set  # the MDP side of the package

    return policy_set(
        task_profile(task, data), HARDWARE, list(task.models), slo_ms=slo_ms, workers=workers,
        loads=list(loads),
    )  # fmt: skip


def ramsis_policies(
    task: str | Task,
    *,
    slo_ms: float,
    workers: int,
    loads: Sequence[float],
    data: str | os.PathLike[str] | None = None,
) -> Any:
    """RAMSIS's policy set for a task (FLD D=100, maximal batching, Poisson arrivals, round-robin
    over ``workers``), one policy per load; cached per configuration within the process."""
    return _policies_cached(
        get_task(task), data_dir(data).resolve(), float(slo_ms), int(workers),
        tuple(float(x) for x in loads),
    )  # fmt: skip


@functools.cache
def _ms_table_cached(
    task: Task,
    data: Path,
    slo_ms: float,
    workers: int,
    loads: tuple[float, ...],
    duration_s: float,
    seed: int,
    threads: int,
) -> dict[str, Any]:
    from .baselines import model_switching_table

    return model_switching_table(
        task_profile(task, data), list(task.models), workers=workers, slo_ms=slo_ms,
        loads=list(loads), duration_s=duration_s, seed=seed, threads=threads,
    )  # fmt: skip


def ms_table(
    task: str | Task,
    *,
    slo_ms: float,
    workers: int,
    loads: Sequence[float],
    duration_s: float = TRACE_DURATION_S,
    seed: int = 0,
    threads: int = 1,
    data: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """ModelSwitching's choice table for a task (see ``baselines.model_switching_table``), cached."""
    return _ms_table_cached(
        get_task(task), data_dir(data).resolve(), float(slo_ms), int(workers),
        tuple(float(x) for x in loads), float(duration_s), int(seed), int(threads),
    )  # fmt: skip


def make_method(
    method: str,
    task: str | Task,
    *,
    workers: int,
    slo_ms: float,
    load: float | None = None,
    loads: Sequence[float] = POLICY_LOADS,
    ms_duration_s: float = TRACE_DURATION_S,
    threads: int = 1,
    data: str | os.PathLike[str] | None = None,
) -> _core.Scheduler:
    """The scheduler of one method as the experiments configure it: with a known constant ``load``,
    or (load None) with the load monitor over the ``loads`` grid."""
    from .baselines import jellyfish, model_switching

    grid = [float(load)] if load is not None else [float(x) for x in loads]
    known = float(load) if load is not None else 0.0
    if method == "ramsis":
        policies = ramsis_policies(task, slo_ms=slo_ms, workers=workers, loads=grid, data=data)
        return _core.ramsis.ramsis_scheduler(policies, load_qps=known)
    if method == "jellyfish":
        return jellyfish(loads=grid, load_qps=known, slo_ms=slo_ms)
    if method == "model_switching":
        table = ms_table(
            task, slo_ms=slo_ms, workers=workers, loads=grid, duration_s=ms_duration_s,
            threads=threads, data=data,
        )  # fmt: skip
        return model_switching(table, load_qps=known, slo_ms=slo_ms)
    raise KeyError(f"method={method!r} is not one of {', '.join(METHODS)}")


def simulate(
    task: str | Task = "image",
    scheduler: Any = "ramsis",
    workers: int = 60,
    *,
    load: float | None = None,
    trace: Any = None,
    slo_ms: float | None = None,
    duration_s: float | None = None,
    seed: int = 0,
    data: str | os.PathLike[str] | None = None,
    loads: Sequence[float] = POLICY_LOADS,
    trace_mode: str = "artifact",
    ms_duration_s: float = TRACE_DURATION_S,
    threads: int = 1,
) -> RamsisRun:
    """Simulates one method on one configuration of the paper's evaluation.

    task: "image" or "text"; scheduler: "ramsis", "jellyfish", "model_switching" (configured as in
    the paper) or any servelab scheduler (an object or a spec string); workers: how many
    ``cloud_cpu`` workers hold every model of the task. Exactly one of ``load`` (queries/s,
    constant Poisson for ``duration_s`` = 30 s) and ``trace`` (True: the Twitter trace of ``data``,
    ``duration_s`` = 300 s, played as ``trace_mode``) is given. slo_ms: default the task's first
    (tightest) SLO. loads: the policy grid used with a trace. ms_duration_s: the length of each
    simulation that builds ModelSwitching's table. data: the RAMSIS data folder.
    """
    t = get_task(task)
    if (load is None) == (trace is None):
        raise ValueError("give exactly one of load= (queries/s) and trace=")
    if load is not None and not (isinstance(load, int | float) and load > 0):
        raise ValueError(f"load={load!r} must be a positive number of queries/s")
    if not (isinstance(workers, int) and workers >= 1):
        raise ValueError(f"workers={workers!r} must be an integer >= 1")
    slo = float(slo_ms) if slo_ms is not None else t.slos_ms[0]
    if not slo > 0:
        raise ValueError(f"slo_ms={slo_ms!r} must be positive")
    profile = task_profile(t, data)
    if load is not None:
        duration = CONSTANT_DURATION_S if duration_s is None else float(duration_s)
        arrivals: Any = _core.Poisson(float(load))
        trace_name = None
    else:
        duration = TRACE_DURATION_S if duration_s is None else float(duration_s)
        lt = _trace(trace, data)
        arrivals = lt.arrivals(trace_mode, duration)
        trace_name = f"{Path(lt.source).name or 'trace'} ({trace_mode})"
    if not duration > 0:
        raise ValueError(f"duration_s={duration_s!r} must be positive")
    if isinstance(scheduler, str) and scheduler in METHODS:
        method = scheduler
        sched = make_method(
            method, t, workers=workers, slo_ms=slo, load=load, loads=loads,
            ms_duration_s=ms_duration_s, threads=threads, data=data,
        )  # fmt: skip
    else:
        from ..schedulers import make_scheduler

        sched = make_scheduler(scheduler) if isinstance(scheduler, str) else scheduler
        method = sched.describe()
    workload = _core.Workload(
        arrivals, [_core.Application(t.name, slo_s=slo / 1e3)], horizon_s=duration
    )
    group = _core.WorkerGroup(HARDWARE, workers, list(t.models), {})
    stat = f"p{PERCENTILE}"
    start = time.perf_counter()
    raw = _core.simulate_run(
        profile, [group], workload, sched, seed=seed, decision_statistic=stat, service=stat,
        drain_s=slo / 1e3,
    )  # fmt: skip
    wall = time.perf_counter() - start
    result = Result(raw["columns"], raw["workers"], raw["meta"])
    summary = summarize(result)
    summary["sim_seconds"] = wall
    return RamsisRun(method, t.name, workers, slo, load, trace_name, result, summary)
