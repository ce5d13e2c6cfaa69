"""Fitting the CPU performance model to measurements of a real executor on this machine.

:func:`fit_from_profiler` times an executor's batches (the profiler's timed batches, with the
GIL released) at every intra-op thread count of ``threads`` and every request parallelism of
``concurrency``: ``k`` concurrent requests are ``k`` sessions of the executor, each timing its
batches in its own thread, started together, so ``k`` batches are in service at once as with
``k`` serving workers. Each cell's median latency becomes one row (inter_op 1, intra_op,
k, ms) for :func:`~servelab.systems.rrl.model.fit_cpu_model`.

No executor exposes inter-op threads as a knob, so every row has inter_op = 1 and the model's
``inter_fraction`` is not determined by the data (it keeps the fitted grid's best value, which
changes nothing at inter_op = 1). With 2 cores, threads (1, 2) and concurrency (1, 2) give four
rows for four free parameters (base_ms, sync_ms, intra_fraction, interference): the fit error is
then no test of the model; thread counts beyond the cores add rows that are.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import executors
from .model import CpuModelFit, PerfModel, cpu_service_ms, fit_cpu_model
from .spaces import machine_cores

KNOB = "intra_op_threads"
MAX_THREADS = 1024
MAX_CONCURRENCY = 64


@dataclass(frozen=True)
class ProfilerFit:
    executor: str
    batch: int
    cores: int
    rows: list[dict[str, float]]  # inter_op, intra_op, in_service, measured_ms, fitted_ms
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


def concurrent_batch_ms(sessions: list[Any], sizes: list[int], config: dict[str, int], repeats: int,
                   warmup: int) -> np.ndarray:  # fmt: skip
    """Every session times `repeats` batches at once, each in its own thread; all samples, ms."""
    barrier = threading.Barrier(len(sessions))
    out: list[Any] = [None] * len(sessions)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            barrier.wait()
            out[i] = sessions[i].time_batches(sizes, repeats=repeats, warmup=warmup, config=config)
        except BaseException as e:  # re-raised in the caller's thread below
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(sessions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return np.concatenate([np.asarray(o["wall_ns"], dtype=float) for o in out]) / 1e6


def fit_from_profiler(
    executor: Any = "recsys(model='rm2', backend='onednn')",
    *,
    threads: Sequence[int] = (1, 2),
    concurrency: Sequence[int] = (1, 2),
    batch: int = 64,
    repeats: int = 20,
    warmup: int = 3,
    cores: int | None = None,
    seed: int = 0,
) -> ProfilerFit:
    """Measures ``executor`` at every (intra-op threads, concurrent requests) cell, a request
    being one batch of ``batch`` queries, and fits RRL's CPU model to the cells' medians."""
    threads = _ints("threads", threads, MAX_THREADS)
    concurrency = _ints("concurrency", concurrency, MAX_CONCURRENCY)
    for name, value, low in (("batch", batch, 1), ("repeats", repeats, 1), ("warmup", warmup, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{name}={value!r} must be an integer >= {low}")
    if len(threads) * len(concurrency) < 3:
        raise ValueError(
            f"threads={threads} x concurrency={concurrency} give "
            f"{len(threads) * len(concurrency)} cells; the fit needs at least 3"
        )
    cores = machine_cores() if cores is None else cores
    builder = executors.make_executor(executor)
    sessions = [builder.open(seed=seed + i) for i in range(max(concurrency))]
    if KNOB not in sessions[0].knobs():
        raise ValueError(
            f"executor {builder.describe()} has no {KNOB!r} knob "
            f"(its knobs: {', '.join(sessions[0].knobs()) or 'none'})"
        )
    cells = [(t, k) for k in concurrency for t in threads]
    measured = []
    for t, k in cells:
        samples = concurrent_batch_ms(sessions[:k], [1] * batch, {KNOB: t}, repeats, warmup)
        measured.append(float(np.median(samples)))
    intra = [t for t, _ in cells]
    in_service = [k for _, k in cells]
    fit = fit_cpu_model([1] * len(cells), intra, in_service, measured, cores=cores)
    rows = [
        {"inter_op": 1, "intra_op": t, "in_service": k, "measured_ms": ms,
         "fitted_ms": fit_ms(fit.model, t, k)}
        for (t, k), ms in zip(cells, measured, strict=True)
    ]  # fmt: skip
    return ProfilerFit(builder.describe(), batch, cores, rows, fit, os.getloadavg()[0])


def fit_ms(model: PerfModel, intra: int, in_service: int, inter: int = 1) -> float:
    """The fitted model's noise-free service time (ms) of one request."""
    return cpu_service_ms(model, inter, intra, in_service)
