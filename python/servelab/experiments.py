"""Experiments: allowable-throughput searches and parameter sweeps over runs.

``allowable_throughput`` finds the largest arrival rate at which a QoS target holds (Kairos'
metric: "the maximum throughput the allocated instances can serve without causing QoS
violation"), where ``run(rate, seed)`` returns a :class:`~servelab.results.Result`::

    qos = QoS(percentile=99, target_ms=350)
    found = allowable_throughput(lambda rate, seed: simulate(rate, seed), qos, low=10,
                                 seeds=(0, 1, 2))
    found.rate, found.bracket, found.to_frame()

``sweep`` runs a function over a parameter grid in worker processes and returns one DataFrame
row per point::

    frame = sweep(run_point, {"rate": [50, 100, 200], "scheduler": ["fifo", "kairos"]})
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import itertools
import math
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from .results import COMPLETED, NS_PER_MS, Result, _flatten

# ---- QoS -------------------------------------------------------------------------------------


def _finite(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise ValueError(f"{name}={value!r} must be a number")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name}={value!r} must be finite")
    return value


def tail_latency_ms(result: Result, percentile: float, warmup_s: float = 0.0) -> float:
    """The percentile of query latency in ms, where a dropped query's latency is infinite.

    Uses numpy's linear interpolation over all measured queries (arriving at or after
    ``warmup_s``); the value is ``inf`` as soon as the percentile touches a dropped query, so a
    QoS on it fails when more than (100 - percentile)% of the queries are dropped. NaN when no
    query arrived after the warmup.
    """
    warmup_ns = result._warmup_ns(warmup_s)
    c = result.columns
    rows = c["arrival_ns"] >= warmup_ns
    done = rows & (c["status"] == COMPLETED)
    n = int(np.count_nonzero(rows))
    if n == 0:
        return math.nan
    latency = (c["finish_ns"][done] - c["arrival_ns"][done]) / NS_PER_MS
    pos = percentile / 100.0 * (n - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    if hi >= latency.size:  # the percentile reaches into the dropped (infinite) tail
        return math.inf
    a, b = np.partition(latency, (lo, hi))[[lo, hi]]
    return float(a + (b - a) * (pos - lo))


@dataclass(frozen=True)
class QoS:
    """A quality-of-service target on a run.

    ``QoS(percentile=99, target_ms=350)``: the p99 latency is at most 350 ms, counting a dropped
    query as infinitely late (see :func:`tail_latency_ms`). ``QoS(max_violation_rate=0.01)``: at
    most 1% of the queries miss their deadline or are dropped (``summary()["slo_violation_rate"]``).
    Give either or both; with both, both must hold.
    """

    percentile: float | None = None
    target_ms: float | None = None
    max_violation_rate: float | None = None

    def __post_init__(self) -> None:
        if (self.percentile is None) != (self.target_ms is None):
            raise ValueError(
                f"percentile={self.percentile!r} and target_ms={self.target_ms!r} go together: "
                "give both or neither"
            )
        if self.percentile is None and self.max_violation_rate is None:
            raise ValueError(
                "QoS needs a target: percentile= with target_ms=, and/or max_violation_rate="
            )
        if self.percentile is not None:
            p = _finite("percentile", self.percentile)
            if not 0 < p <= 100:
                raise ValueError(f"percentile={self.percentile!r} must be in (0, 100]")
            if _finite("target_ms", self.target_ms) <= 0:
                raise ValueError(f"target_ms={self.target_ms!r} must be > 0")
        if self.max_violation_rate is not None:
            v = _finite("max_violation_rate", self.max_violation_rate)
            if not 0 <= v <= 1:
                raise ValueError(
                    f"max_violation_rate={self.max_violation_rate!r} must be in [0, 1]"
                )

    def measure(self, result: Result, warmup_s: float = 0.0) -> dict[str, float]:
        """The measured values the targets apply to, e.g. ``{"p99_ms": 212.0}``."""
        if not isinstance(result, Result):
            raise TypeError(f"expected a servelab Result, got {type(result).__name__}")
        out = {}
        if self.percentile is not None:
            key = f"p{self.percentile:g}_ms"
            out[key] = tail_latency_ms(result, self.percentile, warmup_s)
        if self.max_violation_rate is not None:
            rate = result.summary(warmup_s=warmup_s)["slo_violation_rate"]
            out["violation_rate"] = math.nan if rate is None else rate
        return out

    def holds_for(self, measured: Mapping[str, float]) -> bool:
        """Whether measured values (from :meth:`measure`) meet every target."""
        if any(math.isnan(v) for v in measured.values()):
            raise ValueError(
                f"the QoS cannot be judged on {measured}: no query arrived after the warmup"
            )
        ok = True
        if self.percentile is not None:
            ok &= measured[f"p{self.percentile:g}_ms"] <= self.target_ms
        if self.max_violation_rate is not None:
            ok &= measured["violation_rate"] <= self.max_violation_rate
        return bool(ok)

    def holds(self, result: Result, warmup_s: float = 0.0) -> bool:
        """Whether the run meets every target (queries arriving before warmup_s excluded)."""
        return self.holds_for(self.measure(result, warmup_s))

    def describe(self) -> str:
        parts = []
        if self.percentile is not None:
            parts.append(f"p{self.percentile:g} latency <= {self.target_ms:g} ms")
        if self.max_violation_rate is not None:
            parts.append(f"SLO violations <= {self.max_violation_rate:.4g}")
        return " and ".join(parts)


# ---- allowable throughput --------------------------------------------------------------------


class Evaluation(NamedTuple):
    """One rate tried by the search: whether it passed, and the measured QoS values per seed
    run (seeds after the first failing one are not run)."""

    rate: float
    passed: bool
    metrics: tuple[dict[str, float], ...]


@dataclass
class AllowableThroughput:
    """The outcome of :func:`allowable_throughput`.

    ``rate``: the largest rate seen to pass (0.0 when even ``low`` fails: ``feasible`` is False).
    ``bracket``: (highest passing, lowest failing) rate; ``inf`` on the right when no failing
    rate was found. ``converged``: the bracket's relative width reached ``rel_tol``.
    ``evaluations``: every rate tried, in order.
    """

    rate: float
    feasible: bool
    converged: bool
    bracket: tuple[float, float]
    evaluations: list[Evaluation] = field(default_factory=list)
    qos: str = ""
    seeds: tuple[int, ...] = ()

    def to_frame(self) -> pd.DataFrame:
        """One row per (evaluation, seed run): step, rate, passed, seed and the measured values."""
        rows = []
        for step, ev in enumerate(self.evaluations):
            for seed, metrics in zip(self.seeds, ev.metrics, strict=False):
                rows.append(
                    {"step": step, "rate": ev.rate, "passed": ev.passed, "seed": seed, **metrics}
                )
        return pd.DataFrame(rows)


def allowable_throughput(
    run: Callable[[float, int], Result],
    qos: QoS,
    *,
    low: float,
    high: float | None = None,
    seeds: Sequence[int] = (0,),
    rel_tol: float = 0.01,
    max_iter: int = 40,
    warmup_s: float = 0.0,
) -> AllowableThroughput:
    """The largest arrival rate at which ``qos`` holds, where ``run(rate, seed)`` returns a Result.

    A rate passes only if the QoS holds for EVERY seed (the conservative choice: the answer is a
    rate the system sustains on all the sampled arrival sequences); seeds are run in order and a
    rate's remaining seeds are skipped once one fails. The search assumes passing is monotone in
    the rate. Without ``high`` it doubles from ``low`` until a rate fails; then it bisects until
    (fail - pass) / fail <= ``rel_tol``. ``max_iter`` bounds the number of rates tried.

    If ``low`` already fails the answer has ``rate=0.0`` and ``feasible=False``; if ``high``
    passes (or doubling never fails) the answer is the highest rate tried, with ``converged=False``.
    """
    if not isinstance(qos, QoS):
        raise ValueError(f"qos={qos!r} must be a QoS")
    low = _finite("low", low)
    if low <= 0:
        raise ValueError(f"low={low!r} must be > 0")
    if high is not None:
        high = _finite("high", high)
        if high <= low:
            raise ValueError(f"high={high!r} must be > low={low!r}")
    rel_tol = _finite("rel_tol", rel_tol)
    if not 0 < rel_tol < 1:
        raise ValueError(f"rel_tol={rel_tol!r} must be in (0, 1)")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 2:
        raise ValueError(f"max_iter={max_iter!r} must be an integer >= 2")
    seeds = tuple(seeds)
    if not seeds:
        raise ValueError("seeds=() must name at least one seed")
    _finite("warmup_s", warmup_s)

    evaluations: list[Evaluation] = []

    def passes(rate: float) -> bool:
        metrics = []
        ok = True
        for seed in seeds:
            result = run(rate, seed)
            if not isinstance(result, Result):
                raise TypeError(
                    f"run({rate!r}, {seed!r}) returned {type(result).__name__}, not a Result"
                )
            measured = qos.measure(result, warmup_s)
            metrics.append(measured)
            if not qos.holds_for(measured):
                ok = False
                break
        evaluations.append(Evaluation(rate, ok, tuple(metrics)))
        return ok

    def answer(lo: float, hi: float, *, feasible: bool = True) -> AllowableThroughput:
        converged = feasible and math.isfinite(hi) and (hi - lo) / hi <= rel_tol
        return AllowableThroughput(
            rate=lo if feasible else 0.0,
            feasible=feasible,
            converged=converged,
            bracket=(lo if feasible else 0.0, hi),
            evaluations=evaluations,
            qos=qos.describe(),
            seeds=seeds,
        )

    if not passes(low):
        return answer(0.0, low, feasible=False)
    lo = low
    if high is not None:
        if passes(high):
            return answer(high, math.inf)
        hi = high
    else:
        hi = 2.0 * low
        while passes(hi):
            lo, hi = hi, 2.0 * hi
            if len(evaluations) >= max_iter:
                return answer(lo, math.inf)
    while (hi - lo) / hi > rel_tol and len(evaluations) < max_iter:
        mid = 0.5 * (lo + hi)
        if passes(mid):
            lo = mid
        else:
            hi = mid
    return answer(lo, hi)


# ---- sweeps ----------------------------------------------------------------------------------


class SweepError(RuntimeError):
    """A sweep point raised; ``point`` and ``index`` say which (the original is ``__cause__``)."""

    def __init__(self, index: int, point: Mapping[str, Any], error: BaseException) -> None:
        super().__init__(
            f"sweep point {index} {dict(point)!r} failed: {type(error).__name__}: {error}"
        )
        self.index = index
        self.point = dict(point)


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a sweep; ``frame`` holds the rows of the points that had finished (in grid
    order, as :func:`sweep` returns them), ``total`` the number of points in the grid."""

    def __init__(self, frame: pd.DataFrame, total: int) -> None:
        super().__init__(f"sweep interrupted after {len(frame)} of {total} points")
        self.frame = frame
        self.total = total


def grid_points(grid: Mapping[str, Iterable[Any]] | Sequence[Mapping[str, Any]]) -> list[dict]:
    """The points of a grid: a dict of value lists gives their cartesian product (the last key
    varies fastest); a list of dicts is taken as is."""
    if isinstance(grid, Mapping):
        keys = list(grid)
        values = []
        for key in keys:
            v = grid[key]
            if isinstance(v, (str, bytes, Mapping)) or not isinstance(v, Iterable):
                raise ValueError(f"grid[{key!r}]={v!r} must be a list of values")
            values.append(list(v))
        return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*values)]
    if isinstance(grid, (str, bytes)) or not isinstance(grid, Sequence):
        raise ValueError(f"grid={grid!r} must be a dict of lists or a list of dicts")
    points = []
    for i, point in enumerate(grid):
        if not isinstance(point, Mapping):
            raise ValueError(f"grid[{i}]={point!r} must be a dict of parameters")
        points.append(dict(point))
    return points


def _row(fn: Callable[..., Any], point: dict[str, Any], shared: Mapping[str, Any]) -> dict:
    """Runs one point; a Result becomes its flattened summary here, in the worker process, so
    only a small dict travels back."""
    out = fn(**point, **shared)
    if isinstance(out, Result):
        return _flatten(out.summary())
    if isinstance(out, Mapping):
        return _flatten(out)
    return {"value": out}


def _merge(index: int, point: dict[str, Any], row: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(point)
    for key, value in row.items():
        if key in merged and not _same(merged[key], value):
            raise ValueError(
                f"sweep point {index}: fn returned {key}={value!r}, clashing with the grid's "
                f"{key}={merged[key]!r}; rename one of them"
            )
        merged[key] = value
    return merged


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # arrays and other values without a plain truth value
        return a is b


@contextlib.contextmanager
def _ctrl_c_held_back() -> Iterator[None]:
    """Ctrl-C pressed inside the block is raised as KeyboardInterrupt when the block ends, not in
    the middle of it (only the main thread receives it; elsewhere the block runs as is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    try:
        yield
    finally:
        signal.signal(
            signal.SIGINT, previous if previous is not None else signal.default_int_handler
        )
    if pressed:
        raise KeyboardInterrupt


def _stop_workers(pool: cf.ProcessPoolExecutor, grace_s: float = 0.5) -> None:
    """Ends the pool now: points not started are cancelled, running ones are killed (SIGTERM, then
    SIGKILL after ``grace_s``), and every worker process is joined, so none outlives the sweep."""
    # Python < 3.14 has no public way to end a busy ProcessPoolExecutor (terminate_workers): its
    # process table is the only handle on the workers.
    workers = list((getattr(pool, "_processes", None) or {}).values())
    # A second Ctrl-C here (impatient users press it again) would leave workers running and the
    # interpreter waiting for them at exit: it takes effect once they are gone.
    with _ctrl_c_held_back():
        for worker in workers:
            worker.terminate()
        deadline = time.monotonic() + grace_s
        for worker in workers:
            worker.join(max(deadline - time.monotonic(), 0.0))
        for worker in workers:
            if worker.is_alive():  # it ignores SIGTERM
                worker.kill()
            worker.join()
        # Its workers gone, the pool's manager thread marks it broken and exits: nothing to wait.
        pool.shutdown(wait=True, cancel_futures=True)


def _check_sweep_options(
    retries: Any, on_error: Any, on_interrupt: Any, shared: Any, points: list[dict]
) -> dict[str, Any]:
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries={retries!r} must be an integer >= 0")
    if on_error not in ("raise", "record"):
        raise ValueError(f"on_error={on_error!r} must be 'raise' or 'record'")
    if on_interrupt not in ("raise", "return"):
        raise ValueError(f"on_interrupt={on_interrupt!r} must be 'raise' or 'return'")
    if shared is None:
        return {}
    if not isinstance(shared, Mapping) or not all(isinstance(k, str) for k in shared):
        raise ValueError(f"shared={shared!r} must be a dict of keyword arguments")
    for i, point in enumerate(points):
        clash = sorted(set(point) & set(shared))
        if clash:
            raise ValueError(f"shared key {clash[0]!r} is also a parameter of grid point {i}")
    return dict(shared)


def _check_picklable(fn: Callable[..., Any]) -> None:
    """Worker processes import ``fn`` by name: say so now rather than fail in every worker."""
    main = sys.modules.get("__main__")
    if getattr(fn, "__module__", None) == "__main__" and not hasattr(main, "__file__"):
        raise ValueError(
            f"fn={getattr(fn, '__qualname__', fn)!r} is defined interactively (a notebook "
            "or REPL), where worker processes cannot import it; move it into a module "
            "file, pass processes=1, or use backend='ray'"
        )
    try:
        pickle.dumps(fn)
    except Exception as error:
        raise ValueError(
            f"fn={fn!r} cannot be sent to worker processes ({error}); define it at module "
            "level in an importable module, pass processes=1, or use backend='ray'"
        ) from error


def _frame(points: list[dict], outcomes: list[Any], on_error: str) -> pd.DataFrame:
    """The rows of the points that have an outcome, in grid order; with ``on_error="record"``
    an ``error`` column last: "Type: message" for a failed point, None for the others."""
    rows, errors = [], []
    for i, (point, outcome) in enumerate(zip(points, outcomes, strict=True)):
        if outcome is None:
            continue
        if outcome.row is None:
            rows.append(dict(point))
            errors.append(f"{type(outcome.error).__name__}: {outcome.error}")
        else:
            rows.append(_merge(i, point, outcome.row))
            errors.append(None)
    frame = pd.DataFrame(rows)
    if on_error == "record":
        frame["error"] = pd.Series(errors, index=frame.index, dtype=object)
    return frame


def sweep(
    fn: Callable[..., Any],
    grid: Mapping[str, Iterable[Any]] | Sequence[Mapping[str, Any]],
    *,
    processes: int | None = None,
    progress: bool = True,
    desc: str | None = None,
    backend: str = "local",
    ray_address: str | None = None,
    ray_init: Mapping[str, Any] | None = None,
    shared: Mapping[str, Any] | None = None,
    retries: int = 1,
    on_error: str = "raise",
    on_interrupt: str = "raise",
) -> pd.DataFrame:
    """Runs ``fn(**point, **shared)`` for every point of ``grid`` and returns a DataFrame, one row
    per point in grid order: the point's parameters, then what fn returned (a dict, flattened with
    dotted keys; a Result, as its flattened ``summary()``; anything else, as a ``value`` column).

    ``backend="local"`` (the default) runs points in ``processes`` worker processes of this
    machine (default the CPU count; the "forkserver" start method where available, else "spawn",
    never fork). ``fn`` must therefore be picklable: a function defined at module level in an
    importable module, not a lambda or a function defined in a notebook cell; ``processes=1``
    runs everything in this process (no pickling), which is also the way to debug.
    ``backend="ray"`` runs points as Ray tasks: on the cluster at ``ray_address`` when given,
    else on the Ray instance this process already runs, else on a new local one (``ray_init``:
    more ``ray.init`` arguments, such as ``runtime_env``); ``processes`` bounds the tasks in
    flight (default the cluster's CPU count). Ray is an optional dependency (``servelab[ray]``).

    ``shared``: keyword arguments that are the same for every point (a profile, a policy set, a
    trace). They are sent once (once per worker process locally, once to Ray's object store), not
    with every point. The same points give the same rows on every backend.

    A point that raises, or whose worker process dies, is run again up to ``retries`` times.
    When it still fails, ``on_error="raise"`` stops the sweep and raises SweepError naming the
    point; ``on_error="record"`` keeps going and the frame gets an ``error`` column ("Type:
    message" for the failed points, None for the others). ``progress`` shows a tqdm bar titled
    ``desc``.

    Ctrl-C (KeyboardInterrupt) stops the sweep within about a second: points not started are
    cancelled and running ones are killed (no local worker process is left running). With
    ``on_interrupt="raise"`` a SweepInterrupted (a KeyboardInterrupt) propagates, its ``frame``
    holding the rows of the points already finished; ``on_interrupt="return"`` returns that frame
    instead. With ``processes=1`` the KeyboardInterrupt reaches ``fn`` itself and stops the
    sweep as soon as ``fn`` lets it through.
    """
    from . import sweep_backends as backends

    if not callable(fn):
        raise ValueError(f"fn={fn!r} must be callable")
    backends.check_backend(backend, ray_address, ray_init)
    points = grid_points(grid)
    shared = _check_sweep_options(retries, on_error, on_interrupt, shared, points)
    if processes is not None and (
        isinstance(processes, bool) or not isinstance(processes, int) or processes < 1
    ):
        raise ValueError(f"processes={processes!r} must be an integer >= 1")
    if backend == "ray":
        ray = backends.start_ray(ray_address, ray_init)
        runner = backends.RayTasks(ray, _row, fn, points, shared, processes)
    else:
        processes = min(processes or os.cpu_count() or 1, max(len(points), 1))
        if processes == 1:
            runner = backends.InProcess(lambda point: _row(fn, point, shared), points)
        else:
            from ._main_guard import check as check_main_guard

            check_main_guard(processes)
            _check_picklable(fn)
            for key, value in shared.items():
                try:
                    pickle.dumps(value)
                except Exception as error:
                    raise ValueError(
                        f"shared[{key!r}] cannot be sent to worker processes ({error})"
                    ) from error
            runner = backends.LocalPool(_row, fn, points, shared, processes, _stop_workers)

    outcomes: list[Any] = [None] * len(points)
    from tqdm.auto import tqdm  # here, not at import: tqdm.auto warns in notebooks without widgets

    bar = tqdm(total=len(points), desc=desc, disable=not progress)

    def record(outcome: Any) -> None:
        if outcome.row is None and on_error == "raise":
            raise SweepError(outcome.index, points[outcome.index], outcome.error) from outcome.error
        outcomes[outcome.index] = outcome
        bar.update()

    try:
        backends.drive(runner, len(points), retries, record)
    except KeyboardInterrupt:
        partial = _frame(points, outcomes, on_error)
        if on_interrupt == "return":
            return partial
        raise SweepInterrupted(partial, len(points)) from None
    finally:
        bar.close()
    return _frame(points, outcomes, on_error)
