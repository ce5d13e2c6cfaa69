"""Results: the per-query records of a run, and every metric computed from them.

The simulator and the real serving loop both return a :class:`Result`, so "simulated vs measured"
is one subtraction (``sim.compare(real)``). A Result holds three things:

- ``columns``: one entry per query, in query-id order (every generated query appears exactly
  once): ``id``, ``app``, ``size``, ``arrival_ns``, ``deadline_ns``, ``dispatch_ns``, ``start_ns``,
  ``finish_ns``, ``worker``, ``model``, ``batch_items``, ``batch_queries``, ``status`` (0 completed,
  1 dropped), ``drop_reason``, ``accuracy`` and ``cost`` (this query's $ share of its batch).
  A dropped query has ``dispatch_ns = start_ns = -1``, ``worker = model = -1`` and
  ``finish_ns`` = when it was dropped.
- ``workers``: one entry per worker: ``worker``, ``hardware``, ``busy_ns``, ``active_ns``,
  ``cost`` ($ accrued over ``active_ns``) and ``batches``.
- ``meta``: ``world`` ("sim" or "serve"), ``scheduler``, ``seed``, ``duration_ns``, ``apps``
  (``[{"name", "slo_ns"}]``), ``models``, ``hardware``, ``drop_reasons`` and ``scenario``.

The arrays may be zero-copy views of C++ memory; a Result keeps read-only views of them and never
writes to them. Summaries are always computed from the records (vectorised numpy: a summary of a
million queries takes well under a second), never stored separately::

    res.summary(warmup_s=5)["latency_ms"]["p99"]
    res.summary(by="app")["resnet"]["slo_violation_rate"]
    res.timeseries(window_s=1.0)            # a DataFrame per window of arrival time
    res.to_pandas()                         # records + latency_ms, met_deadline, names
    sim.compare(real)["throughput_qps"]["diff"]

A simulated run with ``records="none"`` or ``"sample(p)"`` keeps online summaries instead
(``streamed``): ``summary()`` (same keys; the percentiles in ``streamed["approximate"]`` are within
``streamed["relative_error"]`` of the full-records value, everything else exact) and
``timeseries()`` at the run's window come from them. ``columns`` then holds the sampled queries'
records (``"sample(p)"``) or raises ValueError (``"none"``).
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import _streamed
from ._summary import LATENCY_PERCENTILES, query_summary

NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000

#: Values of the ``status`` column.
COMPLETED = 0
DROPPED = 1

# Required columns and the dtype kinds they accept ("iu": integers, "f": floats).
QUERY_COLUMNS: dict[str, str] = {
    "id": "iu",
    "app": "iu",
    "size": "iu",
    "arrival_ns": "iu",
    "deadline_ns": "iu",
    "dispatch_ns": "iu",
    "start_ns": "iu",
    "finish_ns": "iu",
    "worker": "iu",
    "model": "iu",
    "batch_items": "iu",
    "batch_queries": "iu",
    "status": "iu",
    "drop_reason": "iu",
    "accuracy": "f",
    "cost": "f",
}
WORKER_COLUMNS: dict[str, str] = {
    "worker": "iu",
    "hardware": "iu",
    "busy_ns": "iu",
    "active_ns": "iu",
    "cost": "f",
    "batches": "iu",
}
META_KEYS = ("world", "scheduler", "seed", "duration_ns", "apps", "models", "hardware")
WORLDS = ("sim", "serve")
# timeseries() refuses a window that cuts the run into more rows than this (a typo such as
# window_s=1e-9 would otherwise ask for tens of GB).
MAX_TIMESERIES_WINDOWS = 1_000_000

# The summary metrics compare() subtracts (dotted paths into summary()).
COMPARED_METRICS = (
    "queries",
    "completed",
    "dropped",
    "throughput_qps",
    "goodput_qps",
    "slo_violation_rate",
    "latency_ms.mean",
    "latency_ms.p50",
    "latency_ms.p90",
    "latency_ms.p99",
    "latency_ms.max",
    "queue_ms.mean",
    "service_ms.mean",
    "accuracy_mean",
    "accuracy_per_satisfied_query",
    "cost_dollars",
    "cost_per_1k_queries",
    "utilisation.mean",
)


def _number(x: Any) -> float | None:
    """A plain float for JSON, or None where the metric is undefined (NaN: nothing to average)."""
    x = float(x)
    return None if math.isnan(x) else x


def _readonly(table: str, name: str, value: Any, kinds: str | None) -> np.ndarray:
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(f"{table}[{name!r}] must be 1-D, got shape {arr.shape}")
    if kinds is not None and arr.dtype.kind not in kinds:
        expected = "a floating-point" if kinds == "f" else "an integer"
        raise ValueError(f"{table}[{name!r}] has dtype {arr.dtype}; expected {expected} dtype")
    view = arr.view()  # our own view: marking it read-only leaves the caller's array alone
    view.flags.writeable = False
    return view


def _table(table: str, data: Any, required: Mapping[str, str]) -> tuple[dict[str, np.ndarray], int]:
    if not isinstance(data, Mapping):
        raise ValueError(f"{table} must be a dict of arrays, got {type(data).__name__}")
    for name in required:
        if name not in data:
            raise ValueError(f"{table} is missing the required column {name!r}")
    out = {name: _readonly(table, name, v, required.get(name)) for name, v in data.items()}
    first = next(iter(required))
    n = len(out[first])
    for name, arr in out.items():
        if len(arr) != n:
            raise ValueError(
                f"{table}[{name!r}] has {len(arr)} entries but {table}[{first!r}] has {n}"
            )
    return out, n


def _check_range(table: str, name: str, arr: np.ndarray, lo: int, hi: int, what: str) -> None:
    """Raises naming the first entry of arr outside [lo, hi)."""
    if arr.size == 0 or (arr.min() >= lo and arr.max() < hi):
        return
    i = int(np.flatnonzero((arr < lo) | (arr >= hi))[0])
    raise ValueError(f"{table}[{name!r}][{i}]={arr[i]} is outside {lo}..{hi - 1} ({what})")


def _names(meta: Mapping[str, Any], key: str) -> list[str]:
    values = meta[key]
    if isinstance(values, str) or not hasattr(values, "__len__"):
        raise ValueError(f"meta[{key!r}]={values!r} must be a list")
    names = []
    for i, v in enumerate(values):
        name = v.get("name") if isinstance(v, Mapping) else v
        if not isinstance(name, str):
            raise ValueError(f"meta[{key!r}][{i}]={v!r} has no string name")
        names.append(name)
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise ValueError(f"meta[{key!r}] names {dup!r} more than once")
    return names


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"a": {"b": 1}} -> {"a.b": 1}, the pandas.json_normalize convention."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _percentiles(values: np.ndarray, qs: tuple[float, ...]) -> list[float | None]:
    if values.size == 0:
        return [None] * len(qs)
    return [float(v) for v in np.percentile(values, qs)]


def _group_percentiles(
    groups: np.ndarray, values_ns: np.ndarray, n_groups: int, q: float
) -> np.ndarray:
    """numpy's linear-interpolation percentile of int64 values within each group, all groups at
    once (as float64; NaN for an empty group)."""
    out = np.full(n_groups, np.nan)
    if values_ns.size == 0:
        return out
    lo_v, hi_v = int(values_ns.min()), int(values_ns.max())
    span = hi_v - lo_v + 1
    if n_groups * span < 2**62:  # one int64 sort key: group-major, value-minor (much faster)
        v = np.sort(groups.astype(np.int64) * span + (values_ns - lo_v)) % span + lo_v
    else:
        v = values_ns[np.lexsort((values_ns, groups))]
    v = v.astype(np.float64)
    counts = np.bincount(groups, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    some = counts > 0
    pos = q / 100.0 * (counts[some] - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.ceil(pos).astype(np.int64)
    a, b = v[starts[some] + lo], v[starts[some] + hi]
    out[some] = a + (b - a) * (pos - lo)
    return out


class Result:
    """The records of one run (simulated or served) and the metrics computed from them.

    Raises ValueError naming the column (or meta key) and the value when a required column is
    missing, has the wrong dtype or length, or holds an index outside its meta list.
    """

    def __init__(
        self,
        columns: Mapping[str, Any],
        workers: Mapping[str, Any],
        meta: Mapping[str, Any],
        streamed: Mapping[str, Any] | None = None,
    ) -> None:
        self._columns, self._n = _table("columns", columns, QUERY_COLUMNS)
        #: Online summaries of a streamed run (None when every record is kept).
        self.streamed = None if streamed is None else dict(streamed)
        if self.streamed is not None:
            self.streamed["approximate"] = list(_streamed.APPROXIMATE_KEYS)
            self._n = int(self.streamed["queries"])
        self.workers, n_workers = _table("workers", workers, WORKER_COLUMNS)
        if not isinstance(meta, Mapping):
            raise ValueError(f"meta must be a dict, got {type(meta).__name__}")
        for key in META_KEYS:
            if key not in meta:
                raise ValueError(f"meta is missing the required key {key!r}")
        self.meta = dict(meta)
        self.meta.setdefault("drop_reasons", [])
        self.meta.setdefault("scenario", None)
        if self.meta["world"] not in WORLDS:
            raise ValueError(f"meta['world']={self.meta['world']!r} must be 'sim' or 'serve'")
        duration = self.meta["duration_ns"]
        if (
            isinstance(duration, bool)
            or not isinstance(duration, (int, np.integer))
            or duration < 0
        ):
            raise ValueError(f"meta['duration_ns']={duration!r} must be an integer >= 0")
        self.meta["duration_ns"] = int(duration)
        self.app_names = _names(self.meta, "apps")
        self.model_names = _names(self.meta, "models")
        self.hardware_names = _names(self.meta, "hardware")
        self.drop_reason_names = _names(self.meta, "drop_reasons")

        c, w = self._columns, self.workers
        _check_range("columns", "status", c["status"], 0, 2, "0 completed, 1 dropped")
        _check_range(
            "columns", "app", c["app"], 0, len(self.app_names), "an index into meta['apps']"
        )
        _check_range("columns", "model", c["model"], -1, len(self.model_names), "meta['models']")
        _check_range(
            "columns",
            "drop_reason",
            c["drop_reason"],
            -1,
            len(self.drop_reason_names),
            "meta['drop_reasons']",
        )
        _check_range(
            "workers",
            "hardware",
            w["hardware"],
            0,
            len(self.hardware_names),
            "an index into meta['hardware']",
        )
        ids = w["worker"]
        _check_range("workers", "worker", ids, 0, np.iinfo(np.int64).max, "worker ids are >= 0")
        if len(np.unique(ids)) != n_workers:
            raise ValueError("workers['worker'] lists a worker id more than once")
        qw = c["worker"]
        if len(ids) and np.array_equal(ids, np.arange(len(ids))):
            # Workers numbered 0..n-1 (both worlds): a range check says it, without a lookup.
            ok = qw.size == 0 or (qw.min() >= -1 and qw.max() < len(ids))
            unknown = None if ok else (qw < -1) | (qw >= len(ids))
        else:
            unknown = (qw != -1) & (self._worker_rows(qw) < 0)
        if unknown is not None and unknown.any():
            i = int(np.flatnonzero(unknown)[0])
            raise ValueError(
                f"columns['worker'][{i}]={qw[i]} is neither -1 nor in workers['worker']"
            )

    @property
    def columns(self) -> dict[str, np.ndarray]:
        """The per-query records (for ``records="sample(p)"``: the sampled queries only)."""
        if self.streamed is not None and self.streamed["records"] == "none":
            raise ValueError(
                "records='none': this run kept no per-query records, only summaries "
                "(summary(), timeseries(), .streamed); rerun with records='all' or "
                "records='sample(p)' for per-query arrays"
            )
        return self._columns

    def _worker_rows(self, worker_ids: np.ndarray) -> np.ndarray:
        """The row of each worker id in the workers table, -1 where it is not there."""
        ids = self.workers["worker"].astype(np.int64)
        if np.array_equal(ids, np.arange(len(ids))):
            # Both worlds number workers 0..n-1: the row is the id, no search needed.
            q = worker_ids.astype(np.int64, copy=False)
            return np.where((q >= 0) & (q < len(ids)), q, -1)
        order = np.argsort(ids, kind="stable")
        sorted_ids = ids[order]
        q = worker_ids.astype(np.int64)
        pos = np.minimum(np.searchsorted(sorted_ids, q), max(len(ids) - 1, 0))
        if not len(ids):
            return np.full(len(q), -1, dtype=np.int64)
        return np.where(sorted_ids[pos] == q, order[pos], -1)

    # ---- basics -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        completed = self._completed()
        return (
            f"Result(world={self.meta['world']!r}, scheduler={self.meta['scheduler']!r}, "
            f"queries={self._n}, completed={completed}, workers={len(self.workers['worker'])}, "
            f"duration_s={self.duration_s:g})"
        )

    def _completed(self) -> int:
        if self.streamed is not None:
            return int(self.streamed["overall"]["completed"])
        return int(np.count_nonzero(self._columns["status"] == COMPLETED))

    @property
    def duration_s(self) -> float:
        """The end of the run (time of its last event), in seconds."""
        return self.meta["duration_ns"] / NS_PER_S

    def _warmup_ns(self, warmup_s: float) -> int:
        if not (isinstance(warmup_s, (int, float, np.number)) and math.isfinite(warmup_s)):
            raise ValueError(f"warmup_s={warmup_s!r} must be a finite number of seconds")
        if warmup_s < 0:
            raise ValueError(f"warmup_s={warmup_s!r} must be >= 0")
        if warmup_s > 0 and warmup_s >= self.duration_s:
            raise ValueError(
                f"warmup_s={warmup_s!r} must be < the run's duration_s={self.duration_s:g}"
            )
        return round(warmup_s * NS_PER_S)

    # ---- summaries --------------------------------------------------------------------------

    def summary(self, warmup_s: float = 0.0, by: str | None = None) -> dict[str, Any]:
        """The run's metrics as a JSON-serialisable dict (plain ints/floats; None = undefined).

        Queries arriving before ``warmup_s`` are left out of every query metric (counts, rates,
        latency, violations, accuracy); worker metrics (``cost_dollars``, ``utilisation``) cover
        the whole run, since busy and active times are kept per worker, not per query.

        - ``throughput_qps``: measured queries that completed, per second of the measured span
          (``duration_s - warmup_s``); ``goodput_qps``: those that met their deadline.
        - ``latency_ms``: finish - arrival over completed queries (mean, p50, p90, p95, p99 with
          numpy's linear interpolation, max); ``queue_ms`` = start - arrival and ``service_ms`` =
          finish - start likewise.
        - ``slo_violation_rate``: the fraction of ALL measured queries that did not finish by their
          deadline; a dropped query counts as a violation.
        - ``accuracy_mean``: mean model accuracy over completed queries (NaN accuracies ignored).
        - ``accuracy_per_satisfied_query``: mean model accuracy over the queries that met their
          deadline, as RAMSIS defines it (Jahanshahi et al., EuroSys'24, sec. 7.1: "the average
          profiled accuracy over all satisfied queries given the model selection decision of
          each query"). Late and dropped queries contribute nothing.
        - ``batch_cost_dollars``: the measured queries' shares of their batches' cost;
          ``cost_dollars``: what the workers accrued over the whole run (busy or idle);
          ``cost_per_1k_queries``: ``cost_dollars`` per thousand queries completed in the run.
        - ``utilisation``: busy / active time per worker (in ``workers`` order) and their mean.

        ``by="app"`` returns ``{app name: the query metrics of that app's queries}``.
        """
        warmup_ns = self._warmup_ns(warmup_s)
        if self.streamed is not None:
            return self._streamed_summary(warmup_ns, by)
        measured = self.columns["arrival_ns"] >= warmup_ns if warmup_ns > 0 else None
        span_s = self.duration_s - warmup_ns / NS_PER_S
        if by is None:
            out = self._query_metrics(measured, span_s)
            out["warmup_s"] = float(warmup_s)
            out["warmup_queries"] = self._n - out["queries"]
            out.update(self._worker_metrics())
            return out
        if by != "app":
            raise ValueError(f"by={by!r} must be None or 'app'")
        app = self.columns["app"]
        result = {}
        for code, name in enumerate(self.app_names):
            rows = app == code if measured is None else (app == code) & measured
            result[name] = self._query_metrics(rows, span_s)
        return result

    def _streamed_summary(self, warmup_ns: int, by: str | None) -> dict[str, Any]:
        st = self.streamed
        assert st is not None
        if warmup_ns > 0:
            raise ValueError(
                f"warmup_s={warmup_ns / NS_PER_S:g}: a records={st['records']!r} run summarises "
                "every query online, so its summary has no warm-up (use records='all')"
            )
        if by is None:
            out = _streamed.query_metrics(st["overall"], self.drop_reason_names, self.duration_s)
            out["warmup_s"] = 0.0
            out["warmup_queries"] = 0
            out.update(self._worker_metrics())
            return out
        if by != "app":
            raise ValueError(f"by={by!r} must be None or 'app'")
        return {
            name: _streamed.query_metrics(g, self.drop_reason_names, self.duration_s)
            for name, g in zip(self.app_names, st["apps"], strict=True)
        }

    def per_app_summary(self, warmup_s: float = 0.0) -> pd.DataFrame:
        """``summary(by="app")`` as a DataFrame: one row per app, flattened metric columns."""
        per_app = self.summary(warmup_s=warmup_s, by="app")
        rows = [_flatten(metrics) for metrics in per_app.values()]
        return pd.DataFrame(rows, index=pd.Index(list(per_app), name="app"))

    def _query_metrics(self, rows: np.ndarray | None, span_s: float) -> dict[str, Any]:
        c = self.columns

        def col(name: str) -> np.ndarray:
            return c[name] if rows is None else c[name][rows]

        arrival, finish, start = col("arrival_ns"), col("finish_ns"), col("start_ns")
        done = col("status") == COMPLETED
        met = done & (finish <= col("deadline_ns"))
        n, n_done, n_met = len(arrival), int(np.count_nonzero(done)), int(np.count_nonzero(met))
        arrival_done = arrival[done]
        latency = (finish[done] - arrival_done) / NS_PER_MS
        queue = (start[done] - arrival_done) / NS_PER_MS
        service = (finish[done] - start[done]) / NS_PER_MS

        reasons = col("drop_reason")[~done].astype(np.int64) + 1  # -1 (unspecified) -> bin 0
        counts = np.bincount(reasons, minlength=len(self.drop_reason_names) + 1)
        by_reason = {
            name: int(k) for name, k in zip(self.drop_reason_names, counts[1:], strict=True)
        }
        if counts[0]:
            by_reason["unspecified"] = int(counts[0])

        accuracy = col("accuracy")
        acc_done, acc_met = accuracy[done], accuracy[met]
        acc_done = acc_done[~np.isnan(acc_done)]
        acc_met = acc_met[~np.isnan(acc_met)]
        p = _percentiles(latency, LATENCY_PERCENTILES)
        q50, q99 = _percentiles(queue, (50, 99))
        s50, s99 = _percentiles(service, (50, 99))
        return query_summary(
            queries=n,
            completed=n_done,
            met=n_met,
            dropped_by_reason=by_reason,
            duration_s=self.duration_s,
            measured_s=span_s,
            latency_ms={
                "mean": _number(latency.mean()) if n_done else None,
                **{f"p{q}": v for q, v in zip(LATENCY_PERCENTILES, p, strict=True)},
                "max": float(latency.max()) if n_done else None,
            },
            queue_ms={"mean": _number(queue.mean()) if n_done else None, "p50": q50, "p99": q99},
            service_ms={
                "mean": _number(service.mean()) if n_done else None,
                "p50": s50,
                "p99": s99,
            },
            accuracy_mean=_number(acc_done.mean(dtype=np.float64)) if acc_done.size else None,
            accuracy_per_satisfied_query=(
                _number(acc_met.mean(dtype=np.float64)) if acc_met.size else None
            ),
            batch_cost_dollars=float(np.nansum(col("cost"), dtype=np.float64)),
        )

    def _worker_metrics(self) -> dict[str, Any]:
        w = self.workers
        cost = float(np.sum(w["cost"], dtype=np.float64))
        completed_all = self._completed()
        active = w["active_ns"].astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            util = np.where(active > 0, w["busy_ns"] / active, np.nan)
        return {
            "cost_dollars": cost,
            "cost_per_1k_queries": cost * 1000.0 / completed_all if completed_all else None,
            "workers": len(w["worker"]),
            "utilisation": {
                "mean": _number(np.nanmean(util)) if np.any(active > 0) else None,
                "per_worker": [_number(u) for u in util],
            },
        }

    def compare(self, other: Result, warmup_s: float = 0.0) -> dict[str, dict[str, Any]]:
        """Key summary metrics of self and other side by side: ``{metric: {"self", "other",
        "diff", "rel_diff"}}`` with diff = self - other and rel_diff = diff / |other| (None where
        either side is undefined or other is 0). Metric names are dotted summary paths, e.g.
        ``"latency_ms.p99"``. Typical use: ``simulated.compare(measured)``."""
        if not isinstance(other, Result):
            raise ValueError(f"other must be a Result, got {type(other).__name__}")
        mine = _flatten(self.summary(warmup_s=warmup_s))
        theirs = _flatten(other.summary(warmup_s=warmup_s))
        out = {}
        for key in COMPARED_METRICS:
            a, b = mine[key], theirs[key]
            diff = a - b if a is not None and b is not None else None
            rel = diff / abs(b) if diff is not None and b != 0 else None
            out[key] = {"self": a, "other": b, "diff": diff, "rel_diff": rel}
        return out

    # ---- timeseries -------------------------------------------------------------------------

    def timeseries(self, window_s: float = 1.0) -> pd.DataFrame:
        """Metrics per window of ``window_s`` seconds, indexed by the window start ``time_s``.

        Query metrics group queries by the window of their ARRIVAL: ``arrivals``,
        ``arrival_rate_qps``, ``completed`` and ``dropped`` (of those arrivals),
        ``latency_p50_ms`` / ``latency_p99_ms`` (completed ones), ``violation_rate`` (share of
        the arrivals that missed their deadline or were dropped; NaN in an empty window) and
        ``accuracy_mean``. ``throughput_qps`` and ``goodput_qps`` count completions by the window
        of their FINISH, per second, which is what a throughput plot over time shows.
        """
        if isinstance(window_s, bool) or not (
            isinstance(window_s, (int, float, np.number)) and math.isfinite(window_s)
        ):
            raise ValueError(f"window_s={window_s!r} must be a finite number of seconds")
        if window_s * NS_PER_S >= 2**63:  # int64 nanoseconds, as every time of a run
            raise ValueError(
                f"window_s={window_s!r} is beyond the longest time int64 nanoseconds can hold "
                f"({(2**63 - 1) / NS_PER_S:.3g} s)"
            )
        window_ns = round(window_s * NS_PER_S)
        if window_ns <= 0:
            raise ValueError(f"window_s={window_s!r} must be > 0")
        if self.streamed is not None:
            return _streamed.timeseries(self.streamed, self.meta["duration_ns"], window_s)
        c = self.columns
        arrival, finish = c["arrival_ns"], c["finish_ns"]
        end_ns = self.meta["duration_ns"]
        if self._n:
            end_ns = max(end_ns, int(arrival.max()) + 1, int(finish.max()) + 1)
        n_bins = max(1, -(-end_ns // window_ns))
        if n_bins > MAX_TIMESERIES_WINDOWS:
            least = end_ns / NS_PER_S / MAX_TIMESERIES_WINDOWS
            step = 10.0 ** (math.floor(math.log10(least)) - 2)  # rounded up to 3 digits
            raise ValueError(
                f"window_s={window_s!r} cuts the run's {end_ns / NS_PER_S:g} s into {n_bins} "
                f"windows, more than {MAX_TIMESERIES_WINDOWS}: choose window_s >= "
                f"{math.ceil(least / step) * step:.3g}"
            )
        bins = (arrival // window_ns).astype(np.int64)
        done = c["status"] == COMPLETED
        met = done & (finish <= c["deadline_ns"])

        arrivals = np.bincount(bins, minlength=n_bins)
        completed = np.bincount(bins[done], minlength=n_bins)
        n_met = np.bincount(bins[met], minlength=n_bins)
        finish_bins = (finish // window_ns).astype(np.int64)
        finished = np.bincount(finish_bins[done], minlength=n_bins)
        finished_met = np.bincount(finish_bins[met], minlength=n_bins)
        latency_ns = (finish[done] - arrival[done]).astype(np.int64)
        accuracy = c["accuracy"][done].astype(np.float64)
        known = ~np.isnan(accuracy)
        acc_sum = np.bincount(bins[done][known], weights=accuracy[known], minlength=n_bins)
        acc_n = np.bincount(bins[done][known], minlength=n_bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            frame = pd.DataFrame(
                {
                    "arrivals": arrivals,
                    "arrival_rate_qps": arrivals / window_s,
                    "completed": completed,
                    "dropped": arrivals - completed,
                    "throughput_qps": finished / window_s,
                    "goodput_qps": finished_met / window_s,
                    "latency_p50_ms": _group_percentiles(bins[done], latency_ns, n_bins, 50)
                    / NS_PER_MS,
                    "latency_p99_ms": _group_percentiles(bins[done], latency_ns, n_bins, 99)
                    / NS_PER_MS,
                    "violation_rate": np.where(arrivals > 0, 1.0 - n_met / arrivals, np.nan),
                    "accuracy_mean": np.where(acc_n > 0, acc_sum / acc_n, np.nan),
                },
                index=pd.Index(np.arange(n_bins) * window_s, name="time_s"),
            )
        return frame

    # ---- pandas -----------------------------------------------------------------------------

    def to_pandas(self, workers: bool = False) -> pd.DataFrame:
        """The records as a DataFrame (a copy), or the workers table with ``workers=True``.

        Adds ``arrival_s``, ``latency_ms`` = finish - arrival, ``queue_ms`` = start - arrival and
        ``service_ms`` = finish - start (NaN unless completed) and ``met_deadline`` (completed by
        the deadline); ``app``, ``model``, ``hardware`` (of the worker) and ``drop_reason`` are
        categoricals of names (NaN where -1).
        """
        if workers:
            return self.workers_frame()
        c = self.columns
        frame = pd.DataFrame({name: np.array(arr) for name, arr in c.items()})
        done = c["status"] == COMPLETED
        arrival, start, finish = c["arrival_ns"], c["start_ns"], c["finish_ns"]
        frame["arrival_s"] = arrival / NS_PER_S
        frame["latency_ms"] = np.where(done, (finish - arrival) / NS_PER_MS, np.nan)
        frame["queue_ms"] = np.where(done, (start - arrival) / NS_PER_MS, np.nan)
        frame["service_ms"] = np.where(done, (finish - start) / NS_PER_MS, np.nan)
        frame["met_deadline"] = done & (finish <= c["deadline_ns"])
        frame["app"] = pd.Categorical.from_codes(c["app"], categories=self.app_names)
        frame["model"] = pd.Categorical.from_codes(c["model"], categories=self.model_names)
        frame["hardware"] = pd.Categorical.from_codes(
            self._query_hardware(), categories=self.hardware_names
        )
        frame["drop_reason"] = pd.Categorical.from_codes(
            c["drop_reason"], categories=self.drop_reason_names
        )
        return frame

    def workers_frame(self) -> pd.DataFrame:
        """One row per worker: ids, hardware name, busy/active seconds, cost, batches and
        utilisation (busy / active)."""
        w = self.workers
        frame = pd.DataFrame({name: np.array(arr) for name, arr in w.items()})
        frame["hardware"] = pd.Categorical.from_codes(w["hardware"], categories=self.hardware_names)
        frame["busy_s"] = w["busy_ns"] / NS_PER_S
        frame["active_s"] = w["active_ns"] / NS_PER_S
        with np.errstate(invalid="ignore", divide="ignore"):
            frame["utilisation"] = np.where(
                w["active_ns"] > 0, w["busy_ns"] / w["active_ns"].astype(np.float64), np.nan
            )
        return frame

    def _query_hardware(self) -> np.ndarray:
        """The hardware index of each query's worker (-1 if dropped)."""
        rows = self._worker_rows(self.columns["worker"])
        hw = self.workers["hardware"].astype(np.int64)
        return np.where(rows >= 0, hw[np.maximum(rows, 0)] if len(hw) else -1, -1)

    def batches(self) -> pd.DataFrame:
        """One row per batch that ran (completed queries grouped by worker and start time):
        ``worker``, ``model``, ``dispatch_ns``, ``start_ns``, ``finish_ns``, ``queries`` and
        ``items``, and ``noticed_ns`` for a serving run that stamped it; sorted by worker then
        start."""
        c = self.columns
        done = c["status"] == COMPLETED
        worker = c["worker"][done].astype(np.int64)
        start = c["start_ns"][done]
        order = np.lexsort((start, worker))
        worker, start = worker[order], start[order]
        first = np.ones(len(order), dtype=bool)
        first[1:] = (worker[1:] != worker[:-1]) | (start[1:] != start[:-1])
        idx = np.flatnonzero(first)
        sizes = c["size"][done][order].astype(np.int64)
        frame = pd.DataFrame(
            {
                "worker": worker[idx],
                "model": c["model"][done][order][idx],
                "dispatch_ns": c["dispatch_ns"][done][order][idx],
                "start_ns": start[idx],
                "finish_ns": c["finish_ns"][done][order][idx],
                "queries": np.diff(np.append(idx, len(order))),
                "items": np.add.reduceat(sizes, idx) if len(idx) else sizes[:0],
            }
        )
        if "noticed_ns" in c:  # the serving loop's stage stamp (servelab.calibrate)
            frame["noticed_ns"] = c["noticed_ns"][done][order][idx]
        return frame

    # ---- files ------------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Writes the run to one file that :func:`load_result` reads back: every column (the
        per-query records, world columns such as ``exec_ns`` included, and the workers table)
        with its dtype, ``meta`` (the scenario that produced the run included) and, for a
        streamed run, its online summaries. The file is a compressed numpy ``.npz`` archive
        (the suffix is added when missing) whose ``meta.json`` entry holds the meta as JSON;
        returns the path written::

            r.save("runs/jsq.npz")
            r2 = servelab.load_result("runs/jsq.npz")   # same columns, meta and summary()

        Meta values must be data: dicts, lists, tuples, strings, numbers, numeric numpy arrays
        (they come back as they were); anything else is a TypeError naming the key.
        """
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_name(path.name + ".npz")
        arrays: dict[str, np.ndarray] = {
            _FILE_FORMAT_KEY: np.asarray(_FILE_FORMAT),
            "meta.json": _json_bytes(self.meta, "meta"),
        }
        for name, arr in self._columns.items():
            arrays[f"columns/{name}"] = np.asarray(arr)
        for name, arr in self.workers.items():
            arrays[f"workers/{name}"] = np.asarray(arr)
        if self.streamed is not None:
            streamed = {k: v for k, v in self.streamed.items() if k != "approximate"}
            arrays["streamed.json"] = _json_bytes(streamed, "streamed")
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:
            np.savez_compressed(f, **arrays)
        return path

    # ---- consistency ------------------------------------------------------------------------

    def check_consistency(self) -> None:
        """Raises ValueError, naming the row and values, unless the records obey the contract:
        ids strictly increase; a completed query has arrival <= dispatch <= start <= finish, a
        worker, a model and no drop reason; a dropped query has dispatch = start = worker = -1,
        a drop reason and arrival <= finish; nothing finishes after ``duration_ns``; the queries
        sharing a (worker, start) batch agree on finish, model, batch_queries (their count) and
        batch_items (their summed size); no worker runs two batches at once; each worker's
        ``batches`` count matches its records; busy <= active."""
        if self.streamed is not None:
            raise ValueError(
                f"records={self.streamed['records']!r}: check_consistency() needs every record "
                "(batches and workers are checked against them); rerun with records='all'"
            )
        c = self.columns
        n = self._n

        def fail(mask: np.ndarray, what: str, *names: str) -> None:
            if mask.any():
                i = int(np.flatnonzero(mask)[0])
                values = ", ".join(f"{k}={c[k][i]}" for k in names)
                raise ValueError(f"query row {i} (id={c['id'][i]}): {what} ({values})")

        ids = c["id"]
        if n > 1:
            bad = np.zeros(n, dtype=bool)
            bad[1:] = ids[1:] <= ids[:-1]
            fail(bad, "ids must strictly increase (query-id order)", "id")
        done = c["status"] == COMPLETED
        arrival, dispatch, start, finish = (
            c[k] for k in ("arrival_ns", "dispatch_ns", "start_ns", "finish_ns")
        )
        order_bad = (arrival > dispatch) | (dispatch > start) | (start > finish)
        fail(
            done & order_bad,
            "a completed query needs arrival <= dispatch <= start <= finish",
            "arrival_ns",
            "dispatch_ns",
            "start_ns",
            "finish_ns",
        )
        fail(
            done & ((c["worker"] < 0) | (c["model"] < 0)),
            "a completed query needs a worker and a model",
            "worker",
            "model",
        )
        fail(done & (c["drop_reason"] != -1), "a completed query has no drop reason", "drop_reason")
        dropped = ~done
        fail(
            dropped & ((dispatch != -1) | (start != -1) | (c["worker"] != -1)),
            "a dropped query has dispatch_ns = start_ns = worker = -1",
            "dispatch_ns",
            "start_ns",
            "worker",
        )
        fail(dropped & (c["drop_reason"] < 0), "a dropped query needs a drop reason", "drop_reason")
        fail(
            dropped & (finish < arrival),
            "a query cannot be dropped before it arrives",
            "arrival_ns",
            "finish_ns",
        )
        fail(
            finish > self.meta["duration_ns"],
            f"finish after meta['duration_ns']={self.meta['duration_ns']}",
            "finish_ns",
        )

        rows = np.flatnonzero(done)
        worker = c["worker"][rows].astype(np.int64)
        order = np.lexsort((c["start_ns"][rows], worker))
        rows, worker = rows[order], worker[order]
        start_s = c["start_ns"][rows]
        same = (worker[1:] == worker[:-1]) & (start_s[1:] == start_s[:-1])
        batch_worker = worker[:0]  # the worker of each batch, filled below
        for key in ("finish_ns", "model", "batch_queries", "batch_items"):
            v = c[key][rows]
            bad = same & (v[1:] != v[:-1])
            if bad.any():
                i = int(rows[1:][bad][0])
                raise ValueError(
                    f"query row {i} (id={c['id'][i]}): queries of one batch (worker="
                    f"{c['worker'][i]}, start_ns={c['start_ns'][i]}) disagree on "
                    f"{key}={c[key][i]}"
                )
        if len(rows):
            first = np.ones(len(rows), dtype=bool)
            first[1:] = ~same
            idx = np.flatnonzero(first)
            counts = np.diff(np.append(idx, len(rows)))
            items = np.add.reduceat(c["size"][rows].astype(np.int64), idx)
            head = rows[idx]
            for key, actual in (("batch_queries", counts), ("batch_items", items)):
                bad = c[key][head] != actual
                if bad.any():
                    i = int(head[bad][0])
                    raise ValueError(
                        f"query row {i} (id={c['id'][i]}): {key}={c[key][i]} but its "
                        f"batch holds {int(actual[bad][0])}"
                    )
            # Batches of one worker, in start order, must not overlap.
            bw, bs, bf = worker[idx], start_s[idx], c["finish_ns"][head]
            batch_worker = bw
            overlap = (bw[1:] == bw[:-1]) & (bs[1:] < bf[:-1])
            if overlap.any():
                j = int(np.flatnonzero(overlap)[0])
                raise ValueError(
                    f"worker {bw[j]} runs two batches at once: [{bs[j]}, {bf[j]}) "
                    f"and [{bs[j + 1]}, {bf[j + 1]})"
                )
        w = self.workers
        per_worker = np.bincount(self._worker_rows(batch_worker), minlength=len(w["worker"]))
        bad = w["batches"] != per_worker
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"worker {w['worker'][i]}: batches={w['batches'][i]} but its queries ran in "
                f"{per_worker[i]} batches"
            )
        bad = w["busy_ns"] > w["active_ns"]
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"worker {w['worker'][i]}: busy_ns={w['busy_ns'][i]} exceeds "
                f"active_ns={w['active_ns'][i]}"
            )


# ---- files ------------------------------------------------------------------------------------

#: What Result.save writes, checked by load_result (a later layout gets a new number).
_FILE_FORMAT = "servelab.Result/1"
_FILE_FORMAT_KEY = "format"


# JSON has no tuples, arrays or non-string keys: those are written as tagged objects, so that
# meta and the streamed summaries come back exactly as they were.
_TAGS = ("__tuple__", "__ndarray__", "__items__")


def _to_json(value: Any, path: str) -> Any:
    """``value`` as JSON data, tagging what JSON cannot hold; TypeError names what it cannot
    write at all."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise TypeError(f"{path} is a numpy array of dtype {value.dtype}: Result.save "
                            "writes numeric arrays only")  # fmt: skip
        return {"__ndarray__": value.ravel().tolist(), "dtype": value.dtype.str,
                "shape": list(value.shape)}  # fmt: skip
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple | list):
        items = [_to_json(v, f"{path}[{i}]") for i, v in enumerate(value)]
        return {"__tuple__": items} if isinstance(value, tuple) else items
    if isinstance(value, Mapping):
        if all(isinstance(k, str) and k not in _TAGS for k in value):
            return {k: _to_json(v, f"{path}[{k!r}]") for k, v in value.items()}
        return {"__items__": [[_to_json(k, f"{path} key {k!r}"), _to_json(v, f"{path}[{k!r}]")]
                              for k, v in value.items()]}  # fmt: skip
    raise TypeError(
        f"{path} holds a value of type {type(value).__name__} ({value!r:.80}): Result.save "
        "writes meta as data (dicts, lists, tuples, strings, numbers, numpy arrays)"
    )


def _from_json(value: Any) -> Any:
    """What :func:`_to_json` wrote, back in its own types."""
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tuple__" in value:
        return tuple(_from_json(v) for v in value["__tuple__"])
    if "__ndarray__" in value:
        flat = np.array(value["__ndarray__"], dtype=np.dtype(value["dtype"]))
        return flat.reshape(value["shape"])
    if "__items__" in value:
        return {_hashable(_from_json(k)): _from_json(v) for k, v in value["__items__"]}
    return {k: _from_json(v) for k, v in value.items()}


def _hashable(key: Any) -> Any:
    return tuple(key) if isinstance(key, list) else key


def _json_bytes(value: Mapping[str, Any], what: str) -> np.ndarray:
    """``value`` as UTF-8 JSON in a uint8 array (an npz entry that needs no pickle)."""
    try:
        text = json.dumps(_to_json(dict(value), what))
    except RecursionError:
        raise TypeError(f"{what} refers to itself: Result.save cannot write it") from None
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8)


def load_result(path: str | os.PathLike[str]) -> Result:
    """The Result that :meth:`Result.save` wrote to ``path``: the same columns (dtypes
    included), workers, meta and streamed summaries, so ``summary()``, ``to_pandas()``,
    ``compare()`` and the plots give what they gave before saving, and
    ``servelab.simulate(r.meta["scenario"])`` replays the run. Raises FileNotFoundError, or
    ValueError naming the file when it is not such a file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file (Result.save writes a .npz file)")
    try:
        with np.load(path, allow_pickle=False) as archive:
            entries = {name: archive[name] for name in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as error:
        raise ValueError(f"{path} is not a file written by Result.save: {error}") from None
    found = entries.get(_FILE_FORMAT_KEY)
    if found is None or "meta.json" not in entries:
        raise ValueError(f"{path} is a numpy archive but not one written by Result.save")
    if str(found) != _FILE_FORMAT:
        raise ValueError(
            f"{path} was written in format {str(found)!r}; this servelab reads {_FILE_FORMAT!r}"
        )

    def from_json(name: str) -> Any:
        try:
            return _from_json(json.loads(entries[name].tobytes().decode("utf-8")))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"{path}: its {name} entry is not valid JSON ({error})") from None

    columns = {k[len("columns/") :]: v for k, v in entries.items() if k.startswith("columns/")}
    workers = {k[len("workers/") :]: v for k, v in entries.items() if k.startswith("workers/")}
    streamed = from_json("streamed.json") if "streamed.json" in entries else None
    try:
        return Result(columns, workers, from_json("meta.json"), streamed=streamed)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
