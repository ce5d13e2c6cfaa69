"""The metrics of a streamed run (``records="none"`` or ``"sample(p)"``), in the shapes of
:meth:`Result.summary` and :meth:`Result.timeseries`, from the online accumulators the simulator
returns (counts and sums exact, percentiles from a relative-error quantile sketch)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._summary import LATENCY_PERCENTILES, query_summary

NS_PER_MS = 1_000_000

#: Summary keys (dotted) whose streamed value is an estimate: the sketch's percentiles, within
#: ``relative_error`` of numpy's linear-interpolation percentile. Every other key is exact, up to
#: floating-point summation order in means and sums.
APPROXIMATE_KEYS = (
    "latency_ms.p50",
    "latency_ms.p90",
    "latency_ms.p95",
    "latency_ms.p99",
    "queue_ms.p50",
    "queue_ms.p99",
    "service_ms.p50",
    "service_ms.p99",
)


def _ms(ns: float) -> float | None:
    return None if math.isnan(ns) else ns / NS_PER_MS


def _mean(pair: Sequence[Any]) -> float | None:
    total, n = pair
    return total / n if n else None


def query_metrics(
    g: Mapping[str, Any], drop_reasons: list[str], duration_s: float
) -> dict[str, Any]:
    """Result._query_metrics' dict for one streamed group (no warm-up: the whole run)."""
    n, n_done, n_met = g["queries"], g["completed"], g["met"]
    drops = list(g["drops"]) + [0] * (len(drop_reasons) + 1 - len(g["drops"]))
    by_reason = {name: int(k) for name, k in zip(drop_reasons, drops[1:], strict=True)}
    if drops[0]:
        by_reason["unspecified"] = int(drops[0])
    lq, qq, sq = g["latency_q_ns"], g["queue_q_ns"], g["service_q_ns"]
    return query_summary(
        queries=n,
        completed=n_done,
        met=n_met,
        dropped_by_reason=by_reason,
        duration_s=duration_s,
        measured_s=duration_s,
        latency_ms={
            "mean": g["latency_mean_ns"] / NS_PER_MS if n_done else None,
            **{f"p{q}": _ms(lq[q]) for q in LATENCY_PERCENTILES},
            "max": g["latency_max_ns"] / NS_PER_MS if n_done else None,
        },
        queue_ms={
            "mean": g["queue_mean_ns"] / NS_PER_MS if n_done else None,
            "p50": _ms(qq[0]),
            "p99": _ms(qq[1]),
        },
        service_ms={
            "mean": g["service_mean_ns"] / NS_PER_MS if n_done else None,
            "p50": _ms(sq[0]),
            "p99": _ms(sq[1]),
        },
        accuracy_mean=_mean(g["accuracy_done"]),
        accuracy_per_satisfied_query=_mean(g["accuracy_met"]),
        batch_cost_dollars=float(g["cost"]),
    )


def timeseries(streamed: Mapping[str, Any], duration_ns: int, window_s: float) -> pd.DataFrame:
    """Result.timeseries' frame from the streamed windows (only at the run's window)."""
    window_ns = streamed["window_ns"]
    if round(window_s * 1e9) != window_ns:
        raise ValueError(
            f"window_s={window_s!r}: a records={streamed['records']!r} run keeps its time series "
            f"in windows of {window_ns / 1e9:g} s only"
        )
    end_ns = max(duration_ns, streamed["max_arrival_ns"] + 1, streamed["max_finish_ns"] + 1)
    n_bins = max(1, -(-end_ns // window_ns))
    w = streamed["windows"]

    def col(name: str, fill: float = 0) -> np.ndarray:
        a = np.asarray(w[name])
        out = np.full(n_bins, fill, dtype=np.float64 if fill != 0 else a.dtype)
        out[: len(a)] = a[:n_bins]
        return out

    arrivals, completed, met = col("arrivals"), col("completed"), col("met")
    acc_sum, acc_n = col("accuracy_sum"), col("accuracy_n")
    with np.errstate(invalid="ignore", divide="ignore"):
        return pd.DataFrame(
            {
                "arrivals": arrivals,
                "arrival_rate_qps": arrivals / window_s,
                "completed": completed,
                "dropped": arrivals - completed,
                "throughput_qps": col("finished") / window_s,
                "goodput_qps": col("finished_met") / window_s,
                "latency_p50_ms": col("latency_p50_ns", np.nan) / NS_PER_MS,
                "latency_p99_ms": col("latency_p99_ns", np.nan) / NS_PER_MS,
                "violation_rate": np.where(arrivals > 0, 1.0 - met / arrivals, np.nan),
                "accuracy_mean": np.where(acc_n > 0, acc_sum / acc_n, np.nan),
            },
            index=pd.Index(np.arange(n_bins) * window_s, name="time_s"),
        )
