"""The simplest FCFS simulation a researcher would write: a heap of the servers' free times.

With identical servers and FIFO order, each query starts at max(arrival, earliest free time) and
frees its server at start + service; which server it was does not change any time. The issue's
yardstick for servelab's simulator ("a 15-line plain-Python heapq script").
"""

from __future__ import annotations

import heapq

import numpy as np


def poisson_arrivals_ns(rate_qps: float, count: int, seed: int) -> list[int]:
    """Arrival times (ns) of a Poisson process, generated with numpy as a script would."""
    gaps = np.random.default_rng(seed).exponential(1e9 / rate_qps, count)
    return np.rint(np.cumsum(gaps)).astype(np.int64).tolist()


def simulate_fcfs_heap(arrivals_ns: list[int], service_ns: int, workers: int) -> np.ndarray:
    """Finish time (ns) of every query, FCFS over `workers` identical servers."""
    free = [0] * workers  # already a heap
    finish = [0] * len(arrivals_ns)
    for i, arrival in enumerate(arrivals_ns):
        start = max(arrival, free[0])
        finish[i] = start + service_ns
        heapq.heapreplace(free, finish[i])
    return np.asarray(finish, dtype=np.int64)
