"""The experiments of the RAMSIS evaluation (paper sec. 7, artifact ``run_sim.py``).

One call runs one method on one configuration and returns a :class:`RamsisRun` (the full
:class:`~servelab.Result` and its summary)::

    import servelab
    from servelab import ramsis

    run = ramsis.run_experiment("image", "ramsis", 60, load=2000, data="../shared/data/ramsis")
    run.summary["accuracy_per_satisfied_query"], run.summary["violation_rate"]
    trace = ramsis.run_experiment("image", "jellyfish", 70, trace=True, data=...)
    servelab.simulate(run.scenario)                          # the same records again
    servelab.serve(run.scenario, workload={...})            # the same setup in the serving loop

Every run is a servelab Scenario (:func:`experiment_scenario`) run by ``servelab.simulate``, so its
``meta["scenario"]`` replays it in either world: the task's profile and RAMSIS's policy set are
files named by their content (``cache.py``; ``cache_dir`` chooses the folder), the arrivals and
schedulers registered specs. The setup follows the artifact (NOTES.md of the data):

- Tasks: ``image`` (the 9 Pareto-front torchvision models, SLOs 150/300/500 ms) and ``text``
  (5 BERT models, SLOs 100/200/300 ms). Latency is one number per (model, batch): the p95 of the
  profile (``derived/mdp_latency_table.csv``), used both for decisions and as the simulated,
  fixed service time.
- Constant load: Poisson arrivals at ``load`` queries/s for 30 s; every method is told the load
  (the paper's "perfect load monitor": one policy, one model-switching entry, one Jellyfish rule).
- Trace: the Twitter trace (``trace=True`` reads ``twitter_trace/`` of ``data``) for 300 s; every
  method estimates the load over the last 0.5 s and uses its choice for the smallest grid load at
  or above the estimate, the grid being 200..4000 queries/s in steps of 200.
- RAMSIS dispatches round-robin (``balancer="shortest_queue"``: to the shortest queue, its policies
  generated for it) into per-worker EDF queues; Jellyfish+ and ModelSwitching serve an
  in-order central queue. No method drops queries; a run ends one SLO after the last arrival.

Metrics (:func:`summarize`): ``Result.summary()`` and two RAMSIS keys, every rate a fraction in
[0, 1] (printers show %):

- ``accuracy_per_satisfied_query`` (Result.summary): mean profiled accuracy of the queries that met
  their deadline.
- ``violation_rate`` (RAMSIS): late queries over the queries served by the end of the run, as the
  artifact computes it.
- ``slo_violation_rate`` (Result.summary): queries that did not finish by their deadline, served
  or not, over all queries.
- ``mean_batch`` (RAMSIS): the mean batch (in queries) a served query ran in.
- ``sim_seconds`` (``RamsisRun.summary`` only): wall-clock seconds of the ``servelab.simulate``
  call.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ... import profiles
from ...results import COMPLETED, Result
from ...run import simulate as simulate_scenario
from ...scenario import Scenario
from ...sweeps import SweepError, sweep
from .cache import BoundedCache, stored_file
from .data import data_dir, get_task, read_artifact_ms_tables, resolve_trace
from .methods import method_spec, satisfiable
from .paper import (
    CONSTANT_DURATION_S,
    CONSTANT_LOADS,
    METHODS,
    PERCENTILE,
    POLICY_LOADS,
    TASKS,
    TRACE_DURATION_S,
    EvaluationPart,
    accuracy_gains,
    artifact_gains,
    resource_savings,
)
from .tasks import HARDWARE, TaskData

#: The flat columns of RamsisRun.row() (and compare_methods' table) taken from its summary.
ROW_KEYS = (
    "queries",
    "completed",
    "accuracy_per_satisfied_query",
    "violation_rate",
    "slo_violation_rate",
    "mean_batch",
    "sim_seconds",
)
# A task's profile as file text, by the task's digest: a handful of tasks per process.
_PROFILE_TEXTS = BoundedCache(maxsize=8)


@dataclass
class RamsisRun:
    """One simulated run: the configuration, the full Result and its :func:`summarize`."""

    method: str
    task: str
    workers: int
    slo_ms: float
    load_qps: float | None  # None for a trace
    trace: str | None
    result: Result
    summary: dict[str, Any] = field(default_factory=dict)

    @property
    def scenario(self) -> dict[str, Any]:
        """The scenario that produced the run (``servelab.simulate`` / ``serve`` replay it)."""
        return self.result.meta["scenario"]

    def row(self) -> dict[str, Any]:
        """A flat dict for tables: configuration + the ROW_KEYS of the summary."""
        return {
            "method": self.method,
            "task": self.task,
            "workers": self.workers,
            "slo_ms": self.slo_ms,
            "load_qps": self.load_qps,
            "trace": self.trace,
            **{key: self.summary.get(key) for key in ROW_KEYS},
        }


def summarize(result: Result) -> dict[str, Any]:
    """``result.summary()`` plus RAMSIS's ``violation_rate`` and ``mean_batch`` (see the module
    doc): late and batch over the queries served by the end of the run."""
    out = result.summary()
    c = result.columns
    served = c["status"] == COMPLETED
    n_served = int(np.count_nonzero(served))
    late = int(np.count_nonzero(served & (c["finish_ns"] > c["deadline_ns"])))
    out["violation_rate"] = late / n_served if n_served else None
    out["mean_batch"] = float(c["batch_queries"][served].mean()) if n_served else None
    return out


def _profile_file(task: TaskData, cache_dir: str | os.PathLike[str] | None) -> Path:
    text = _PROFILE_TEXTS.get(task.digest, lambda: profiles.dumps(task.profile))
    return stored_file(text, kind="profile", cache_dir=cache_dir)


@dataclass(frozen=True)
class _Setup:
    """A scenario and the labels of its run."""

    scenario: Scenario
    task: TaskData
    method: str | None  # None: the scheduler's own description, known once it is built
    slo_ms: float
    trace: str | None


def _setup(
    task: str | TaskData,
    scheduler: Any,
    workers: int,
    *,
    load: float | None,
    trace: Any,
    slo_ms: float | None,
    duration_s: float | None,
    seed: int,
    data: str | os.PathLike[str] | None,
    loads: Sequence[float],
    trace_mode: str,
    ms_duration_s: float,
    ms_table: Any,
    threads: int,
    cache_dir: str | os.PathLike[str] | None,
    balancer: str = "round_robin",
) -> _Setup:
    t = get_task(task, data)
    if (load is None) == (trace is None):
        raise ValueError("give exactly one of load= (queries/s) and trace=")
    if load is not None and not (isinstance(load, int | float) and load > 0):
        raise ValueError(f"load={load!r} must be a positive number of queries/s")
    if not (isinstance(workers, int) and workers >= 1):
        raise ValueError(f"workers={workers!r} must be an integer >= 1")
    slo = float(slo_ms) if slo_ms is not None else t.slos_ms[0]
    if not slo > 0:
        raise ValueError(f"slo_ms={slo_ms!r} must be positive")
    if load is not None:
        duration = CONSTANT_DURATION_S if duration_s is None else float(duration_s)
        arrivals: dict[str, Any] = {"name": "poisson", "rate": float(load)}
        trace_name = None
        where = f"{float(load):g} queries/s"
    else:
        duration = TRACE_DURATION_S if duration_s is None else float(duration_s)
        lt = resolve_trace(trace, data)
        arrivals = {"name": "piecewise_rate", **lt.arrival_params(trace_mode, duration)}
        trace_name = f"{Path(lt.source).name or 'trace'} ({trace_mode})"
        where = f"the trace {trace_name}"
    if not duration > 0:
        raise ValueError(f"duration_s={duration_s!r} must be positive")
    method = scheduler if isinstance(scheduler, str) and scheduler in METHODS else None
    if method is not None:
        scheduler = method_spec(
            method, t, workers=workers, slo_ms=slo, load=load, loads=loads,
            ms_duration_s=ms_duration_s, ms_table=ms_table, threads=threads, data=data,
            cache_dir=cache_dir, balancer=balancer,
        )  # fmt: skip
    stat = f"p{PERCENTILE}"
    scenario = Scenario.from_dict(
        {
            "name": f"ramsis-{t.name}-{method or 'scheduler'}",
            "description": f"RAMSIS evaluation: {method or 'a scheduler'} on the {t.name} task, "
            f"{workers} workers, SLO {slo:g} ms, {where} for {duration:g} s",
            "profile": str(_profile_file(t, cache_dir)),
            "workers": [{"hardware": HARDWARE, "count": workers, "models": list(t.models)}],
            "workload": {
                "arrivals": arrivals,
                "horizon_s": duration,
                "apps": [{"name": t.name, "slo_ms": slo}],
            },
            "scheduler": scheduler,
            "seed": seed,
            "decision_statistic": stat,
            "service": stat,
            "drain_s": slo / 1e3,
        }
    )
    return _Setup(scenario, t, method, slo, trace_name)


def experiment_scenario(
    task: str | TaskData = "image",
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
    ms_table: Any = None,
    threads: int = 1,
    cache_dir: str | os.PathLike[str] | None = None,
    balancer: str = "round_robin",
) -> Scenario:
    """The Scenario of one configuration of the paper's evaluation (arguments as
    :func:`run_experiment`), for ``servelab.simulate`` or ``servelab.serve``."""
    return _setup(
        task, scheduler, workers, load=load, trace=trace, slo_ms=slo_ms, duration_s=duration_s,
        seed=seed, data=data, loads=loads, trace_mode=trace_mode, ms_duration_s=ms_duration_s,
        ms_table=ms_table, threads=threads, cache_dir=cache_dir, balancer=balancer,
    ).scenario  # fmt: skip


def run_experiment(
    task: str | TaskData = "image",
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
    ms_table: Any = None,
    threads: int = 1,
    cache_dir: str | os.PathLike[str] | None = None,
    balancer: str = "round_robin",
) -> RamsisRun:
    """Simulates one method on one configuration of the paper's evaluation.

    task: "image" or "text" (or a TaskData); scheduler: "ramsis", "jellyfish", "model_switching"
    (configured as in the paper) or any servelab scheduler (a spec string, replayable, or an
    object); workers: how many ``cloud_cpu`` workers hold every model of the task. Exactly one of
    ``load`` (queries/s, constant Poisson for ``duration_s`` = 30 s) and ``trace`` (True: the
    Twitter trace of ``data``, a LoadTrace or a trace file; ``duration_s`` = 300 s, played as
    ``trace_mode``) is given. slo_ms: default the task's first (tightest) SLO. loads: the policy
    grid used with a trace. ms_duration_s: the length of each simulation that builds
    ModelSwitching's table; ms_table: a given table instead. data: the RAMSIS data folder;
    cache_dir: where the scenario's profile and policy files go (see ``cache.py``). balancer:
    RAMSIS's load balancer, "round_robin" (the paper's) or "shortest_queue" (Appendix I): its
    policies model it and its scheduler uses it.
    """
    setup = _setup(
        task, scheduler, workers, load=load, trace=trace, slo_ms=slo_ms, duration_s=duration_s,
        seed=seed, data=data, loads=loads, trace_mode=trace_mode, ms_duration_s=ms_duration_s,
        ms_table=ms_table, threads=threads, cache_dir=cache_dir, balancer=balancer,
    )  # fmt: skip
    start = time.perf_counter()
    result = simulate_scenario(setup.scenario)
    wall = time.perf_counter() - start
    summary = summarize(result)
    summary["sim_seconds"] = wall
    method = setup.method or result.meta["scheduler"]
    return RamsisRun(
        method, setup.task.name, workers, setup.slo_ms, load, setup.trace, result, summary
    )


def compare_methods(
    task: str | TaskData = "image",
    *,
    workers: Sequence[int] = (60,),
    loads: Sequence[float] | None = CONSTANT_LOADS,
    trace: Any = None,
    slo_ms: float | None = None,
    methods: Sequence[str] = METHODS,
    duration_s: float | None = None,
    ms_duration_s: float = TRACE_DURATION_S,
    ms_tables: Mapping[int, Any] | None = None,
    seed: int = 0,
    threads: int = 1,
    data: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    processes: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
    balancer: str = "round_robin",
) -> pd.DataFrame:
    """Runs every method on every configuration: the constant ``loads`` x ``workers``, or with
    ``trace`` the trace x ``workers``. Returns a DataFrame, one row per run (``RamsisRun.row()``):
    method, workers, load_qps (None for the trace), accuracy_per_satisfied_query, violation_rate
    (fractions; see the module doc), ... and satisfiable (``methods.satisfiable``).
    ``ms_tables``: {workers: table} to give ModelSwitching a table (e.g. the artifact's) instead
    of generating one with ``ms_duration_s`` runs. The runs go through ``servelab.sweep``:
    ``processes`` (default 1: in this process), ``backend`` ("local" or "ray") and
    ``ray_address`` as there; the task, the trace and the tables are sent once. ``balancer``:
    RAMSIS's (see :func:`run_experiment`)."""
    t = get_task(task, data)
    slo = float(slo_ms) if slo_ms is not None else t.slos_ms[0]
    rows = []
    configs: list[tuple[int, float | None]]
    if trace is not None:
        configs = [(w, None) for w in workers]
        lt = resolve_trace(trace, data)
    else:
        if loads is None:
            raise ValueError("give loads= (constant loads) or trace=")
        configs = [(w, float(x)) for w in workers for x in loads]
    for w, load in configs:
        ok = satisfiable(
            t, slo_ms=slo, workers=w, load=load, trace=lt if load is None else None, data=data
        )
        rows += [{"method": m, "workers": w, "load_qps": load, "satisfiable": ok} for m in methods]
    in_process = backend == "local" and processes == 1
    shared = {
        # A TaskData holds C++ tables that do not pickle: other processes load the task by name.
        "task": t if in_process or not isinstance(task, str) else task,
        "trace": lt if trace is not None else None, "slo": slo,
        "duration_s": duration_s, "seed": seed, "data": data, "ms_duration_s": ms_duration_s,
        "ms_tables": ms_tables, "threads": threads, "cache_dir": cache_dir,
        "balancer": balancer,
    }  # fmt: skip
    try:
        frame = sweep(
            _method_row, rows, processes=processes, backend=backend, ray_address=ray_address,
            shared=shared, progress=False, retries=0,
        )  # fmt: skip
    except SweepError as error:  # a bad method or setting: raise what the run raised, as before
        raise error.__cause__ from None
    if frame.empty:
        return pd.DataFrame()
    order = ["method", "task", "workers", "slo_ms", "load_qps", "trace", *ROW_KEYS, "satisfiable"]
    return frame[order + [c for c in frame.columns if c not in order]]


def _method_row(
    method: str, workers: int, load_qps: float | None, satisfiable: bool, task: TaskData,
    trace: Any, slo: float, ms_tables: Mapping[int, Any] | None, **settings: Any,
) -> dict[str, Any]:  # fmt: skip
    """One run of compare_methods (at module level: sweep workers import it)."""
    run = run_experiment(
        task, method, workers, load=load_qps, trace=trace if load_qps is None else None,
        slo_ms=slo, ms_table=None if ms_tables is None else ms_tables.get(workers), **settings,
    )  # fmt: skip
    return run.row()


#: The worker counts of the paper's Fig. 5 (sec. 7.1): 20 to 100 in steps of 10.
WORKER_GRID: tuple[int, ...] = tuple(range(20, 101, 10))


def resource_saving_curve(
    task: str | TaskData = "image",
    *,
    slos_ms: Sequence[float] | None = None,
    workers: Sequence[int] = WORKER_GRID,
    trace: Any = True,
    loads: Sequence[float] | None = None,
    ms_duration_s: float = TRACE_DURATION_S,
    threads: int = 1,
    data: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    processes: int = 1,
    balancer: str = "round_robin",
) -> pd.DataFrame:
    """RAMSIS's resource saving (the same accuracy with fewer workers) over SLOs and loads: every
    method on the ``workers`` grid for each SLO of ``slos_ms`` (default the task's three) on the
    trace (``trace``, default the Twitter trace of ``data``; None: none) and at each constant
    load of ``loads`` (None: none), then :func:`~servelab.ramsis.resource_savings`. Returns its
    per-point frame; attrs: ``summary`` (all settings), ``by_setting`` (one row per SLO and load:
    mean and highest saving per baseline, in %) and ``runs`` (compare_methods' rows).
    ModelSwitching's tables come from ``ms_duration_s`` runs per model and load (the artifact
    ships them for 60-80 workers only)."""
    t = get_task(task, data)
    slos = tuple(float(x) for x in (slos_ms if slos_ms is not None else t.slos_ms))
    frames = []
    for slo in slos:
        common = dict(
            workers=tuple(workers), slo_ms=slo, ms_duration_s=ms_duration_s, threads=threads,
            data=data, cache_dir=cache_dir, processes=processes, balancer=balancer,
        )  # fmt: skip
        if trace is not None:
            frames.append(compare_methods(t, trace=trace, **common))
        if loads:
            frames.append(compare_methods(t, loads=tuple(loads), **common))
    if not frames:
        raise ValueError("give trace= or loads=: there is no setting to compare")
    runs = pd.concat(frames, ignore_index=True)
    out = resource_savings(runs)
    by_setting = []
    for (slo, load), part in out.groupby(["slo_ms", "load_qps"], dropna=False, sort=True):
        entry: dict[str, Any] = {"slo_ms": slo, "load_qps": load}
        for baseline in ("jellyfish", "model_switching"):
            have = part.loc[part["baseline"] == baseline, "saving"].dropna()
            entry[f"{baseline}_mean"] = 100 * have.mean() if len(have) else np.nan
            entry[f"{baseline}_max"] = 100 * have.max() if len(have) else np.nan
        by_setting.append(entry)
    out.attrs.update(
        {"by_setting": pd.DataFrame(by_setting), "runs": runs, "task": t.name, "slos_ms": slos}
    )
    return out


def paper_evaluation(
    size: str = "reduced",
    *,
    data: str | os.PathLike[str] | None = None,
    threads: int = 1,
    artifact_ms_tables: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
    processes: int = 1,
    backend: str = "local",
    ray_address: str | None = None,
) -> list[EvaluationPart]:
    """The comparison of Sec. 7.1/7.2 in simulation. ``size="reduced"`` (quick, the tests): image at
    150 ms on the trace with 60/70/80 workers and at constant loads 400..4000 with 60 workers (the
    artifact's own setting, with its ModelSwitching tables when ``artifact_ms_tables``), and text at
    100 ms on the trace with 20/60/100 workers and at five constant loads with 20 workers (tables
    from 60 s runs). ``size="full"``: both tasks at all three SLOs, the trace with 20..100 workers,
    the constant loads with 60 (image) or 20 (text) workers, tables from 300 s runs.
    ``paper.format_evaluation`` prints the result. ``processes``, ``backend`` and ``ray_address``
    say where the runs go (see ``compare_methods``)."""
    if size not in ("reduced", "full"):
        raise ValueError(f"size={size!r} must be 'reduced' or 'full'")
    root = data_dir(data)
    parts = []

    def add(task: str, slo: float, workload: str, workers: Sequence[int], **kw: Any) -> None:
        frame = compare_methods(
            task, workers=workers, slo_ms=slo, threads=threads, data=root, cache_dir=cache_dir,
            processes=processes, backend=backend, ray_address=ray_address, **kw,
        )  # fmt: skip
        parts.append(
            EvaluationPart(
                task,
                slo,
                workload,
                frame,
                accuracy_gains(frame),
                accuracy_gains(frame, only_satisfiable=True),
                artifact_gains(task, slo, workload, workers),
            )
        )

    if size == "reduced":
        tables = read_artifact_ms_tables((60, 70, 80), root) if artifact_ms_tables else None
        add("image", 150.0, "trace", (60, 70, 80), trace=True, ms_tables=tables)
        add("image", 150.0, "constant", (60,), loads=CONSTANT_LOADS, ms_tables=tables)
        add("text", 100.0, "trace", (20, 60, 100), trace=True, ms_duration_s=60.0)
        add("text", 100.0, "constant", (20,), loads=CONSTANT_LOADS[1::2], ms_duration_s=60.0)
        return parts
    for task in TASKS:
        t = get_task(task, root)
        for slo in t.slos_ms:
            add(task, slo, "trace", tuple(range(20, 101, 10)), trace=True)
            add(task, slo, "constant", (60,) if task == "image" else (20,), loads=CONSTANT_LOADS)
    return parts
