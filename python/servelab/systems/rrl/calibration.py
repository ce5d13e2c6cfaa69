"""Fitting the CPU performance model to measurements of a real executor on this machine.

:func:`fit_from_profiler` times an executor's batches (the profiler's timed batches, with the
GIL released) at every inter-op thread count of ``inter_op``, intra-op thread count of
``threads`` and request parallelism of ``concurrency``: ``k`` concurrent requests are ``k``
sessions of the executor, each timing its batches in its own thread, started together, so ``k``
batches are in service at once as with ``k`` serving workers. Each cell's median latency becomes
one row (inter_op, intra_op, k, ms) for :func:`~servelab.systems.rrl.model.fit_cpu_model`;
:func:`fit_cells` is that fitting step alone, deterministic given the samples.

The model's ``inter_fraction`` is determined only when ``inter_op`` has more than one value (the
oneDNN recsys executor's ``inter_op_threads`` knob); at inter_op = 1 alone it keeps the grid's
best value, which changes nothing there. With 2 cores, inter_op (1, 2) x threads (1, 2) x
concurrency (1, 2) give eight rows for five free parameters (base_ms, sync_ms, intra_fraction,
inter_fraction, interference).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import executors
from ...pinning import machine_cores
from ...profiling import concurrent_batch_ms
from .model import CpuModelFit, PerfModel, cpu_service_ms, fit_cpu_model

KNOB = "intra_op_threads"
INTER_KNOB = "inter_op_threads"
MAX_THREADS = 1024
MAX_CONCURRENCY = 64


@dataclass(frozen=True)
class ProfilerFit:
    executor: str
    batch: int
    cores: int
    # inter_op, intra_op, in_service, measured_ms (median), fitted_ms, relative_error (fitted /
    # measured - 1), rms_relative_error (over the cell's timed batches, noise included), samples
    rows: list[dict[str, float]]
    fit: CpuModelFit
    load_average: float  # the machine's 1-minute load average after measuring (shared cores)

    @property
    def model(self) -> PerfModel:
        return self.fit.model

    def summary(self) -> dict[str, Any]:
        m = self.fit.model
        return {
            "executor": self.executor, "batch": self.batch, "cores": self.cores,
            "load_average": self.load_average,
            "rows": self.rows, "rms_relative_error": self.fit.rms_relative_error,
            "max_relative_error": max(abs(r["fitted_ms"] / r["measured_ms"] - 1)
                                      for r in self.rows),
            "params": {k: getattr(m, k) for k in
                       ("base_ms", "sync_ms", "intra_fraction", "inter_fraction", "interference")},
        }  # fmt: skip


def _ints(name: str, values: Any, high: int) -> list[int]:
    if isinstance(values, str) or not isinstance(values, Sequence) or not values:
        raise ValueError(f"{name}={values!r} must be a non-empty list of integers")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= high:
            raise ValueError(f"{name}={list(values)!r}: {v!r} is not an integer in 1..{high}")
    return sorted(set(values))


def fit_from_profiler(
    executor: Any = "recsys(model='rm2', backend='onednn')",
    *,
    threads: Sequence[int] = (1, 2),
    inter_op: Sequence[int] = (1, 2),
    concurrency: Sequence[int] = (1, 2),
    batch: int = 64,
    repeats: int = 20,
    warmup: int = 3,
    cores: int | None = None,
    seed: int = 0,
) -> ProfilerFit:
    """Measures ``executor`` at every (inter-op threads, intra-op threads, concurrent requests)
    cell, a request being one batch of ``batch`` queries, and fits RRL's CPU model to the cells'
    medians."""
    threads = _ints("threads", threads, MAX_THREADS)
    inter_op = _ints("inter_op", inter_op, MAX_THREADS)
    concurrency = _ints("concurrency", concurrency, MAX_CONCURRENCY)
    for name, value, low in (("batch", batch, 1), ("repeats", repeats, 1), ("warmup", warmup, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name}={value!r} must be an integer >= {low}")
    n_cells = len(inter_op) * len(threads) * len(concurrency)
    if n_cells < 3:
        raise ValueError(
            f"inter_op={inter_op} x threads={threads} x concurrency={concurrency} give "
            f"{n_cells} cells; the fit needs at least 3"
        )
    cores = machine_cores() if cores is None else cores
    builder = executors.make_executor(executor)
    sessions = [builder.open(seed=seed + i) for i in range(max(concurrency))]
    if KNOB not in sessions[0].knobs():
        raise ValueError(
            f"executor {builder.describe()} has no {KNOB!r} knob "
            f"(its knobs: {', '.join(sessions[0].knobs()) or 'none'})"
        )
    if inter_op != [1] and INTER_KNOB not in sessions[0].knobs():
        raise ValueError(
            f"inter_op={inter_op}: executor {builder.describe()} has no {INTER_KNOB!r} knob "
            f"(its knobs: {', '.join(sessions[0].knobs())}); give inter_op=[1]"
        )
    cells = [(a, t, k) for k in concurrency for a in inter_op for t in threads]
    samples = []
    for a, t, k in cells:
        # Only set the inter-op knob when it varies, so executors without it still fit intra-op.
        config = {KNOB: t} if inter_op == [1] else {KNOB: t, INTER_KNOB: a}
        samples.append(concurrent_batch_ms(sessions[:k], [1] * batch, config, repeats, warmup))
    fit, rows = fit_cells(cells, samples, cores=cores)
    return ProfilerFit(builder.describe(), batch, cores, rows, fit, os.getloadavg()[0])


def fit_cells(
    cells: Sequence[tuple[int, int, int]], samples_ms: Sequence[Any], *, cores: int
) -> tuple[CpuModelFit, list[dict[str, float]]]:
    """The fitting step of :func:`fit_from_profiler`: fits the CPU model to the median of each
    (inter_op, intra_op, in_service) cell's timed batches (ms) and returns the fit and one row per
    cell. No randomness: the same samples give the same fit."""
    if len(cells) != len(samples_ms):
        raise ValueError(f"{len(cells)} cells but {len(samples_ms)} lists of samples")
    if len(cells) < 3:
        raise ValueError(f"cells={list(cells)!r}: the fit needs at least 3")
    for cell in cells:
        if len(cell) != 3:
            raise ValueError(f"cell {cell!r} must be (inter_op, intra_op, in_service)")
    arrays = []
    for cell, s in zip(cells, samples_ms, strict=True):
        a = np.asarray(s, dtype=float).ravel()
        if a.size == 0 or not np.all(np.isfinite(a) & (a > 0)):
            raise ValueError(
                f"samples_ms of cell {tuple(cell)} must be positive, finite, non-empty"
            )
        arrays.append(a)
    measured = [float(np.median(a)) for a in arrays]
    inter, intra, in_service = (list(c) for c in zip(*cells, strict=True))
    fit = fit_cpu_model(inter, intra, in_service, measured, cores=cores)
    rows = []
    for (a, t, k), ms, s in zip(cells, measured, arrays, strict=True):
        fitted = fit_ms(fit.model, t, k, a)
        rows.append({
            "inter_op": a, "intra_op": t, "in_service": k, "measured_ms": ms, "fitted_ms": fitted,
            "relative_error": fitted / ms - 1,
            # Per-cell RMS over every timed batch: the model's bias and the cell's noise together.
            "rms_relative_error": float(np.sqrt(np.mean((fitted / s - 1) ** 2))),
            "samples": int(s.size),
        })  # fmt: skip
    return fit, rows


def fit_ms(model: PerfModel, intra: int, in_service: int, inter: int = 1) -> float:
    """The fitted model's noise-free service time (ms) of one request."""
    return cpu_service_ms(model, inter, intra, in_service)
