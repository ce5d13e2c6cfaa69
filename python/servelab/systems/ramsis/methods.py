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
