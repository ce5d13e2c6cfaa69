"""RAMSIS and its two baselines as the paper's evaluation configures them.

- RAMSIS: a policy set as the artifact makes it (FLD D=100, N=32, maximal batching, Poisson
  arrivals, round-robin over the workers, 100 value-iteration sweeps), one policy per load of the
  grid (:func:`ramsis_policies`); ``balancer="shortest_queue"`` models shortest-queue-first
  instead (Appendix I), and the scheduler then balances that way.
- ModelSwitching: a choice table from one simulation per model and load (:func:`make_ms_table`).
- Jellyfish+: its rule needs nothing made offline.

:func:`method_spec` gives each method's scheduler spec, with a known constant load (the paper's
"perfect load monitor": one policy, one table entry, one Jellyfish rule) or with the load monitor
over a grid of loads. Policy sets and tables take seconds to make: each is kept for the process,
keyed by the task's content and the configuration, the most recently used few only.
:func:`expected_violation` / :func:`satisfiable` apply RAMSIS's own guarantee (Sec. 5.1) to a
configuration.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from .baselines import model_switching_table
from .cache import BoundedCache
from .data import get_task, resolve_trace
from .paper import METHODS, POLICY_LOADS, TRACE_DURATION_S
from .policy import PolicySet, policy_set
from .schedulers import jellyfish_spec, model_switching_spec, ramsis_spec
from .tasks import TaskData

# A panel of the evaluation uses up to about 30 configurations; a policy set takes about 1 MB.
_POLICY_SETS = BoundedCache(maxsize=32)
_MS_TABLES = BoundedCache(maxsize=32)


def ramsis_policies(
    task: str | TaskData,
    *,
    slo_ms: float,
    workers: int,
    loads: Sequence[float],
    threads: int = 1,
    data: str | os.PathLike[str] | None = None,
    balancer: str = "round_robin",
) -> PolicySet:
    """RAMSIS's policy set for a task as the artifact makes it, one policy per load of ``loads``
    (no refinement); kept per configuration (the result does not depend on ``threads``).
    ``balancer``: the load balancer the MDPs model and the online scheduler then uses,
    "round_robin" (the paper's) or "shortest_queue" (its Appendix I)."""
    t = get_task(task, data)
    grid = tuple(float(x) for x in loads)
    key = (t.digest, float(slo_ms), int(workers), grid, str(balancer))
    return _POLICY_SETS.get(
        key,
        lambda: policy_set(
            t, slo_ms=float(slo_ms), workers=int(workers), loads=list(grid), max_accuracy_gap=0.0,
            threads=threads, balancer=balancer,
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
    ``duration_s`` run per model and load, as the artifact's MS_gen); kept per configuration
    (the result does not depend on ``threads``)."""
    t = get_task(task, data)
    grid = tuple(float(x) for x in loads)
    key = (t.digest, float(slo_ms), int(workers), grid, float(duration_s), int(seed))
    return _MS_TABLES.get(
        key,
        lambda: model_switching_table(
            t.profile, list(t.models), workers=int(workers), slo_ms=float(slo_ms),
            loads=list(grid), duration_s=float(duration_s), seed=int(seed), threads=threads,
        ),
    )  # fmt: skip


def method_spec(
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
    cache_dir: str | os.PathLike[str] | None = None,
    balancer: str = "round_robin",
) -> str:
    """The scheduler spec of one method as the experiments configure it: with a known constant
    ``load``, or (load None) with the load monitor over the ``loads`` grid. ``ms_table`` ({load:
    model} or a model_switching_table result) replaces ModelSwitching's generated table, e.g. with
    the artifact's own (``data.read_policy_gen``). RAMSIS's policy set is written to a file in
    ``cache_dir`` (see ``cache.py``) that the spec names; ``balancer`` is the one its policies
    model and its scheduler uses (the baselines serve a central queue and ignore it)."""
    grid = [float(load)] if load is not None else [float(x) for x in loads]
    known = float(load) if load is not None else 0.0
    if method == "ramsis":
        policies = ramsis_policies(
            task, slo_ms=slo_ms, workers=workers, loads=grid, threads=threads, data=data,
            balancer=balancer,
        )  # fmt: skip
        return ramsis_spec(policies, load_qps=known, cache_dir=cache_dir)
    if method == "jellyfish":
        return jellyfish_spec(loads=grid, load_qps=known, slo_ms=slo_ms)
    if method == "model_switching":
        if ms_table is None:
            ms_table = make_ms_table(
                task, slo_ms=slo_ms, workers=workers, loads=grid, duration_s=ms_duration_s,
                threads=threads, data=data,
            )  # fmt: skip
        return model_switching_spec(ms_table, load_qps=known, slo_ms=slo_ms)
    raise KeyError(f"method={method!r} is not one of {', '.join(METHODS)}")


def worker_capacity(
    task: str | TaskData, *, slo_ms: float, data: str | os.PathLike[str] | None = None
) -> tuple[str, float]:
    """The most queries per second one worker can serve within ``slo_ms`` by the task's latency
    table (the p95 the simulator uses): the largest batch / latency(batch) over every model and
    batch (up to the table's largest) whose latency is within the SLO, ignoring any wait, so an
    upper bound of what a worker sustains. Returns (model, queries/s)."""
    t = get_task(task, data)
    table = t.table
    best = ("", 0.0)
    for i, model in enumerate(table.models):
        row = np.asarray(table.latency_s[i], dtype=float)
        batches = np.arange(1, len(row) + 1)
        fits = row * 1e3 <= float(slo_ms)
        if fits.any():
            qps = float((batches[fits] / row[fits]).max())
            if qps > best[1]:
                best = (model, qps)
    return best


def trace_capacity(
    task: str | TaskData = "image",
    *,
    workers: Sequence[int] = tuple(range(20, 101, 10)),
    trace: Any = True,
    data: str | os.PathLike[str] | None = None,
) -> Any:
    """Whether a trace can be served at all by K workers at each SLO of the task: one row per
    (SLO, K) with the fastest worker's capacity (:func:`worker_capacity`), K times it, the
    trace's peak and mean load, the share of the trace's time its load exceeds K workers'
    capacity, and the fewest workers whose capacity covers the peak. Served queries beyond
    capacity wait without bound, so a K whose capacity is below the peak for a share of the
    trace cannot keep violations low there."""
    import pandas as pd

    t = get_task(task, data)
    lt = resolve_trace(trace, data)
    loads = lt.per_second().astype(float)
    rows = []
    for slo in t.slos_ms:
        model, qps = worker_capacity(t, slo_ms=slo, data=data)
        for k in workers:
            rows.append(
                {
                    "slo_ms": float(slo), "workers": int(k), "fastest_model": model,
                    "worker_qps": qps, "capacity_qps": k * qps,
                    "trace_peak_qps": float(loads.max()), "trace_mean_qps": float(loads.mean()),
                    "time_over_capacity": float((loads > k * qps).mean()),
                    "workers_for_peak": int(np.ceil(loads.max() / qps)) if qps > 0 else None,
                }
            )  # fmt: skip
    return pd.DataFrame(rows)


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
        lt = resolve_trace(trace, data)
        loads, counts = np.unique(lt.loads_qps.astype(float), return_counts=True)
        weights = loads * counts
    policies = ramsis_policies(
        task, slo_ms=slo_ms, workers=workers, loads=loads.tolist(), data=data
    )
    per_load = np.array([policies.lookup(float(x)).expected_violation for x in loads])
    return float((per_load * weights).sum() / weights.sum())


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
