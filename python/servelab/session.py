"""Online serving in-process: the real serving loop fed by requests as they come.

``servelab.serve(scenario)`` runs the loop on the scenario's generated workload; a
:class:`Session` runs the same loop (cluster state, worker threads, executors, scheduler) and
takes each query from :meth:`Session.submit` instead, at the time of the call::

    with servelab.Session("default", executor="torchscript(path='m.pt')") as s:
        outcome = s.submit("app0", inputs=np.ones((4, 16), np.float32)).result()
        outcome.output        # the model's output rows for this query
    s.result.summary()         # the records of every submitted query, as serve()'s

The scenario's applications are the session's (their names and SLOs); its arrivals are not
read. Each query ends once: completed (with its rows of the batch's output, where the executor
writes outputs: torchscript, executors written in Python that return them) or dropped (by the
scheduler, a failing executor, or the end of the session), and its future then resolves.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import dataclasses
import math
import threading
import weakref
from numbers import Integral
from typing import Any

import numpy as np

from . import _core
from .results import Result
from .run import _prepare, _result

_NS_PER_S = 1e9


@dataclasses.dataclass(frozen=True)
class Outcome:
    """How a submitted query ended. Times are seconds on the session's clock (0 when it
    started); ``start_s`` / ``finish_s`` are NaN for a query that never ran."""

    id: int  # its record in the session's Result (-1: the session ended before it arrived)
    app: str
    status: str  # "completed" | "dropped"
    reason: str  # why it was dropped ("" when completed)
    output: np.ndarray | None  # its output rows (None: dropped, or an executor that writes none)
    arrival_s: float
    deadline_s: float
    start_s: float
    finish_s: float
    worker: int
    model: str

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    @property
    def late(self) -> bool:
        """Completed after its deadline (its application's SLO after its arrival)."""
        return self.completed and self.finish_s > self.deadline_s

    @property
    def latency_s(self) -> float:
        """Arrival to the end of its batch (NaN unless completed)."""
        return self.finish_s - self.arrival_s if self.completed else math.nan


def _float_rows_width(executors: list[Any] | None) -> int | None:
    """The feature width every query's input must have, when the executors that read float32
    rows (torchscript) all take the same one; None: nothing to check before the batch runs."""
    widths = {int(b.width) for b in executors or () if b is not None and hasattr(b, "width")}
    return widths.pop() if len(widths) == 1 else None


def _check_float_rows(inputs: np.ndarray, width: int) -> None:
    """A batch holds several clients' queries: an input its executor cannot read would fail them
    all, so it is refused here, alone."""
    fits = inputs.dtype == np.float32 and (
        (inputs.ndim == 1 and inputs.shape[0] == width)
        or (inputs.ndim == 2 and inputs.shape[1] == width)
    )
    if not fits:
        raise ValueError(
            f"inputs=array({inputs.dtype}, shape={inputs.shape}): the session's executor takes "
            f"float32 rows of {width} features, shape ({width},) or (size, {width})"
        )


# Sessions still open when the interpreter exits are aborted first: their loop's callbacks
# must not take the GIL while Python finalises.
_open_sessions: weakref.WeakSet[Session] = weakref.WeakSet()


@atexit.register
def _abort_open_sessions() -> None:
    for session in list(_open_sessions):
        session.abort()


class Session:
    """A serving session on ``scenario`` (a dict, path, built-in name or Scenario, with the same
    keyword overrides as :func:`servelab.serve`: executor, spin_us, batch_timeout_ms, llc,
    scheduler, workers, ...). It starts at once (executors built, the scheduler's on_start run)
    and serves until :meth:`close`; use it as a context manager."""

    def __init__(self, scenario: Any = None, **overrides: Any) -> None:
        self._prepared = _prepare("session", scenario, dict(overrides))
        apps = self._prepared.args[2].apps
        self._apps: list[str] = [a.name for a in apps]
        self._slo_ms = [a.slo_s * 1e3 for a in apps]
        self._index = {name: i for i, name in enumerate(self._apps)}
        self._models: list[str] = list(self._prepared.args[0].models)
        self._width = _float_rows_width(self._prepared.executors)
        kwargs = dict(self._prepared.kwargs)
        self._core = _core.ServingSession(*self._prepared.args, **kwargs)
        self._result: Result | None = None
        self._lock = threading.Lock()
        _open_sessions.add(self)

    # --- what it serves ---
    @property
    def apps(self) -> list[str]:
        """The applications' names, in the scenario's order."""
        return list(self._apps)

    def app_slo_ms(self, app: str | int) -> float:
        return self._slo_ms[self._app_index(app)]

    def _app_index(self, app: str | int) -> int:
        if isinstance(app, str):
            if app not in self._index:
                raise ValueError(
                    f"app={app!r} is not one of the session's applications {self._apps}"
                )
            return self._index[app]
        if isinstance(app, bool) or not isinstance(app, Integral):
            raise TypeError(f"app={app!r} must be an application's name or index")
        if not 0 <= int(app) < len(self._apps):
            raise ValueError(
                f"app={app!r} is not an index of the session's {len(self._apps)} applications"
            )
        return int(app)

    # --- serving ---
    def submit(
        self,
        app: str | int,
        inputs: Any = None,
        *,
        size: int | None = None,
        slo_ms: float | None = None,
        accuracy: float | None = None,
    ) -> concurrent.futures.Future[Outcome]:
        """Submits one query of ``app`` now; returns a future of its :class:`Outcome`.

        ``inputs``: the query's input, a numpy array (or what numpy.asarray takes) with one row
        per item (torchscript takes float32 of shape (width,) or (size, width)); None: the
        executor derives its own. ``size``: the query's items (default: the rows of ``inputs``,
        else 1). ``slo_ms`` / ``accuracy``: this query's own latency goal and lowest accepted
        model accuracy (INFaaS's per-query goals), instead of its application's. The future
        resolves on the loop's thread: in asyncio, ``asyncio.wrap_future``."""
        index = self._app_index(app)
        if inputs is not None:
            inputs = np.asarray(inputs)
            if self._width is not None:
                _check_float_rows(inputs, self._width)
            rows = int(inputs.shape[0]) if inputs.ndim >= 2 else 1
            if size is None:
                size = rows
            elif inputs.ndim >= 2 and rows != size:
                raise ValueError(
                    f"size={size!r} but inputs has {rows} rows (one per item): "
                    "give one or the other"
                )
        if size is None:
            size = 1
        if isinstance(size, bool) or not isinstance(size, Integral):
            raise TypeError(f"size={size!r} must be a whole number of items")
        future: concurrent.futures.Future[Outcome] = concurrent.futures.Future()
        future.set_running_or_notify_cancel()
        apps, models = self._apps, self._models

        def done(t: tuple[Any, ...]) -> None:
            qid, a, completed, reason, output, arrival, deadline, start, finish, worker, model = t
            future.set_result(
                Outcome(
                    id=qid,
                    app=apps[a],
                    status="completed" if completed else "dropped",
                    reason=reason,
                    output=output,
                    arrival_s=arrival / _NS_PER_S,
                    deadline_s=deadline / _NS_PER_S,
                    start_s=start / _NS_PER_S if start >= 0 else math.nan,
                    finish_s=finish / _NS_PER_S if completed else math.nan,
                    worker=worker,
                    model=models[model] if 0 <= model < len(models) else "",
                )
            )

        self._core.submit(index, int(size), inputs, done, slo_ms=slo_ms, accuracy=accuracy)
        return future

    def infer(
        self,
        app: str | int,
        inputs: Any = None,
        *,
        size: int | None = None,
        slo_ms: float | None = None,
        accuracy: float | None = None,
        timeout_s: float | None = None,
    ) -> Outcome:
        """submit() and wait for the outcome."""
        future = self.submit(app, inputs, size=size, slo_ms=slo_ms, accuracy=accuracy)
        return future.result(timeout=timeout_s)

    # --- ending ---
    def close(self) -> Result:
        """Stops taking submissions, lets what is queued or running finish (every query is
        answered) and returns the session's Result. Idempotent. Ctrl-C while it waits aborts."""
        with self._lock:
            if self._result is not None:
                return self._result
            self._core.close()
            try:
                while not self._core.wait(0.05):
                    pass
            except KeyboardInterrupt:
                self._core.abort()
                while not self._core.wait(0.05):
                    pass
                raise
            finally:
                _open_sessions.discard(self)
            self._result = _result(self._core.result(), self._prepared)
            return self._result

    def abort(self) -> None:
        """Ends the session at once: what is queued or running ends dropped ("session
        stopped"); close() then returns the result."""
        self._core.abort()

    @property
    def result(self) -> Result | None:
        """The Result once closed (None before)."""
        return self._result

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is not None and exc[0] is not StopIteration:
            self.abort()
        self.close()
