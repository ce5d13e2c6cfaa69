"""Where the RRL artifact's data lives, and the reader of its inter-arrival trace.

The artifact ships one data file we use: ``interarrival_time_generated.txt``, 100 inter-arrival
gaps in seconds (mean 7.08 ms), which its modified TF-Serving replays cyclically.
:func:`data_dir` finds the folder: the one given, else ``$SERVELAB_RRL_DATA``, else
``../shared/data/rrl`` next to a source checkout.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ... import workload as _workload

DATA_ENV = "SERVELAB_RRL_DATA"
TRACE_FILE = "interarrival_time_generated.txt"
#: ../shared/data/rrl beside the repository of a source checkout.
CHECKOUT_DATA = Path(__file__).resolve().parents[5] / "shared" / "data" / "rrl"


def data_dir(data: str | os.PathLike[str] | None = None) -> Path:
    """The RRL data folder (holding interarrival_time_generated.txt)."""
    if data is None:
        data = os.environ.get(DATA_ENV) or None
    if data is None:
        if (CHECKOUT_DATA / TRACE_FILE).is_file():
            return CHECKOUT_DATA
        raise ValueError(
            f"data=None: give the RRL data folder (with {TRACE_FILE}) or set ${DATA_ENV}"
        )
    path = Path(data)
    if not (path / TRACE_FILE).is_file():
        raise FileNotFoundError(
            f"data={str(path)!r} has no {TRACE_FILE} (the RRL artifact's trace)"
        )
    return path.resolve()


def read_trace_gaps(data: str | os.PathLike[str] | None = None) -> np.ndarray:
    """The artifact's inter-arrival gaps in seconds (float64); errors name a bad line."""
    gaps = _workload.read_gaps_csv(data_dir(data) / TRACE_FILE, "s")
    if gaps.size == 0 or not gaps.sum() > 0:
        raise ValueError(f"{TRACE_FILE} holds no positive gap")
    return gaps
