"""A run's metrics in the Prometheus text format, under Triton's names where the concept is the
same, so that one dashboard reads a simulated run, a served one and a Triton server alike::

    text = servelab.metrics.exposition(result)            # at the end of the run
    text = servelab.metrics.exposition(result, at_s=30)   # as a scrape at 30 s would have seen it

The applications are the models (label ``model``, ``version="1"`` as Triton's default).
Counters count what had ended by ``at_s``: Triton's ``nv_inference_request_success`` and
``nv_inference_request_failure`` (completed and dropped queries), ``nv_inference_count``
(items inferred), ``nv_inference_exec_count`` (batches run), and the cumulative microseconds
``nv_inference_request_duration_us`` (arrival to finish), ``nv_inference_queue_duration_us``
(arrival to its batch's start) and ``nv_inference_compute_infer_duration_us`` (its batch's start
to finish), summed over completed queries as Triton sums them over requests. servelab's own:
``servelab_slo_violations`` (queries that ended late or dropped), and the gauges
``servelab_queue_length`` (queries arrived and not yet started at ``at_s``) and
``servelab_worker_utilisation`` (busy share of each worker's time so far).

The text is written here (Prometheus's own Python client appends ``_total`` to every counter,
which Triton's names do not have); the tests read it back with that client's parser.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .results import COMPLETED

__all__ = ["exposition"]

VERSION = "1"

# Every metric family a finished run writes, simulated or served, in the order written: name ->
# (type, help). The front-end's live metrics (servelab.frontend.live_metrics) use the same table.
FAMILIES: dict[str, tuple[str, str]] = {
    "nv_inference_request_success": (
        "counter",
        "Number of successful inference requests, all batch sizes",
    ),
    "nv_inference_request_failure": (
        "counter",
        "Number of failed inference requests, all batch sizes",
    ),
    "nv_inference_count": (
        "counter",
        "Number of inferences performed (items of completed requests)",
    ),
    "nv_inference_exec_count": (
        "counter",
        "Number of model executions performed (batches)",
    ),
    "nv_inference_request_duration_us": (
        "counter",
        "Cumulative request duration in microseconds",
    ),
    "nv_inference_queue_duration_us": (
        "counter",
        "Cumulative queue duration in microseconds",
    ),
    "nv_inference_compute_infer_duration_us": (
        "counter",
        "Cumulative compute inference duration in microseconds",
    ),
    "servelab_slo_violations": (
        "counter",
        "Requests that finished after their deadline or were dropped",
    ),
    "servelab_queue_length": (
        "gauge",
        "Requests arrived and not yet started",
    ),
    "servelab_worker_utilisation": (
        "gauge",
        "Share of the worker's time so far spent running batches",
    ),
}


def _label(value: Any) -> str:
    text = str(value)
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


def family_lines(
    name: str, kind: str, doc: str, samples: list[tuple[dict[str, str], float]]
) -> list[str]:
    """One family in the text format: its HELP and TYPE lines, then a line per (labels, value)."""
    lines = [f"# HELP {name} {doc}", f"# TYPE {name} {kind}"]
    for labels, value in samples:
        text = ",".join(f'{k}="{_label(v)}"' for k, v in labels.items())
        lines.append(f"{name}{{{text}}} {_number(value)}" if text else f"{name} {_number(value)}")
    return lines


def exposition(result: Any, *, at_s: float | None = None) -> str:
    """The run's metrics at ``at_s`` seconds into it (default: its end) in the Prometheus text
    format (see the module's docstring). ValueError for an ``at_s`` that is not a finite number
    >= 0, or a streamed run (its per-query records are not kept)."""
    if result.streamed is not None:
        raise ValueError(
            "exposition: a streamed run (records='none' or 'sample(p)') keeps no per-query "
            "records to count; run with records='all'"
        )
    end_ns = int(result.meta["duration_ns"])
    if at_s is None:
        at_ns = end_ns
    else:
        if isinstance(at_s, bool) or not isinstance(at_s, int | float | np.number):
            raise ValueError(f"at_s={at_s!r} must be a number of seconds >= 0")
        if not (math.isfinite(at_s) and at_s >= 0):
            raise ValueError(f"at_s={at_s!r} must be a finite number of seconds >= 0")
        at_ns = round(at_s * 1e9)
    c = result.columns
    apps = [a["name"] for a in result.meta["apps"]]
    ended = (c["finish_ns"] >= 0) & (c["finish_ns"] <= at_ns)
    done = ended & (c["status"] == COMPLETED)
    failed = ended & (c["status"] != COMPLETED)
    late = done & (c["finish_ns"] > c["deadline_ns"])
    arrived = c["arrival_ns"] <= at_ns
    started = (c["start_ns"] >= 0) & (c["start_ns"] <= at_ns)
    waiting = arrived & ~started & ~failed
    app = c["app"].astype(np.int64)
    n = len(apps)

    def per_app(mask: Any, weights: Any = None) -> Any:
        w = None if weights is None else np.asarray(weights, dtype=np.float64)[mask]
        return np.bincount(app[mask], weights=w, minlength=n)

    batches = result.batches()
    batch_done = (batches["finish_ns"] <= at_ns).to_numpy()
    first_query_app = _batch_apps(result, batches)
    values: dict[str, list[tuple[dict[str, str], float]]] = {}
    us = 1e-3
    model_rows = {
        "nv_inference_request_success": per_app(done),
        "nv_inference_request_failure": per_app(failed),
        "nv_inference_count": per_app(done, c["size"]),
        "nv_inference_exec_count": np.bincount(first_query_app[batch_done], minlength=n),
        "nv_inference_request_duration_us": per_app(done, (c["finish_ns"] - c["arrival_ns"]) * us),
        "nv_inference_queue_duration_us": per_app(done, (c["start_ns"] - c["arrival_ns"]) * us),
        "nv_inference_compute_infer_duration_us": per_app(
            done, (c["finish_ns"] - c["start_ns"]) * us
        ),
        "servelab_slo_violations": per_app(late | failed),
        "servelab_queue_length": per_app(waiting),
    }
    for name, row in model_rows.items():
        values[name] = [({"model": apps[a], "version": VERSION}, float(row[a])) for a in range(n)]
    w = result.workers
    hardware = result.hardware_names
    start = batches["start_ns"].to_numpy()
    finish = np.minimum(batches["finish_ns"].to_numpy(), at_ns)
    busy = np.bincount(
        batches["worker"].to_numpy(),
        weights=np.maximum(finish - start, 0).astype(np.float64),
        minlength=len(w["worker"]),
    )
    active = np.minimum(w["active_ns"].astype(np.float64), float(at_ns))
    values["servelab_worker_utilisation"] = [
        (
            {"worker": str(int(k)), "hardware": hardware[int(w["hardware"][k])]},
            float(busy[k] / active[k]) if active[k] > 0 else 0.0,
        )
        for k in range(len(w["worker"]))
    ]
    lines = []
    for name, (kind, doc) in FAMILIES.items():
        lines += family_lines(name, kind, doc, values[name])
    return "\n".join(lines) + "\n"


def _batch_apps(result: Any, batches: Any) -> Any:
    """The application of each row of ``batches`` (``result.batches()``): its first query's, grouped
    the same way (completed queries by worker, then start)."""
    c = result.columns
    done = np.flatnonzero(c["status"] == COMPLETED)
    worker, start = c["worker"][done].astype(np.int64), c["start_ns"][done]
    order = np.lexsort((start, worker))
    worker, start = worker[order], start[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (worker[1:] != worker[:-1]) | (start[1:] != start[:-1])
    apps = c["app"][done][order][first].astype(np.int64)
    assert len(apps) == len(batches)
    return apps
