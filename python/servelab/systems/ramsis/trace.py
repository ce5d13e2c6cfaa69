"""The Twitter load trace of the RAMSIS evaluation as an arrival process.

The artifact's file (``twitter_trace/twitter_04_25_norm.txt``) has 27 lines ``t_seconds load``:
t = 0, 10, ..., 260 and loads of 1617..3905 queries/s. Two ways to play it over five minutes:

- ``mode="artifact"`` (default), what the artifact's simulator does: its loader expands the file to
  one rate per second for t = 0..260 (each load held for 10 s, the last for 1 s), and the
  simulator steps through that list once per second, starting over after 261 s, until the run
  ends at 300 s: about 792k Poisson arrivals.
- ``mode="stretched"``: the 27 intervals stretched evenly over ``duration_s`` (each load held
  for ``duration_s / 27``): about 836k arrivals in five minutes.

Either way the arrivals are Poisson at a piecewise-constant rate (``workload.PiecewiseRate``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ... import textio, workload

#: The paper's trace length (the day-long trace scaled down to five minutes, sec. 7).
TRACE_DURATION_S = 300.0
TRACE_MODES = ("artifact", "stretched")


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

    def arrivals(
        self, mode: str = "artifact", duration_s: float = TRACE_DURATION_S
    ) -> workload.PiecewiseRate:
        """Poisson arrivals following the trace over ``duration_s`` (see the module doc)."""
        if mode not in TRACE_MODES:
            raise ValueError(f"mode={mode!r} must be one of {', '.join(TRACE_MODES)}")
        if not duration_s > 0:
            raise ValueError(f"duration_s={duration_s!r} must be a positive number of seconds")
        if mode == "artifact":
            return workload.PiecewiseRate(
                interval_s=1.0, rates=self.per_second().astype(float).tolist(), repeat=True
            )
        scale = duration_s / (self.interval_s * len(self.loads_qps))
        return workload.PiecewiseRate(
            interval_s=self.interval_s,
            rates=self.loads_qps.astype(float).tolist(),
            time_scale=scale,
        )

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


def read_load_trace(path: str | os.PathLike[str]) -> LoadTrace:
    """Reads a ``t_seconds load`` file (the artifact's Twitter trace format).

    The times must start at 0 and be equally spaced; loads must be positive. Errors name the file
    and line.
    """
    path = Path(path)
    times, loads = [], []
    text = textio.read_text(path, what="load trace file")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            if len(parts) != 2:
                raise ValueError
            t, load = float(parts[0]), float(parts[1])
        except ValueError:
            raise ValueError(
                f"{path}:{number}: {line!r} is not 't_seconds load' (two numbers)"
            ) from None
        if not np.isfinite(t):  # float() reads nan, inf and 1e999 as numbers
            raise ValueError(f"{path}:{number}: t_seconds={parts[0]} must be a finite number")
        if not np.isfinite(load) or load <= 0:
            raise ValueError(
                f"{path}:{number}: load={parts[1]} must be a positive number of queries/s"
            )
        times.append(t)
        loads.append(load)
    if not times:
        raise ValueError(f"{path}: no data lines")
    t = np.asarray(times)
    if t[0] != 0:
        raise ValueError(f"{path}:1: the first time is {t[0]}, it must be 0")
    if len(t) > 1:
        gaps = np.diff(t)
        bad = np.flatnonzero(~np.isclose(gaps, gaps[0]) | (gaps <= 0))
        if bad.size:
            raise ValueError(
                f"{path}: times must be equally spaced and increasing; line {bad[0] + 2} breaks it"
            )
    return LoadTrace(t, np.asarray(loads), str(path))
