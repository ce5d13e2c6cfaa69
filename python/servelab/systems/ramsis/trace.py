"""A load trace (the Twitter trace of the RAMSIS evaluation) and the arrival process that plays it.

The artifact's file (``twitter_trace/twitter_04_25_norm.txt``, read by ``data.read_load_trace``)
has 27 lines ``t_seconds load``: t = 0, 10, ..., 260 and loads of 1617..3905 queries/s. Two ways
to play it over five minutes:

- ``mode="artifact"`` (default), what the artifact's simulator does: its loader expands the file to
  one rate per second for t = 0..260 (each load held for 10 s, the last for 1 s), and the
  simulator steps through that list once per second, starting over after 261 s, until the run
  ends at 300 s: about 792k Poisson arrivals.
- ``mode="stretched"``: the 27 intervals stretched evenly over ``duration_s`` (each load held
  for ``duration_s / 27``): about 836k arrivals in five minutes.

Either way the arrivals are Poisson at a piecewise-constant rate: the registered arrival process
``piecewise_rate``, whose parameters :meth:`LoadTrace.arrival_params` gives (a scenario names it
by them) and whose object :meth:`LoadTrace.arrivals` builds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import workload
from .paper import TRACE_DURATION_S

TRACE_MODES = ("artifact", "stretched")
#: The registered arrival process a trace is played with.
ARRIVAL_PROCESS = "piecewise_rate"


@dataclass(frozen=True)
class LoadTrace:
    """A load trace: ``loads_qps[i]`` holds from ``times_s[i]`` on (equally spaced)."""

    times_s: np.ndarray
    loads_qps: np.ndarray
    source: str = ""

    @property
    def interval_s(self) -> float:
        return float(self.times_s[1] - self.times_s[0]) if len(self.times_s) > 1 else 1.0

    def per_second(self) -> np.ndarray:
        """The artifact's expansion: one rate per second for t = 0 .. times_s[-1]."""
        seconds = np.arange(int(round(self.times_s[-1])) + 1)
        return self.loads_qps[
            np.minimum(seconds // int(round(self.interval_s)), len(self.loads_qps) - 1)
        ]

    def arrival_params(
        self, mode: str = "artifact", duration_s: float = TRACE_DURATION_S
    ) -> dict[str, Any]:
        """The parameters of the ``piecewise_rate`` arrival process that plays the trace over
        ``duration_s`` (see the module doc), as plain numbers for a scenario."""
        if mode not in TRACE_MODES:
            raise ValueError(f"mode={mode!r} must be one of {', '.join(TRACE_MODES)}")
        if not duration_s > 0:
            raise ValueError(f"duration_s={duration_s!r} must be a positive number of seconds")
        if mode == "artifact":
            return {
                "interval_s": 1.0,
                "rates": self.per_second().astype(float).tolist(),
                "repeat": True,
            }
        return {
            "interval_s": self.interval_s,
            "rates": self.loads_qps.astype(float).tolist(),
            "time_scale": duration_s / (self.interval_s * len(self.loads_qps)),
        }

    def arrivals(
        self, mode: str = "artifact", duration_s: float = TRACE_DURATION_S
    ) -> workload.PiecewiseRate:
        """Poisson arrivals following the trace over ``duration_s`` (see the module doc)."""
        return workload.PiecewiseRate(**self.arrival_params(mode, duration_s))

    def expected_queries(
        self, mode: str = "artifact", duration_s: float = TRACE_DURATION_S
    ) -> float:
        """The mean number of arrivals of :meth:`arrivals` over ``duration_s``."""
        if mode == "artifact":
            per_second = self.per_second()
            whole = int(duration_s)
            rates = per_second[np.arange(whole) % len(per_second)]
            tail = per_second[whole % len(per_second)] * (duration_s - whole)
            return float(rates.sum() + tail)
        return float(self.loads_qps.mean() * duration_s)
