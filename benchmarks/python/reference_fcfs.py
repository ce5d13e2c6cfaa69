"""FCFS simulation in plain Python: the reference servelab's engine is measured against.

The same policy and event rules as servelab's "fcfs" scheduler with fixed service times: a central
FIFO queue; an arriving query goes to the lowest-id idle worker when nothing is queued; a worker
that finishes takes the oldest queued query; at equal times completions go before arrivals.
"""

from __future__ import annotations

import heapq
from collections import deque


def simulate_fcfs(
    arrivals_ns: list[int], sizes: list[int], service_ns: list[int], workers: int
) -> list[int]:
    """Finish time (ns) of every query. service_ns[b - 1]: service time of a batch of b items."""
    finish = [0] * len(arrivals_ns)
    idle = list(range(workers))  # a heap: the lowest id first
    queue: deque[int] = deque()
    completions: list[tuple[int, int, int]] = []  # (time, seq, worker)
    running = [0] * workers  # the query each busy worker runs
    seq = 0
    i, n = 0, len(arrivals_ns)
    while i < n or completions:
        if i < n and (not completions or arrivals_ns[i] < completions[0][0]):
            now = arrivals_ns[i]
            if not queue and idle:
                w = heapq.heappop(idle)
                running[w] = i
                heapq.heappush(completions, (now + service_ns[sizes[i] - 1], seq, w))
                seq += 1
            else:
                queue.append(i)
            i += 1
            continue
        now, _, w = heapq.heappop(completions)
        finish[running[w]] = now
        if queue:
            q = queue.popleft()
            running[w] = q
            heapq.heappush(completions, (now + service_ns[sizes[q] - 1], seq, w))
            seq += 1
        else:
            heapq.heappush(idle, w)
    return finish
