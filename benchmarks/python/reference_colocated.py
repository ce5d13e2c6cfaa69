"""A plain-Python simulator of FCFS on co-located instances with a linear slowdown per co-runner:
the best simple version a user would write (heapq events, ends made stale by a version stamp),
for bench_colocated.py to compare with and to check finish times against.

Instance w runs on machine w // per_machine. A batch of `service_ns` alone runs
1 + slowdown x (other running batches on its machine) times slower; whenever a batch starts or
ends on a machine, its running batches keep the work done and get new ends (progress rate).
"""

from __future__ import annotations

import heapq
import math
from collections import deque


def simulate(
    arrivals_ns: list[int], service_ns: int, machines: int, per_machine: int, slowdown: float
) -> list[int]:
    """Finish time (ns) of every query; strict FCFS, the lowest idle instance id first."""
    workers = machines * per_machine
    idle = list(range(workers))  # a heap of idle ids
    queue: deque[int] = deque()
    left = [0.0] * workers  # work alone still to do at since[w]
    since = [0] * workers
    slow = [0.0] * workers
    job = [-1] * workers
    version = [0] * workers
    finish = [0] * len(arrivals_ns)
    ends: list[tuple[int, int, int]] = []  # (time, version, worker)
    running = [[] for _ in range(machines)]

    def retime(m: int, now: int) -> None:
        live = running[m]
        for w in live:
            if now > since[w] and slow[w] > 0:
                left[w] = max(0.0, left[w] - (now - since[w]) * (1.0 / slow[w]))
                since[w] = now
        s = 1.0 + slowdown * (len(live) - 1)
        for w in live:
            if (left[w] == 0 and slow[w] > 0) or s == slow[w]:
                continue
            slow[w] = s
            version[w] += 1
            heapq.heappush(ends, (since[w] + math.floor(left[w] * s + 0.5), version[w], w))

    def start(w: int, q: int, now: int) -> None:
        job[w], left[w], since[w], slow[w] = q, float(service_ns), now, 0.0
        running[w // per_machine].append(w)
        retime(w // per_machine, now)

    i = 0
    while i < len(arrivals_ns) or ends:
        while ends and ends[0][1] != version[ends[0][2]]:
            heapq.heappop(ends)  # stale: re-timed since
        if ends and (i == len(arrivals_ns) or ends[0][0] <= arrivals_ns[i]):
            now, _, w = heapq.heappop(ends)
            finish[job[w]] = now
            version[w] += 1
            running[w // per_machine].remove(w)
            retime(w // per_machine, now)
            if queue:
                start(w, queue.popleft(), now)
            else:
                heapq.heappush(idle, w)
        elif i < len(arrivals_ns):
            now = arrivals_ns[i]
            if idle and not queue:
                start(heapq.heappop(idle), i, now)
            else:
                queue.append(i)
            i += 1
    return finish
