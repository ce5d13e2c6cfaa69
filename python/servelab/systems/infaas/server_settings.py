"""The real server's settings: the registered ``infaas`` policy's parameters under the server's
names (``period_s`` is the policy's ``autoscale_s``), validated so that a bad value is a
ValueError naming the parameter, and the policy spec they make.

Defaults are the simulated policy's (``autoscale_s=1``, ``slack=1.05``, ``load_window_s=5``,
``offline_util=0.4``, ``interference_tol=0.1``, ``autoscaler='greedy'``, the VM-Autoscaler's
``startup_s=20``, ``poll_s=2``, ``threshold=0.8``, ``idle_s=60``), except two that only real
executors need: ``interference_floor_ms=0.25`` and the first batch after a load not compared
(``warmup_batch=true``).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Any

from ... import _core, backends


def _number(field: str, value: Any, low: float, *, strict: bool, high: float = math.inf) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < low or (strict and value == low) or value > high:
        bound = f"> {low:g}" if strict else f">= {low:g}"
        upper = "" if high == math.inf else f" and <= {high:g}"
        raise ValueError(f"{field}={value!r} must be a finite number {bound}{upper}")
    return float(value)


@dataclass(frozen=True)
class ServerSettings:
    """The policy's parameters (seconds, shares); see ``InfaasServer``."""

    period_s: float = 1.0  # the Model-Autoscaler's period (the policy's autoscale_s)
    slack: float = 1.05  # Sec. 5: the slack-threshold
    load_window_s: float = 5.0  # the load is the mean over this window
    offline_util: float = 0.4  # Sec. 5: offline work pauses above 40 % utilisation
    interference_tol: float = 0.1  # Interfered above the profile's p99 x (1 + tol)
    # ... and this much slower per batch: a Python executor's call on a model of microseconds
    # takes several times its profile with no co-location at all.
    interference_floor_ms: float = 0.25
    autoscale: bool = True  # False: autoscale_s=0 (getVariant's per-query scaling only)
    max_workers: int | None = None  # the VM-Autoscaler's cap; None: off (the initial workers)
    startup_s: float = 20.0
    poll_s: float = 2.0
    threshold: float = 0.8
    idle_s: float = 60.0
    batch_timeout_ms: float | None = None  # the serving loop's: a hung worker leaves
    autoscaler: str = "greedy"  # the Model-Autoscaler's solver ('ilp': Sec. 4.2.1's program)

    def __post_init__(self) -> None:
        _number("period_s", self.period_s, 0.0, strict=True)
        _number("slack", self.slack, 1.0, strict=False, high=10.0)
        _number("load_window_s", self.load_window_s, 0.0, strict=True)
        if self.load_window_s < self.period_s:
            raise ValueError(
                f"load_window_s={self.load_window_s!r} must be >= period_s={self.period_s!r}"
            )
        _number("offline_util", self.offline_util, 0.0, strict=True, high=1.0)
        _number("interference_tol", self.interference_tol, 0.0, strict=False, high=100.0)
        _number("interference_floor_ms", self.interference_floor_ms, 0.0, strict=False, high=1e6)
        if not isinstance(self.autoscale, bool):
            raise ValueError(f"autoscale={self.autoscale!r} must be True or False")
        m = self.max_workers
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 1):
            raise ValueError(
                f"max_workers={m!r} must be an integer >= 1 "
                "(None: the initial workers, no VM-Autoscaler)"
            )
        _number("startup_s", self.startup_s, 0.0, strict=True)
        _number("poll_s", self.poll_s, 0.0, strict=True)
        _number("threshold", self.threshold, 0.0, strict=True, high=1.0)
        _number("idle_s", self.idle_s, 0.0, strict=True)
        t = self.batch_timeout_ms
        if t is not None:
            ok = isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t)
            if not ok or t <= 0:
                raise ValueError(
                    f"batch_timeout_ms={t!r} must be > 0 and finite (None: no timeout)"
                )
        _check_autoscaler(self.autoscaler)

    def scheduler(self, app_models: list[str], offline_apps: list[int], workers: int) -> str:
        """The ``infaas(...)`` spec for a session of ``workers`` initial workers."""
        if self.max_workers is not None and self.max_workers < workers:
            raise ValueError(
                f"max_workers={self.max_workers} must be >= the {workers} initial workers"
            )
        vm = self.max_workers if self.max_workers is not None and self.max_workers > workers else 0
        args = {
            "app_models": ",".join(app_models),
            "offline_apps": ",".join(str(i) for i in offline_apps),
            "autoscale_s": float(self.period_s) if self.autoscale else 0.0,
            "slack": float(self.slack),
            "load_window_s": float(self.load_window_s),
            "offline_util": float(self.offline_util),
            "interference_tol": float(self.interference_tol),
            "interference_floor_ms": float(self.interference_floor_ms),
            "warmup_batch": True,
            "autoscaler": self.autoscaler,
            "max_workers": vm,
            "startup_s": float(self.startup_s),
            "poll_s": float(self.poll_s),
            "threshold": float(self.threshold),
            "idle_s": float(self.idle_s),
        }
        text = ", ".join(
            f"{k}={v!r}" if isinstance(v, str) else f"{k}={str(v).lower()}"
            if isinstance(v, bool) else f"{k}={v!r}"
            for k, v in args.items()
        )  # fmt: skip
        return f"infaas({text})"


def _check_autoscaler(name: Any) -> None:
    """ValueError for a name that is no scaling solver; 'ilp' loads servelab._lp, which registers
    it (BackendUnavailable, a RuntimeError, says why when it cannot load)."""
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
