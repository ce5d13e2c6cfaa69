"""The workloads of the RRL evaluation (Sec. 6.1), as servelab arrival processes.

- ``"trace"``: the artifact's 100 inter-arrival gaps replayed cyclically, time-scaled so that
  their mean rate is ``rate`` (the artifact's own mean is 141 requests/s).
- ``"dynamic"``: Poisson periods whose rate is redrawn each period (``dynamic_poisson``).
- ``"spiky"``: Wikipedia-like traffic with a slow cycle, jitter and random spikes (``spiky``); the
  paper replays a Wikipedia access trace, which is not public in a usable form.
- ``"poisson"``: a steady Poisson process (the sensitivity study's stationary load).
"""

from __future__ import annotations

import math
import os
from typing import Any

from ... import workload as _workload
from .data import read_trace_gaps

#: name -> what it is
WORKLOADS = {
    "poisson": "steady Poisson arrivals at `rate`",
    "dynamic": "Poisson periods with a randomly changing rate (the paper's 'dynamic')",
    "spiky": "Wikipedia-like traffic with load spikes (the paper's 'WiKi')",
    "trace": "the artifact's inter-arrival trace, replayed cyclically at `rate`",
}


def artifact_trace(rate: float | None = None, data: str | os.PathLike[str] | None = None) -> Any:
    """The artifact's gaps as a cyclic Replay; with ``rate``, time-scaled to that mean rate."""
    gaps = read_trace_gaps(data)
    if rate is not None:
        if not (isinstance(rate, int | float) and math.isfinite(rate) and rate > 0):
            raise ValueError(f"rate={rate!r} must be a positive finite number of requests/s")
        gaps = gaps * (gaps.size / gaps.sum()) / rate
    return _workload.Replay.from_gaps(gaps, repeat=True)


def workload(
    name: str, rate: float, *, data: str | os.PathLike[str] | None = None, **params: Any
) -> Any:
    """An arrival process by its RRL name (see WORKLOADS); ``params`` go to the registered process
    (``period_s``/``spread`` for dynamic; ``step_s``, ``spike_prob``, ... for spiky)."""
    if name not in WORKLOADS:
        raise KeyError(f"workload={name!r} is not one of {', '.join(WORKLOADS)}")
    if name == "trace":
        if params:
            raise ValueError(f"the trace workload takes no parameters, got {sorted(params)}")
        return artifact_trace(rate, data)
    registered = {"poisson": "poisson", "dynamic": "dynamic_poisson", "spiky": "spiky"}[name]
    return _workload.make_arrival_process(registered, rate=rate, **params)
