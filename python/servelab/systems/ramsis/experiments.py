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
of the run: ``accuracy_per_satisfied_query`` (mean profiled accuracy of the queries that met
their deadline: a fraction in [0, 1], as in ``Result.summary()``; printers show it in %) and
``violation_rate`` (late served queries / served queries); plus ``violation_rate_all`` (queries
that did not finish by their deadline, served or not, over all).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ... import _core
from ...results import COMPLETED, Result
from .policy import read_policy_text
from .tasks import HARDWARE, TaskData, image_task, text_task
from .trace import TRACE_DURATION_S, LoadTrace, read_load_trace

#: The statistic RAMSIS, its baselines and the artifact's simulator use for latency.
PERCENTILE = 95
#: The artifact's policy grid for the trace: 200..4000 queries/s in steps of 200.
POLICY_LOADS: tuple[float, ...] = tuple(200.0 * i for i in range(1, 21))
#: The constant loads of the paper's Fig. 6: 400..4000 queries/s in steps of 400.
CONSTANT_LOADS: tuple[float, ...] = tuple(400.0 * i for i in range(1, 11))
CONSTANT_DURATION_S = 30.0
METHODS = ("ramsis", "jellyfish", "model_switching")
TASKS = ("image", "text")
DATA_ENV = "SERVELAB_RAMSIS_DATA"


def data_dir(data: str | os.PathLike[str] | None = None) -> Path:
    """The RAMSIS data folder (with ``derived/``, ``twitter_trace/``): ``data``, else
    $SERVELAB_RAMSIS_DATA."""
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
    return path.resolve()


@functools.cache
def _task_cached(name: str, data: Path) -> TaskData:
    if name == "image":
        return image_task(data, percentile=PERCENTILE)
    return text_task(data, percentile=PERCENTILE)


def get_task(task: str | TaskData, data: str | os.PathLike[str] | None = None) -> TaskData:
    """The task's models, latency table and profile (``image_task`` / ``text_task``), cached."""
    if isinstance(task, TaskData):
        return task
    if task not in TASKS:
        raise KeyError(f"task={task!r} is not one of {', '.join(TASKS)}")
    return _task_cached(task, data_dir(data))


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
        "accuracy_per_satisfied_query": float(accuracy.mean()) if n_met else None,
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


# Policy sets and ModelSwitching tables cost seconds to make: each is kept per configuration for
# the life of the process (keyed by the task object, which the cache keeps alive).
_CACHE: dict[tuple, tuple[TaskData, Any]] = {}


def _cached(kind: str, task: TaskData, key: tuple, make: Any) -> Any:
    full = (kind, id(task), *key)
    if full not in _CACHE:
        _CACHE[full] = (task, make())
    return _CACHE[full][1]


def ramsis_policies(
    task: str | TaskData,
    *,
    slo_ms: float,
    workers: int,
    loads: Sequence[float],
    threads: int = 1,
    data: str | os.PathLike[str] | None = None,
) -> Any:
    """RAMSIS's policy set for a task as the artifact makes it (FLD D=100, N=32, maximal batching,
    Poisson arrivals, round-robin over ``workers``, 100 value-iteration sweeps), one policy per
    load of ``loads`` (no refinement); cached per configuration within the process."""
    t = get_task(task, data)
    grid = [float(x) for x in loads]
    from .policy import policy_set

    return _cached(
        "policies", t, (float(slo_ms), int(workers), tuple(grid)),
        lambda: policy_set(
            t, slo_ms=float(slo_ms), workers=int(workers), loads=grid, max_accuracy_gap=0.0,
            threads=threads,
        ),
    )  # fmt: skip


def make_ms_table(
    task: str | TaskData,
    *,
    slo_ms: float,
    workers: int,
    loads: Sequence[float],
    duration_s: float = TRACE_DURATION_S,
    seed: int = 0,
    threads: int = 1,
    data: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """ModelSwitching's choice table for a task (``baselines.model_switching_table``: one
    ``duration_s`` run per model and load, as the artifact's MS_gen), cached."""
    from .baselines import model_switching_table

    t = get_task(task, data)
    grid = [float(x) for x in loads]
    return _cached(
        "ms_table", t, (float(slo_ms), int(workers), tuple(grid), float(duration_s), int(seed)),
        lambda: model_switching_table(
            t.profile, list(t.models), workers=int(workers), slo_ms=float(slo_ms), loads=grid,
            duration_s=float(duration_s), seed=int(seed), threads=threads,
        ),
    )  # fmt: skip


def make_method(
    method: str,
    task: str | TaskData,
    *,
    workers: int,
    slo_ms: float,
    load: float | None = None,
    loads: Sequence[float] = POLICY_LOADS,
    ms_duration_s: float = TRACE_DURATION_S,
    ms_table: Any = None,
    threads: int = 1,
    data: str | os.PathLike[str] | None = None,
) -> _core.Scheduler:
    """The scheduler of one method as the experiments configure it: with a known constant ``load``,
    or (load None) with the load monitor over the ``loads`` grid. ``ms_table`` ({load: model} or a
    model_switching_table result) replaces ModelSwitching's generated table, e.g. with the
    artifact's own (``baselines.read_policy_gen``)."""
    from .baselines import jellyfish, model_switching

    grid = [float(load)] if load is not None else [float(x) for x in loads]
    known = float(load) if load is not None else 0.0
    if method == "ramsis":
        policies = ramsis_policies(
            task, slo_ms=slo_ms, workers=workers, loads=grid, threads=threads, data=data
        )
        return _core.ramsis.ramsis_scheduler(policies, load_qps=known)
    if method == "jellyfish":
        return jellyfish(loads=grid, load_qps=known, slo_ms=slo_ms)
    if method == "model_switching":
        if ms_table is not None:
            return model_switching(ms_table, load_qps=known, slo_ms=slo_ms)
        table = make_ms_table(
            task, slo_ms=slo_ms, workers=workers, loads=grid, duration_s=ms_duration_s,
            threads=threads, data=data,
        )  # fmt: skip
        return model_switching(table, load_qps=known, slo_ms=slo_ms)
    raise KeyError(f"method={method!r} is not one of {', '.join(METHODS)}")


def simulate(
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
) -> RamsisRun:
    """Simulates one method on one configuration of the paper's evaluation.

    task: "image" or "text"; scheduler: "ramsis", "jellyfish", "model_switching" (configured as in
    the paper) or any servelab scheduler (an object or a spec string); workers: how many
    ``cloud_cpu`` workers hold every model of the task. Exactly one of ``load`` (queries/s,
    constant Poisson for ``duration_s`` = 30 s) and ``trace`` (True: the Twitter trace of ``data``,
    ``duration_s`` = 300 s, played as ``trace_mode``) is given. slo_ms: default the task's first
    (tightest) SLO. loads: the policy grid used with a trace. ms_duration_s: the length of each
    simulation that builds ModelSwitching's table; ms_table: a given table instead. data: the RAMSIS
    data folder.
    """
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
    profile = t.profile
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
            ms_duration_s=ms_duration_s, ms_table=ms_table, threads=threads, data=data,
        )  # fmt: skip
    else:
        from ...schedulers import make_scheduler

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


# ---- the paper's comparisons ------------------------------------------------------------------

#: What the artifact's plot.py prints (appendix A.4.2, image task, SLO 150 ms): RAMSIS's accuracy
#: gain in percentage points, (average, highest), on the Twitter trace at 60/70/80 workers and at
#: constant loads 400..4000 queries/s with 60 workers.
ARTIFACT_GAINS: dict[str, dict[str, tuple[float, float]]] = {
    "trace": {"jellyfish": (5.70, 8.07), "model_switching": (3.48, 4.63)},
    "constant": {"jellyfish": (3.70, 15.04), "model_switching": (1.84, 6.71)},
}


def satisfiable(
    task: str | TaskData,
    *,
    slo_ms: float,
    workers: int,
    load: float | None = None,
    trace: Any = None,
    data: str | os.PathLike[str] | None = None,
) -> bool:
    """Whether ``workers`` can serve the load within the SLO, by RAMSIS's own guarantee (Sec.
    5.1): the expected violation rate of its policy for ``load`` is below 1%; for a ``trace``, the
    expected violation rate of the policies of its loads, weighted by the queries each load
    brings, is below 1% (short peaks above capacity are allowed, as a trace has them)."""
    return (
        expected_violation(task, slo_ms=slo_ms, workers=workers, load=load, trace=trace, data=data)
        < 0.01
    )


def expected_violation(
    task: str | TaskData,
    *,
    slo_ms: float,
    workers: int,
    load: float | None = None,
    trace: Any = None,
    data: str | os.PathLike[str] | None = None,
) -> float:
    """RAMSIS's expected violation rate for a constant ``load`` or, load-weighted, for a ``trace``
    (one policy per distinct load of the trace)."""
    if (load is None) == (trace is None):
        raise ValueError("give exactly one of load= and trace=")
    if load is not None:
        loads, weights = np.array([float(load)]), np.array([1.0])
    else:
        lt = _trace(trace, data)
        loads, counts = np.unique(lt.loads_qps.astype(float), return_counts=True)
        weights = loads * counts
    policies = ramsis_policies(
        task, slo_ms=slo_ms, workers=workers, loads=loads.tolist(), data=data
    )
    per_load = np.array([policies.lookup(float(x)).expected_violation for x in loads])
    return float((per_load * weights).sum() / weights.sum())


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
) -> Any:
    """Runs every method on every configuration: the constant ``loads`` x ``workers``, or with
    ``trace`` the trace x ``workers``. Returns a pandas DataFrame, one row per run: method,
    workers, load_qps (None for the trace), accuracy_per_satisfied_query (a fraction),
    violation_rate, satisfiable (see :func:`satisfiable`) and the rest of ``RamsisRun.summary``.
    ``ms_tables``: {workers: table} to give ModelSwitching a table (e.g. the artifact's) instead
    of generating one with ``ms_duration_s`` runs."""
    import pandas as pd

    t = get_task(task, data)
    slo = float(slo_ms) if slo_ms is not None else t.slos_ms[0]
    rows = []
    configs: list[tuple[int, float | None]]
    if trace is not None:
        configs = [(w, None) for w in workers]
        lt = _trace(trace, data)
    else:
        if loads is None:
            raise ValueError("give loads= (constant loads) or trace=")
        configs = [(w, float(x)) for w in workers for x in loads]
    for w, load in configs:
        ok = satisfiable(
            t, slo_ms=slo, workers=w, load=load, trace=lt if load is None else None, data=data
        )
        for method in methods:
            run = simulate(
                t, method, w, load=load, trace=lt if load is None else None, slo_ms=slo,
                duration_s=duration_s, seed=seed, data=data, ms_duration_s=ms_duration_s,
                ms_table=None if ms_tables is None else ms_tables.get(w), threads=threads,
            )  # fmt: skip
            rows.append({**run.row(), "satisfiable": ok})
    return pd.DataFrame(rows)


def accuracy_gains(frame: Any, *, only_satisfiable: bool = False) -> dict[str, dict[str, float]]:
    """RAMSIS's accuracy gain over each baseline in percentage points, as the artifact's plot.py
    computes it: per configuration (workers, load) RAMSIS minus the baseline, then the average and
    the highest. ``only_satisfiable`` keeps the configurations :func:`compare_methods` marked so."""
    df = frame[frame["satisfiable"]] if only_satisfiable else frame
    wide = df.pivot_table(
        index=["workers", "load_qps"], columns="method", values="accuracy_per_satisfied_query",
        dropna=False,
    ) if df["load_qps"].notna().any() else df.pivot_table(
        index="workers", columns="method", values="accuracy_per_satisfied_query"
    )  # fmt: skip
    out = {}
    for baseline in ("jellyfish", "model_switching"):
        if "ramsis" not in wide or baseline not in wide:
            continue
        diff = 100 * (wide["ramsis"] - wide[baseline]).dropna()  # fractions -> percentage points
        out[baseline] = {
            "mean": float(diff.mean()) if len(diff) else float("nan"),
            "max": float(diff.max()) if len(diff) else float("nan"),
            "min": float(diff.min()) if len(diff) else float("nan"),
            "configurations": int(len(diff)),
        }
    return out


def scheduler(policies: Any, *, load_qps: float = 0.0, window_ms: float = 500.0) -> _core.Scheduler:
    """The RAMSIS online scheduler for ``policies`` (a PolicySet, a WorkerPolicy or a policy set
    JSON path), for servelab.simulate and servelab.serve: round-robin per-worker EDF queues; at each
    decision the policy of the load estimated over the last ``window_ms`` (or the known
    ``load_qps``) maps (queue length, earliest slack) to (model, batch)."""
    if isinstance(policies, str | os.PathLike):
        # The file is checked here (exists, UTF-8, sane nesting) so that its errors name the path;
        # the path itself goes on, so the run's metadata still names the file.
        read_policy_text(policies)
    return _core.ramsis.ramsis_scheduler(policies, load_qps=load_qps, window_ms=window_ms)


# ---- the evaluation as a whole ----------------------------------------------------------------

ARTIFACT_MS_FOLDER = "policy_gen/image_cloud_cpu_ModelSwitching_instances-{workers}_150ms_0.01"


@dataclass
class EvaluationPart:
    """One panel of the evaluation: a task, an SLO and a workload over its configurations."""

    task: str
    slo_ms: float
    workload: str  # "trace" or "constant"
    frame: Any  # compare_methods' DataFrame
    gains: dict[str, dict[str, float]]
    gains_satisfiable: dict[str, dict[str, float]]
    artifact: dict[str, tuple[float, float]] | None = None  # ARTIFACT_GAINS where they apply


def paper_evaluation(
    size: str = "reduced",
    *,
    data: str | os.PathLike[str] | None = None,
    threads: int = 1,
    artifact_ms_tables: bool = True,
) -> list[EvaluationPart]:
    """The comparison of Sec. 7.1/7.2 in simulation. ``size="reduced"`` (quick, the tests): image at
    150 ms on the trace with 60/70/80 workers and at constant loads 400..4000 with 60 workers (the
    artifact's own setting, with its ModelSwitching tables when ``artifact_ms_tables``), and text at
    100 ms on the trace with 20/60/100 workers and at five constant loads with 20 workers (tables
    from 60 s runs). ``size="full"``: both tasks at all three SLOs, the trace with 20..100 workers,
    the constant loads with 60 (image) or 20 (text) workers, tables from 300 s runs."""
    if size not in ("reduced", "full"):
        raise ValueError(f"size={size!r} must be 'reduced' or 'full'")
    root = data_dir(data)
    parts = []

    def add(task: str, slo: float, workload: str, workers: Sequence[int], **kw: Any) -> None:
        frame = compare_methods(task, workers=workers, slo_ms=slo, threads=threads, data=root, **kw)
        artifact = None
        if task == "image" and slo == 150.0 and tuple(workers) in ((60, 70, 80), (60,)):
            artifact = ARTIFACT_GAINS[workload]
        parts.append(
            EvaluationPart(
                task,
                slo,
                workload,
                frame,
                accuracy_gains(frame),
                accuracy_gains(frame, only_satisfiable=True),
                artifact,
            )  # fmt: skip
        )

    if size == "reduced":
        image_models = list(get_task("image", root).models)
        tables = None
        if artifact_ms_tables:
            from .baselines import read_policy_gen

            tables = {
                w: read_policy_gen(root / ARTIFACT_MS_FOLDER.format(workers=w), image_models)
                for w in (60, 70, 80)
            }
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


def format_evaluation(parts: Sequence[EvaluationPart]) -> str:
    """The evaluation as text: per panel, each configuration's accuracy and violation rate by
    method, then RAMSIS's gains (all configurations and the satisfiable ones) beside the artifact's
    where it reports them."""
    lines = []
    for p in parts:
        lines.append(f"== {p.task}, SLO {p.slo_ms:g} ms, {p.workload}")
        key = "workers" if p.workload == "trace" else "load_qps"
        lines.append(
            f"{key:>9} {'sat':>4} " + " ".join(f"{m + ' acc% / viol%':>32}" for m in METHODS)
        )
        for value, group in p.frame.groupby(key, sort=True):
            cells = []
            for m in METHODS:
                row = group[group["method"] == m]
                if row.empty:
                    cells.append(f"{'-':>32}")
                    continue
                acc = row["accuracy_per_satisfied_query"].iloc[0]
                viol = row["violation_rate"].iloc[0]
                cells.append(f"{100 * acc:>22.2f} / {100 * viol:>7.3f}")
            sat = "yes" if bool(group["satisfiable"].iloc[0]) else "no"
            lines.append(f"{value:>9g} {sat:>4} " + " ".join(cells))
        for baseline in ("jellyfish", "model_switching"):
            g, gs = p.gains.get(baseline), p.gains_satisfiable.get(baseline)
            if g is None:
                continue
            text = (
                f"  RAMSIS vs {baseline}: mean {g['mean']:+.2f} max {g['max']:+.2f} pp "
                f"(satisfiable: mean {gs['mean']:+.2f}, min {gs['min']:+.2f})"
            )
            if p.artifact is not None:
                mean, best = p.artifact[baseline]
                text += f"; artifact: mean {mean:+.2f} max {best:+.2f}"
            lines.append(text)
    return "\n".join(lines)
