"""Synthetic Results built with numpy, and module-level functions for sweeps in worker processes.

Nothing here runs the C++ engine: records follow the Result contract so the results, experiments
and plotting layers can be tested on their own.
"""

from __future__ import annotations

import math
import os

import numpy as np

from servelab.results import Result

MS = 1_000_000
S = 1_000_000_000
PRICE_PER_H = 3.6  # $/h, i.e. $0.001 per second of worker time
DROP_REASONS = ["queue_full", "deadline_unreachable"]


def make_result(
    arrival_ns,
    finish_ns,
    *,
    start_ns=None,
    dispatch_ns=None,
    status=None,
    slo_ms=100.0,
    app=None,
    worker=None,
    model=None,
    accuracy=None,
    size=None,
    drop_reason=None,
    apps=("a",),
    n_workers=1,
    busy_ns=None,
    duration_ns=None,
    world="sim",
) -> Result:
    """A Result from explicit per-query times; unspecified fields get contract-consistent values
    (each completed query runs alone in its batch, started at arrival)."""
    arrival = np.asarray(arrival_ns, dtype=np.int64)
    finish = np.asarray(finish_ns, dtype=np.int64)
    n = len(arrival)
    status = np.zeros(n, np.int8) if status is None else np.asarray(status, np.int8)
    done = status == 0
    start = np.where(done, arrival, -1) if start_ns is None else np.asarray(start_ns, np.int64)
    dispatch = start.copy() if dispatch_ns is None else np.asarray(dispatch_ns, np.int64)
    size = np.ones(n, np.int32) if size is None else np.asarray(size, np.int32)
    worker = np.where(done, 0, -1) if worker is None else np.asarray(worker)
    model = np.where(done, 0, -1) if model is None else np.asarray(model)
    if drop_reason is None:
        drop_reason = np.where(done, -1, 0)
    app = np.zeros(n, np.int16) if app is None else np.asarray(app, np.int16)
    slo_ns = round(slo_ms * MS)
    service = np.where(done, finish - start, 0)
    cost = (service / S * PRICE_PER_H / 3600).astype(np.float32)
    if accuracy is None:
        accuracy = np.where(done, 0.8, np.nan)
    duration = int(finish.max()) if duration_ns is None and n else (duration_ns or 0)
    columns = {
        "id": np.arange(n, dtype=np.int64),
        "app": app,
        "size": size,
        "arrival_ns": arrival,
        "deadline_ns": arrival + slo_ns,
        "dispatch_ns": dispatch,
        "start_ns": start,
        "finish_ns": finish,
        "worker": worker.astype(np.int32),
        "model": model.astype(np.int16),
        "batch_items": np.where(done, size, 0).astype(np.int32),
        "batch_queries": done.astype(np.int32),
        "status": status,
        "drop_reason": np.asarray(drop_reason, np.int8),
        "accuracy": np.asarray(accuracy, np.float32),
        "cost": cost,
    }
    if busy_ns is None:
        busy_ns = [int(service[worker == w].sum()) for w in range(n_workers)]
    workers = {
        "worker": np.arange(n_workers, dtype=np.int32),
        "hardware": np.zeros(n_workers, np.int16),
        "busy_ns": np.asarray(busy_ns, np.int64),
        "active_ns": np.full(n_workers, duration, np.int64),
        "cost": np.full(n_workers, duration / S * PRICE_PER_H / 3600),
        "batches": np.asarray(
            [int(np.count_nonzero(done & (worker == w))) for w in range(n_workers)], np.int64
        ),
    }
    meta = {
        "world": world,
        "scheduler": "fake",
        "seed": 0,
        "duration_ns": duration,
        "apps": [{"name": name, "slo_ns": slo_ns} for name in apps],
        "models": ["small", "large"],
        "hardware": ["cpu"],
        "drop_reasons": DROP_REASONS,
        "scenario": None,
    }
    return Result(columns, workers, meta)


def fifo_result(
    n=10_000,
    rate_qps=80.0,
    service_ms=10.0,
    *,
    workers=1,
    seed=0,
    slo_ms=50.0,
    drop_fraction=0.0,
    apps=("a", "b"),
    max_batch=1,
) -> Result:
    """Poisson arrivals served by ``workers`` FIFO servers (queries dealt round-robin), batches of
    up to ``max_batch`` consecutive queries of a worker; service times are exponential (M/M/1 per
    worker with max_batch=1). A random ``drop_fraction`` is dropped on arrival."""
    rng = np.random.default_rng(seed)
    arrival = np.cumsum(rng.exponential(S / rate_qps, n)).astype(np.int64)
    dropped = rng.random(n) < drop_fraction
    worker = np.where(dropped, -1, np.arange(n) % workers).astype(np.int32)
    start = np.full(n, -1, np.int64)
    finish = arrival + np.where(dropped, MS, 0)  # drops happen 1 ms after arrival
    batch_items = np.zeros(n, np.int32)
    batch_queries = np.zeros(n, np.int32)
    model = np.where(dropped, -1, rng.integers(0, 2, n)).astype(np.int16)
    busy = np.zeros(workers, np.int64)
    batches = np.zeros(workers, np.int64)
    for w in range(workers):
        rows = np.flatnonzero(worker == w)
        # Batches: consecutive groups of max_batch queries, ready when the last one arrives.
        group = np.arange(len(rows)) // max_batch
        first = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        last = np.r_[first[1:], len(rows)] - 1
        ready = arrival[rows[last]]
        service = np.maximum(rng.exponential(service_ms * MS, len(first)), 1).astype(np.int64)
        # Lindley recursion, vectorised: finish_k = S_k + max_{j<=k}(ready_j - S_{j-1}).
        cum = np.cumsum(service)
        batch_finish = cum + np.maximum.accumulate(ready - (cum - service))
        batch_start = batch_finish - service
        counts = last - first + 1
        start[rows] = np.repeat(batch_start, counts)
        finish[rows] = np.repeat(batch_finish, counts)
        batch_items[rows] = np.repeat(counts, counts)
        batch_queries[rows] = np.repeat(counts, counts)
        # One model per batch: that of its first query.
        model[rows] = np.repeat(model[rows[first]], counts)
        busy[w] = int(service.sum())
        batches[w] = len(first)
    done = ~dropped
    duration = int(finish.max())
    service_of = np.where(done, finish - start, 0)
    accuracy = np.where(model == 1, 0.9, 0.7).astype(np.float32)
    columns = {
        "id": np.arange(n, dtype=np.int64),
        "app": (np.arange(n) % len(apps)).astype(np.int16),
        "size": np.ones(n, np.int32),
        "arrival_ns": arrival,
        "deadline_ns": arrival + round(slo_ms * MS),
        "dispatch_ns": np.where(done, arrival, -1),
        "start_ns": start,
        "finish_ns": finish,
        "worker": worker,
        "model": model,
        "batch_items": batch_items,
        "batch_queries": batch_queries,
        "status": dropped.astype(np.int8),
        "drop_reason": np.where(dropped, 0, -1).astype(np.int8),
        "accuracy": np.where(done, accuracy, np.nan).astype(np.float32),
        "cost": (service_of / np.maximum(batch_queries, 1) / S * PRICE_PER_H / 3600).astype(
            np.float32
        ),
    }
    meta = {
        "world": "sim",
        "scheduler": f"fifo(workers={workers})",
        "seed": seed,
        "duration_ns": duration,
        "apps": [{"name": a, "slo_ns": round(slo_ms * MS)} for a in apps],
        "models": ["small", "large"],
        "hardware": ["cpu", "gpu"],
        "drop_reasons": DROP_REASONS,
        "scenario": None,
    }
    return Result(
        columns,
        {
            "worker": np.arange(workers, dtype=np.int32),
            "hardware": (np.arange(workers) % 2).astype(np.int16),
            "busy_ns": busy,
            "active_ns": np.full(workers, duration, np.int64),
            "cost": np.full(workers, duration / S * PRICE_PER_H / 3600),
            "batches": batches,
        },
        meta,
    )


# ---- an M/M/1-formula run for allowable-throughput searches ---------------------------------

SERVICE_RATE = 100.0  # queries per second


def mm1_threshold(target_ms: float, percentile: float = 99.0, service_rate=SERVICE_RATE) -> float:
    """The largest rate at which an M/M/1 queue's sojourn-time percentile is <= target_ms:
    the sojourn time is exponential with rate mu - lambda, so its p-quantile is
    -ln(1 - p) / (mu - lambda)."""
    return service_rate - (-math.log(1 - percentile / 100.0)) / (target_ms / 1000.0)


def mm1_p99_run(rate: float, seed: int) -> Result:
    """Every query takes exactly the M/M/1 p99 sojourn time at ``rate``, so "p99 <= target" holds
    exactly below :func:`mm1_threshold` (for seed 0; seed s lowers mu by s/10)."""
    mu = SERVICE_RATE - seed / 10.0
    arrival = (np.arange(200) * (S / rate)).astype(np.int64)
    if rate >= mu:
        return make_result(arrival, arrival + MS, status=np.ones(200, np.int8))
    latency_ns = round(math.log(100.0) / (mu - rate) * S)
    return make_result(arrival, arrival + latency_ns, slo_ms=1e9)


# ---- sweep functions (module level, so worker processes can import them) --------------------


def square_point(x, y=0):
    return {"square": x * x, "y_plus": y + 1, "pid": os.getpid()}


def fifo_point(rate_qps, workers):
    return fifo_result(n=2000, rate_qps=rate_qps, service_ms=5.0, workers=workers, seed=1)


def failing_point(x):
    if x == 3:
        raise ZeroDivisionError(f"x={x} is unlucky")
    return {"ok": True}


def shifted_point(x):
    return {"x": x + 1}  # clashes with its own parameter
