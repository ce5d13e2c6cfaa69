"""Workloads: when queries arrive.

Arrival processes are immutable, validated descriptions; ``generate()`` draws arrival times in
bulk as a float64 numpy array of seconds (``generate_ns()``: int64 nanoseconds, the simulator's
exact times), and ``start()`` gives a lazy iterator. The same seed gives the same times, bit for
bit, on every platform::

    from servelab import workload

    times = workload.Poisson(rate=100).generate(seed=1, count=1000)  # seconds
    twitter = workload.read_rate_trace("twitter_04_25_norm.txt", time_scale=300 / 270)
    counts = twitter.generate_ns(seed=7, horizon_s=twitter.duration_s)

Every process is also registered by name: ``make_arrival_process("gamma(rate=50, cv=2)")`` or
``make_arrival_process("gamma", rate=50, cv=2)``; ``list_arrival_processes()`` lists them with
their typed, documented parameters.

Processes: ``Poisson``, ``PoissonIntegerMs`` (the Kairos/Ribbon artifacts' integer-millisecond
gaps), ``Gamma``, ``MMPP`` (alias ``OnOff``), ``PiecewiseRate`` and ``Replay``. Readers validate
the whole file and name the file and line of the first malformed entry.
"""

from __future__ import annotations

from ._core import (
    MMPP,
    ArrivalCursor,
    ArrivalProcess,
    Gamma,
    PiecewiseRate,
    Poisson,
    PoissonIntegerMs,
    Replay,
    list_arrival_processes,
    make_arrival_process,
    read_azure_functions_counts,
    read_gaps_csv,
    read_rate_trace,
    read_timestamps_csv,
)

#: The two-state Markov-modulated Poisson process under its other common name.
OnOff = MMPP

__all__ = [
    "MMPP",
    "ArrivalCursor",
    "ArrivalProcess",
    "Gamma",
    "OnOff",
    "PiecewiseRate",
    "Poisson",
    "PoissonIntegerMs",
    "Replay",
    "list_arrival_processes",
    "make_arrival_process",
    "read_azure_functions_counts",
    "read_gaps_csv",
    "read_rate_trace",
    "read_timestamps_csv",
]
