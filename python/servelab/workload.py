"""Workloads: when queries arrive, how large they are and which application sends them.

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

Request sizes (items per query) are ``SizeDistribution`` objects: ``ConstantSize``,
``UniformSize``, ``LognormalSize``, ``ClippedGaussianSize``, ``EmpiricalSize``, ``SizeMixture``
and ``FallbackSize``, plus the artifacts' presets ``kairos_sizes()`` and ``ribbon_sizes()``. Each
takes ``round_to`` (round up to a multiple; 1 rounds to the nearest integer) and draws integer
sizes >= 1; ``generate(seed=, count=)`` returns an int32 numpy array. By name:
``make_size_distribution("lognormal(mu=5.1, sigma=0.2)")``, ``list_size_distributions()``.

A ``Workload`` combines an arrival process with ``Application`` objects (name, SLO, share, sizes,
accuracy floor)::

    apps = [
        workload.Application("rm2", slo_s=0.35, sizes="kairos_mix"),
        workload.Application("ncf", slo_s=0.1, share=0.5, sizes=workload.UniformSize(1, 64)),
    ]
    queries = workload.Workload("poisson(rate=100)", apps, count=10_000).generate(seed=1)
    queries["size"], queries["arrival_s"]  # numpy columns

``zipf_shares(n, exponent)`` gives Zipf popularity shares for many applications.

Applications whose loads move independently each take their own arrival process (and the
workload none); their queries are merged by time, application i drawing from the stream
``arrivals/<i>``::

    apps = [
        workload.Application("a", slo_s=0.1, arrivals="poisson(rate=50)"),
        workload.Application("b", slo_s=0.01, arrivals="piecewise_rate(interval_s=20, rates=[9])"),
    ]
    queries = workload.Workload(None, apps, horizon_s=40).generate(seed=1)
"""

from __future__ import annotations

from ._core import (
    MMPP,
    Application,
    ArrivalCursor,
    ArrivalProcess,
    ClippedGaussianSize,
    ConstantSize,
    EmpiricalSize,
    FallbackSize,
    Gamma,
    LognormalSize,
    PiecewiseRate,
    Poisson,
    PoissonIntegerMs,
    QueryStream,
    Replay,
    SizeDistribution,
    SizeMixture,
    UniformSize,
    Workload,
    kairos_sizes,
    list_arrival_processes,
    list_size_distributions,
    make_arrival_process,
    make_size_distribution,
    read_azure_functions_counts,
    read_gaps_csv,
    read_rate_trace,
    read_timestamps_csv,
    ribbon_sizes,
    zipf_shares,
)

#: The two-state Markov-modulated Poisson process under its other common name.
OnOff = MMPP

__all__ = [
    "MMPP",
    "Application",
    "ArrivalCursor",
    "ArrivalProcess",
    "ClippedGaussianSize",
    "ConstantSize",
    "EmpiricalSize",
    "FallbackSize",
    "Gamma",
    "LognormalSize",
    "OnOff",
    "PiecewiseRate",
    "Poisson",
    "PoissonIntegerMs",
    "QueryStream",
    "Replay",
    "SizeDistribution",
    "SizeMixture",
    "UniformSize",
    "Workload",
    "kairos_sizes",
    "list_arrival_processes",
    "list_size_distributions",
    "make_arrival_process",
    "make_size_distribution",
    "read_azure_functions_counts",
    "read_gaps_csv",
    "read_rate_trace",
    "read_timestamps_csv",
    "ribbon_sizes",
    "zipf_shares",
]
