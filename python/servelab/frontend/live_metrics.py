"""The front-end's live Prometheus metrics, served at ``/metrics``: counted as requests are
answered, under Triton's names where the concept is the same and the names
``servelab.metrics.exposition`` writes for a finished run (label ``model`` = the application,
``version="1"``).

Per model: ``nv_inference_request_success`` / ``_failure`` (answered with outputs / dropped by the
session or refused after the model was named), ``nv_inference_count`` (items of successful
requests), ``nv_inference_exec_count`` (batches that ran its queries, counted once per batch),
the cumulative microseconds ``nv_inference_request_duration_us`` (the front-end's own time, body
read to answer), ``nv_inference_queue_duration_us`` (arrival to its batch's start, session clock)
and ``nv_inference_compute_infer_duration_us`` (batch start to finish), and
``servelab_slo_violations`` (late or dropped). Gauges: ``nv_inference_pending_request_count`` and
``servelab_queue_length`` (accepted, not answered yet: queued or running),
``servelab_worker_utilisation`` (per worker: busy share of the time since the front-end started,
from the batches its answered queries ran in). The front-end's own: ``servelab_frontend_refused``
(by reason: invalid, not_found, too_large, overloaded, timeout, unauthenticated, disconnected,
...) and ``servelab_frontend_inflight``.

Another engine's counters join them through `LiveMetrics.add_source` (the C++ HTTP engine's, read
when the text or statistics are written), so that one scrape covers every engine.

The text is written here, as ``servelab.metrics`` writes it: Prometheus's Python client appends
``_total`` to counter names, which Triton's names do not have.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from ..metrics import FAMILIES, family_lines

# The finished run's per-model counters that the front-end counts live too.
_PER_MODEL = (
    "nv_inference_request_success",
    "nv_inference_request_failure",
    "nv_inference_count",
    "nv_inference_exec_count",
    "nv_inference_request_duration_us",
    "nv_inference_queue_duration_us",
    "nv_inference_compute_infer_duration_us",
    "servelab_slo_violations",
)

VERSION = "1"
Values = dict[str, dict[str, float]]  # family -> model -> value

# (name, type, help), in the order written: the per-model families a finished run writes
# (servelab.metrics.FAMILIES), then the front-end's gauge of requests not answered yet. Its
# servelab_queue_length counts the accepted requests not answered yet (queued or running): the
# front-end does not see a batch start.
_MODEL_FAMILIES = (
    *((name, kind, doc) for name, (kind, doc) in FAMILIES.items() if name in _PER_MODEL),
    (
        "nv_inference_pending_request_count",
        "gauge",
        "Requests accepted and not answered yet (queued or running)",
    ),
    (
        "servelab_queue_length",
        "gauge",
        "Requests accepted and not answered yet (queued or running)",
    ),
)


class LiveMetrics:
    """Thread-safe counters: outcomes arrive on the session's thread, refusals on the server's."""

    def __init__(self, models: list[str]) -> None:
        self._lock = threading.Lock()
        self._models = list(models)
        self._t0 = time.perf_counter()
        self._values: dict[str, dict[str, float]] = {
            name: dict.fromkeys(self._models, 0.0) for name, _, _ in _MODEL_FAMILIES
        }
        self._refused: dict[str, float] = defaultdict(float)
        self._inflight = 0
        # Per worker: busy seconds and the last batch seen (start, finish), so that the queries of
        # one batch count its time once.
        self._busy: dict[int, float] = defaultdict(float)
        self._last_batch: dict[int, tuple[float, float]] = {}
        self._last_ms: dict[str, int] = {}  # per model: when its last outcome came, ms since epoch
        # Other engines' counters (see add_source), read when written out.
        self._sources: list[Callable[[], dict[str, Any]]] = []

    def add_source(self, counters: Callable[[], dict[str, Any]]) -> None:
        """Adds another engine's counters to every value written: ``counters()`` returns
        ``{"values": {family: [per model, in this object's model order]}, "refused": {reason: n},
        "inflight": n, "busy_s": {worker: seconds}, "last_inference_ms": [per model]}`` (what the
        C++ HTTP engine's ``counters()`` returns)."""
        with self._lock:
            self._sources.append(counters)

    def _merged(self) -> tuple[Values, dict[str, float], int, dict[int, float], dict[str, int]]:
        """Values, refusals, in flight, busy seconds and last outcomes, with the other engines'
        added. Call with the lock held."""
        values = {name: dict(per_model) for name, per_model in self._values.items()}
        refused = dict(self._refused)
        inflight = self._inflight
        busy = dict(self._busy)
        last = dict(self._last_ms)
        for source in self._sources:
            c = source()
            for name, per_model in c["values"].items():
                for model, value in zip(self._models, per_model, strict=True):
                    values[name][model] += value
            for reason, n in c["refused"].items():
                refused[reason] = refused.get(reason, 0.0) + n
            inflight += int(c["inflight"])
            for worker, seconds in c["busy_s"].items():
                busy[int(worker)] = busy.get(int(worker), 0.0) + seconds
            for model, ms in zip(self._models, c["last_inference_ms"], strict=True):
                if ms:
                    last[model] = max(last.get(model, 0), int(ms))
        return values, refused, inflight, busy, last

    def accepted(self, model: str) -> None:
        with self._lock:
            self._inflight += 1
            self._values["nv_inference_pending_request_count"][model] += 1
            self._values["servelab_queue_length"][model] += 1

    def answered(self, model: str, outcome: Any, wall_s: float, items: int) -> None:
        """An accepted request's outcome arrived (``wall_s``: receipt to outcome, front-end's)."""
        with self._lock:
            v = self._values
            self._inflight -= 1
            v["nv_inference_pending_request_count"][model] -= 1
            v["servelab_queue_length"][model] -= 1
            completed = outcome.status == "completed"
            self._last_ms[model] = int(time.time() * 1e3)
            if completed:
                v["nv_inference_request_success"][model] += 1
                v["nv_inference_count"][model] += items
                v["nv_inference_request_duration_us"][model] += wall_s * 1e6
                start, finish = float(outcome.start_s), float(outcome.finish_s)
                v["nv_inference_queue_duration_us"][model] += (start - outcome.arrival_s) * 1e6
                v["nv_inference_compute_infer_duration_us"][model] += (finish - start) * 1e6
                worker = int(outcome.worker)
                if self._last_batch.get(worker) != (start, finish):
                    self._last_batch[worker] = (start, finish)
                    self._busy[worker] += max(finish - start, 0.0)
                    v["nv_inference_exec_count"][model] += 1
            else:
                v["nv_inference_request_failure"][model] += 1
            if not completed or outcome.late:
                v["servelab_slo_violations"][model] += 1

    def statistics(self, model: str) -> dict[str, Any]:
        """``model``'s counters as Triton's statistics extension reports them (one entry of
        ``model_stats``): counts and cumulative nanoseconds of successes (the front-end's time),
        failures (no time kept: 0), queueing and compute (the session's clock)."""
        with self._lock:
            values, _, _, _, last_ms = self._merged()
            v = {name: per_model[model] for name, per_model in values.items()}
            last = last_ms.get(model, 0)
        done = int(v["nv_inference_request_success"])

        def duration(count: float, us: float) -> dict[str, int]:
            return {"count": int(count), "ns": int(round(us * 1e3))}

        return {
            "name": model,
            "version": VERSION,
            "last_inference": last,
            "inference_count": int(v["nv_inference_count"]),
            "execution_count": int(v["nv_inference_exec_count"]),
            "inference_stats": {
                "success": duration(done, v["nv_inference_request_duration_us"]),
                "fail": duration(v["nv_inference_request_failure"], 0.0),
                "queue": duration(done, v["nv_inference_queue_duration_us"]),
                "compute_input": duration(0, 0.0),
                "compute_infer": duration(done, v["nv_inference_compute_infer_duration_us"]),
                "compute_output": duration(0, 0.0),
                "cache_hit": duration(0, 0.0),
                "cache_miss": duration(0, 0.0),
            },
            "batch_stats": [],
        }

    def lost(self, model: str) -> None:
        """An accepted request whose session future failed instead of giving an outcome."""
        with self._lock:
            self._inflight -= 1
            self._values["nv_inference_pending_request_count"][model] -= 1
            self._values["servelab_queue_length"][model] -= 1
            self._values["nv_inference_request_failure"][model] += 1
            self._refused["internal"] += 1

    def refused(self, reason: str, model: str | None = None) -> None:
        """A request refused before it reached the session; counted as a failure of ``model``
        when it named a known one."""
        with self._lock:
            self._refused[reason] += 1
            if model in self._values["nv_inference_request_failure"]:
                self._values["nv_inference_request_failure"][model] += 1

    def value(self, name: str, model: str) -> float:
        with self._lock:
            return self._merged()[0][name][model]

    def text(self) -> str:
        """Everything in the Prometheus text format."""
        with self._lock:
            values, refused, inflight, busy, _ = self._merged()
            elapsed = time.perf_counter() - self._t0
            lines = []
            per_model = {"version": VERSION}
            for name, kind, doc in _MODEL_FAMILIES:
                samples = [({"model": m, **per_model}, values[name][m]) for m in self._models]
                lines += family_lines(name, kind, doc, samples)
            lines += family_lines(
                "servelab_worker_utilisation",
                "gauge",
                "Share of the time since the front-end started spent running batches",
                [
                    ({"worker": str(w)}, min(busy[w] / elapsed, 1.0) if elapsed > 0 else 0.0)
                    for w in sorted(busy)
                ],
            )
            lines += family_lines(
                "servelab_frontend_refused",
                "counter",
                "Requests refused by the front-end, by reason",
                [({"reason": r}, refused[r]) for r in sorted(refused)],
            )
            lines += family_lines(
                "servelab_frontend_inflight",
                "gauge",
                "Requests accepted and not answered yet, all models",
                [({}, inflight)],
            )
        return "\n".join(lines) + "\n"
