"""The one table of a run's query metrics: the keys of ``Result.summary()`` (and of each
application's in ``summary(by="app")``) and how they are made from the run's counts and
statistics. Both ways of computing those inputs fill it: from every record (numpy, exact) in
``results.py`` and from the online accumulators of a streamed run in ``_streamed.py``; a metric
added here is a metric of both."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: The latency percentiles every summary reports (numpy's linear interpolation on records).
LATENCY_PERCENTILES = (50, 90, 95, 99)


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def query_summary(
    *,
    queries: int,
    completed: int,
    met: int,
    dropped_by_reason: Mapping[str, int],
    duration_s: float,
    measured_s: float,
    latency_ms: Mapping[str, float | None],
    queue_ms: Mapping[str, float | None],
    service_ms: Mapping[str, float | None],
    accuracy_mean: float | None,
    accuracy_per_satisfied_query: float | None,
    batch_cost_dollars: float,
) -> dict[str, Any]:
    """The query metrics of one group of queries. ``latency_ms`` holds mean, p50, p90, p95, p99
    and max; ``queue_ms`` and ``service_ms`` mean, p50 and p99 (None where no query completed)."""
    rate = 1.0 / measured_s if measured_s > 0 else math.nan
    return {
        "queries": queries,
        "completed": completed,
        "dropped": queries - completed,
        "dropped_by_reason": dict(dropped_by_reason),
        "duration_s": duration_s,
        "measured_s": measured_s,
        "throughput_qps": _finite(completed * rate),
        "goodput_qps": _finite(met * rate),
        "slo_violation_rate": (queries - met) / queries if queries else None,
        "latency_ms": {
            "mean": latency_ms["mean"],
            **{f"p{q}": latency_ms[f"p{q}"] for q in LATENCY_PERCENTILES},
            "max": latency_ms["max"],
        },
        "queue_ms": {k: queue_ms[k] for k in ("mean", "p50", "p99")},
        "service_ms": {k: service_ms[k] for k in ("mean", "p50", "p99")},
        "accuracy_mean": accuracy_mean,
        "accuracy_per_satisfied_query": accuracy_per_satisfied_query,
        "batch_cost_dollars": batch_cost_dollars,
    }
