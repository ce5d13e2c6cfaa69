"""The real server's settings, load meter and decision log (INFaaS Sec. 4.1-4.2, 5).

``ServerSettings`` holds the periodic monitor's parameters, with the simulated ``infaas`` policy's
defaults (``autoscale_s=1``, ``slack=1.05``, ``load_window_s=5``, ``offline_util=0.4``,
``interference_tol=0.1``, ``autoscaler='greedy'``) and the VM-Autoscaler's (``max_workers``,
``startup_s=20``, ``poll_s=2``, ``threshold=0.8``, ``idle_s=60``), validated so that a bad value is
a ValueError naming the parameter.
``LoadMeter`` counts each application's items over a sliding window of periods, as the policy's
C++ meter does. ``DecisionLog`` keeps every decision the server takes (scaling, unloading, state
changes, lost workers, re-dispatched queries, offline pauses) as columns.
"""

from __future__ import annotations

import contextlib
import math
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

#: What ``InfaasServer.decisions()`` returns, one list (or array) per column.
DECISION_COLUMNS = ("time_s", "action", "variant", "worker", "reason")


def _number(field: str, value: Any, low: float, *, strict: bool, high: float = math.inf) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < low or (strict and value == low) or value > high:
        bound = f"> {low:g}" if strict else f">= {low:g}"
        upper = "" if high == math.inf else f" and <= {high:g}"
        raise ValueError(f"{field}={value!r} must be a finite number {bound}{upper}")
    return float(value)


@dataclass(frozen=True)
class ServerSettings:
    """The monitor's parameters (seconds, shares); see ``InfaasServer``."""

    period_s: float = 1.0  # Sec. 5: the Model-Autoscaler's 1 s polling interval
    slack: float = 1.05  # Sec. 5: the slack-threshold
    load_window_s: float = 5.0  # the load is the mean over this window (the policy's choice)
    offline_util: float = 0.4  # Sec. 5: offline work pauses above 40 % utilisation
    interference_tol: float = 0.1  # Interfered above the profile's p99 x (1 + tol)
    # ... and at least this much slower per batch: a batch is timed around the Python call, which
    # the profile does not include, so a model of a few microseconds reads several times its
    # profile with no co-location at all (our choice; 0 compares the ratio alone).
    interference_floor_ms: float = 0.25
    lost_after: int = 3  # consecutive failed batches that mark a worker lost (our choice)
    autoscale: bool = True
    # The VM-Autoscaler (Sec. 4.2.3), the simulated policy's parameters; max_workers None: the
    # initial workers (off).
    max_workers: int | None = None
    startup_s: float = 20.0  # "the time to instantiate VMs (20-30 seconds)"
    poll_s: float = 2.0  # how often its rules are evaluated
    threshold: float = 0.8  # utilisation and overloaded-worker share
    idle_s: float = 60.0  # a worker it started, idle this long with nothing queued, stops
    # A batch running longer than this marks its worker lost (servelab.serve's name; None: off).
    batch_timeout_ms: float | None = None
    # The Model-Autoscaler's solver, as the simulated policy's autoscaler=: 'greedy' (Sec. 4.2.2)
    # or 'ilp' (Sec. 4.2.1, exact, through servelab._lp).
    autoscaler: str = "greedy"

    def __post_init__(self) -> None:
        _number("period_s", self.period_s, 0.0, strict=True)
        _number("slack", self.slack, 1.0, strict=False)
        _number("load_window_s", self.load_window_s, 0.0, strict=True)
        if self.load_window_s < self.period_s:
            raise ValueError(
                f"load_window_s={self.load_window_s!r} must be >= period_s={self.period_s!r}"
            )
        _number("offline_util", self.offline_util, 0.0, strict=True, high=1.0)
        _number("interference_tol", self.interference_tol, 0.0, strict=False)
        _number("interference_floor_ms", self.interference_floor_ms, 0.0, strict=False)
        n = self.lost_after
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"lost_after={n!r} must be an integer >= 1")
        if not isinstance(self.autoscale, bool):
            raise ValueError(f"autoscale={self.autoscale!r} must be True or False")
        m = self.max_workers
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 1):
            raise ValueError(
                f"max_workers={m!r} must be an integer >= 1 "
                "(None: the initial workers, no VM-Autoscaler)"
            )
        _number("startup_s", self.startup_s, 0.0, strict=False)
        _number("poll_s", self.poll_s, 0.0, strict=True)
        _number("threshold", self.threshold, 0.0, strict=True, high=1.0)
        _number("idle_s", self.idle_s, 0.0, strict=False)
        t = self.batch_timeout_ms
        if t is not None:
            ok = isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t)
            if not ok or t <= 0:
                raise ValueError(
                    f"batch_timeout_ms={t!r} must be > 0 and finite (None: no timeout)"
                )
        _check_autoscaler(self.autoscaler)


def _check_autoscaler(name: Any) -> None:
    """ValueError for a name that is no scaling solver; 'ilp' loads servelab._lp, which registers
    it (BackendUnavailable, a RuntimeError, says why when it cannot load)."""
    from ... import _core, backends

    if not isinstance(name, str):
        raise ValueError(f"autoscaler={name!r} must be a scaling solver's name ('greedy', 'ilp')")
    if name == "ilp":
        backends.require("lp")
    known = _core.infaas.scaling_solvers()
    if name not in known:
        with contextlib.suppress(backends.BackendUnavailable):
            backends.require("lp")  # registers 'ilp' where it can: the message lists them all
        known = _core.infaas.scaling_solvers()
    if name not in known:
        raise ValueError(
            f"autoscaler={name!r} is not a scaling solver (registered: {sorted(known)})"
        )


class LoadMeter:
    """Items per application over the last ``buckets`` closed periods."""

    def __init__(self, buckets: int, period_s: float) -> None:
        self._buckets = max(1, buckets)
        self._period_s = period_s
        self._current: dict[str, int] = {}
        self._closed: dict[str, deque[int]] = {}

    def add(self, app: str, items: int) -> None:
        self._current[app] = self._current.get(app, 0) + items

    def close_period(self) -> None:
        for app in set(self._current) | set(self._closed):
            window = self._closed.setdefault(app, deque(maxlen=self._buckets))
            window.append(self._current.pop(app, 0))

    def qps(self, app: str) -> float:
        """Items/s over the closed periods of the window (0 before the first)."""
        window = self._closed.get(app)
        if not window:
            return 0.0
        return sum(window) / (len(window) * self._period_s)


class DecisionLog:
    """Decisions in the order taken; ``columns()`` gives them as ``DECISION_COLUMNS``."""

    def __init__(self) -> None:
        self._rows: list[tuple[float, str, str, int, str]] = []

    def add(self, time_s: float, action: str, variant: str, worker: int, reason: str) -> None:
        self._rows.append((time_s, action, variant, worker, reason))

    def columns(self) -> dict[str, Any]:
        time_s, action, variant, worker, reason = (
            zip(*self._rows, strict=True) if self._rows else ([],) * 5
        )
        return {
            "time_s": np.asarray(time_s, dtype=np.float64),
            "action": list(action),
            "variant": list(variant),
            "worker": np.asarray(worker, dtype=np.int64),
            "reason": list(reason),
        }

    def __len__(self) -> int:
        return len(self._rows)
