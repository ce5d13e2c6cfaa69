"""Parameter sweeps: a function run over a grid of points, in this process, in worker processes
or on Ray, one DataFrame row per point::

    frame = sweep(run_point, {"rate": [50, 100, 200], "scheduler": ["fifo", "kairos"]})

Every system's experiment loops are sweeps; the backends that run the points are in
:mod:`servelab.sweep_backends`.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import itertools
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from .results import Result, _flatten


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
