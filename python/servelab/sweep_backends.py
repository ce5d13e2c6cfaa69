"""Where sweep points run: this process, a local process pool (``backend="local"``) or Ray tasks
(``backend="ray"``), behind one loop that retries failed points and keeps every outcome.

A runner only submits a point, waits for some to finish and stops everything; the shared loop
(:func:`drive`) decides what to retry and reports each point's final :class:`Outcome`. Ray is
imported only when the Ray backend is used, so ``import servelab`` never needs it.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import multiprocessing
import signal
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

BACKENDS = ("local", "ray")


@dataclass
class Outcome:
    """A point's final state: its row, or (``row is None``) the error of its last attempt."""

    index: int
    row: dict[str, Any] | None
    error: BaseException | None
    attempts: int


class WorkerDied(RuntimeError):
    """The process running a point ended without a result (killed, os._exit, a crash)."""


def check_backend(backend: Any, ray_address: Any, ray_init: Any) -> None:
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r} must be one of {', '.join(map(repr, BACKENDS))}")
    if backend != "ray":
        if ray_address is not None:
            raise ValueError(f"ray_address={ray_address!r} needs backend='ray'")
        if ray_init is not None:
            raise ValueError(f"ray_init={ray_init!r} needs backend='ray'")
    if ray_address is not None and (not isinstance(ray_address, str) or not ray_address.strip()):
        raise ValueError(f"ray_address={ray_address!r} must be a string such as 'auto'")
    if ray_init is not None and not isinstance(ray_init, Mapping):
        raise ValueError(f"ray_init={ray_init!r} must be a dict of ray.init arguments")


# ---- the shared loop -------------------------------------------------------------------------


def drive(runner: Any, n: int, retries: int, on_outcome: Callable[[Outcome], None]) -> None:
    """Runs points 0..n-1 on ``runner``, at most ``runner.slots`` at a time, retrying each failed
    point up to ``retries`` times. Any exception (KeyboardInterrupt, or one raised by
    ``on_outcome``) stops the runner's workers at once before it propagates."""
    todo = collections.deque(range(n))
    # A crash in a process pool fails every point in flight, not only the culprit's (which may
    # not even have started): those points are run again one at a time, uncharged, and a crash
    # of a point running alone is its own.
    alone: collections.deque[int] = collections.deque()
    attempts = [0] * n
    running: dict[Any, int] = {}
    solo: set[Any] = set()
    try:
        while todo or alone or running:
            if alone:
                if not running:
                    i = alone.popleft()
                    handle = runner.submit(i)
                    running[handle] = i
                    solo.add(handle)
            else:
                while todo and len(running) < runner.slots:
                    i = todo.popleft()
                    running[runner.submit(i)] = i
            for handle, row, error in runner.wait(list(running)):
                i = running.pop(handle)
                if isinstance(error, WorkerDied) and runner.crash_fails_all and handle not in solo:
                    alone.append(i)
                    continue
                solo.discard(handle)
                attempts[i] += 1
                if error is None:
                    on_outcome(Outcome(i, row, None, attempts[i]))
                elif attempts[i] > retries:
                    on_outcome(Outcome(i, None, error, attempts[i]))
                else:
                    todo.appendleft(i)
    except BaseException:
        runner.stop()
        raise
    runner.close()


# ---- in this process -------------------------------------------------------------------------


class InProcess:
    """Runs each point when it is waited for, in this process (``processes=1``)."""

    slots = 1
    crash_fails_all = False

    def __init__(self, task: Callable[[dict], dict], points: Sequence[dict]) -> None:
        self._task, self._points = task, points

    def submit(self, i: int) -> int:
        return i

    def wait(self, handles: list[int]) -> list[tuple[int, Any, BaseException | None]]:
        i = handles[0]
        try:
            return [(i, self._task(self._points[i]), None)]
        except Exception as error:  # KeyboardInterrupt goes through: it stops the sweep
            return [(i, None, error)]

    def stop(self) -> None:
        pass

    def close(self) -> None:
        pass


# ---- local worker processes ------------------------------------------------------------------

_SHARED: dict[str, Any] = {}


def _init_worker(shared: Mapping[str, Any]) -> None:
    # Ctrl-C in a terminal reaches the whole process group: the parent stops the workers, so a
    # worker must not die on its own in the middle of writing a result to the shared queue.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The shared inputs arrive once per worker process, not once per point.
    _SHARED.clear()
    _SHARED.update(shared)


def _local_task(row: Callable[..., dict], fn: Callable[..., Any], point: dict) -> dict:
    return row(fn, point, _SHARED)


def _context() -> multiprocessing.context.BaseContext:
    # The C++ extension runs threads: fork would copy a process mid-thread, so never fork.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


class LocalPool:
    """Points in ``processes`` worker processes; a pool broken by a dying worker is replaced."""

    crash_fails_all = True

    def __init__(
        self,
        row: Callable[..., dict],
        fn: Callable[..., Any],
        points: Sequence[dict],
        shared: Mapping[str, Any],
        processes: int,
        stop_workers: Callable[[cf.ProcessPoolExecutor], None],
    ) -> None:
        self.slots = processes
        self._row, self._fn, self._points, self._shared = row, fn, points, dict(shared)
        self._stop_workers = stop_workers
        self._pool: cf.ProcessPoolExecutor | None = None

    def submit(self, i: int) -> cf.Future:
        if self._pool is None:
            self._pool = cf.ProcessPoolExecutor(
                max_workers=self.slots,
                mp_context=_context(),
                initializer=_init_worker,
                initargs=(self._shared,),
            )
        return self._pool.submit(_local_task, self._row, self._fn, self._points[i])

    def wait(self, handles: list[cf.Future]) -> list[tuple[cf.Future, Any, BaseException | None]]:
        done, _ = cf.wait(handles, return_when=cf.FIRST_COMPLETED)
        out = []
        for future in done:
            error = future.exception()
            if isinstance(error, BrokenProcessPool):
                error = WorkerDied(f"its worker process died ({error})")
                if self._pool is not None:  # a broken pool takes no more work: start a new one
                    self._pool.shutdown(wait=True, cancel_futures=True)
                    self._pool = None
            out.append((future, None if error else future.result(), error))
        return out

    def stop(self) -> None:
        if self._pool is not None:
            self._stop_workers(self._pool)
            self._pool = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


# ---- Ray -------------------------------------------------------------------------------------

_RAY_TASK: Any = None


def _ray_task(row: Callable[..., dict], fn: Callable[..., Any], point: dict, shared: dict) -> dict:
    return row(fn, point, shared)


def start_ray(address: str | None, init: Mapping[str, Any] | None) -> Any:
    """The ray module, connected: to ``address`` when given (a cluster), else to the Ray instance
    this process already runs, else to a new local one."""
    try:
        import ray
    except ImportError as error:
        raise ImportError(
            "backend='ray' needs Ray: pip install 'servelab[ray]' (or 'ray>=2.9')"
        ) from error
    if not ray.is_initialized():
        _check_ray_init(ray, init or {})
        if address is not None:
            _probe_ray_address(address)
        # A new local instance needs no dashboard; a cluster's own settings are left alone.
        options = {"include_dashboard": False} if address is None else {}
        try:
            ray.init(address=address, **{**options, **(init or {})})
        except ConnectionError as error:
            raise RuntimeError(f"ray_address={address!r}: {error}") from error
    return ray


# How long the address of a Ray cluster gets to accept a connection. Ray itself retries an
# address where nothing listens for a quarter of an hour without a word.
RAY_CONNECT_TIMEOUT_S = 10.0


def _check_ray_init(ray: Any, init: Mapping[str, Any]) -> None:
    """ray_init's keys: ray.init's named arguments, or its private ``_...`` ones."""
    import inspect

    known = [
        name
        for name, p in inspect.signature(ray.init).parameters.items()
        if p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    for key in init:
        if key == "address":
            raise ValueError("ray_init['address']: give the address as ray_address=")
        if not isinstance(key, str) or not (key in known or key.startswith("_")):
            raise ValueError(
                f"ray_init[{key!r}] is not an argument of ray.init (known: {', '.join(known)})"
            )


def _probe_ray_address(address: str) -> None:
    """RuntimeError naming ``ray_address`` unless its host:port accepts a TCP connection within
    RAY_CONNECT_TIMEOUT_S ('auto' and other forms without a port are left to Ray)."""
    import socket

    host, _, port = address.removeprefix("ray://").rpartition(":")
    host = host.strip("[]")  # [::1]:6379
    if not host or not port.isdigit() or "/" in host:
        return
    try:
        with socket.create_connection((host, int(port)), timeout=RAY_CONNECT_TIMEOUT_S):
            pass
    except (OSError, OverflowError) as error:  # OverflowError: a port above 65535
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise RuntimeError(
            f"ray_address={address!r}: no Ray cluster answers at {host}:{port} "
            f"within {RAY_CONNECT_TIMEOUT_S:g} s ({reason or type(error).__name__})"
        ) from None


class RayTasks:
    """Points as Ray tasks; ``fn`` and the shared inputs go to the object store once."""

    crash_fails_all = False  # a dying Ray worker fails only its own task

    def __init__(
        self,
        ray: Any,
        row: Callable[..., dict],
        fn: Callable[..., Any],
        points: Sequence[dict],
        shared: Mapping[str, Any],
        processes: int | None,
    ) -> None:
        global _RAY_TASK
        if _RAY_TASK is None:
            # Retries are ours (the same on both backends), so Ray itself never retries.
            _RAY_TASK = ray.remote(num_cpus=1, max_retries=0)(_ray_task)
        self._ray, self._points = ray, points
        self.slots = processes or max(int(ray.cluster_resources().get("CPU", 1)), 1)
        self._refs = (ray.put(row), ray.put(fn), ray.put(dict(shared)))
        self._running: set[Any] = set()

    def submit(self, i: int) -> Any:
        row, fn, shared = self._refs
        ref = _RAY_TASK.remote(row, fn, self._points[i], shared)
        self._running.add(ref)
        return ref

    def wait(self, handles: list[Any]) -> list[tuple[Any, Any, BaseException | None]]:
        ray = self._ray
        ready: list[Any] = []
        while not ready:  # short waits, so that Ctrl-C is seen promptly
            ready, _ = ray.wait(handles, num_returns=1, timeout=0.2)
        ready, _ = ray.wait(handles, num_returns=len(handles), timeout=0)
        out = []
        for ref in ready:
            self._running.discard(ref)
            try:
                out.append((ref, ray.get(ref), None))
            except ray.exceptions.RayTaskError as error:
                cause = getattr(error, "cause", None)
                out.append((ref, None, cause if isinstance(cause, Exception) else error))
            except ray.exceptions.RayError as error:  # the worker died, or the node was lost
                out.append((ref, None, WorkerDied(f"its Ray worker died ({error})")))
        return out

    def stop(self) -> None:
        # force=True ends the worker processes of the tasks still running (Ray starts new ones).
        for ref in self._running:
            try:
                self._ray.cancel(ref, force=True)
            except Exception:  # it finished meanwhile
                pass
        self._running.clear()

    def close(self) -> None:
        self._running.clear()
