"""servelab's simulation structure written in plain Python: the reference for bench_sim.py.

The same design as the C++ engine, feature for feature on the FCFS path: a policy object with
arrival/completion hooks that reads a cluster view (idle workers, central queue) and acts through
validated actions; per-query records (arrival, dispatch, start, finish, worker, model, batch,
status, accuracy, cost); an event heap with the same tie rule (completions before arrivals at the
same time). This is how a researcher would write "the same simulator" without a C++ core.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass, field


@dataclass
class Record:
    arrival: int
    size: int
    deadline: int
    dispatch: int = -1
    start: int = -1
    finish: int = -1
    worker: int = -1
    model: int = -1
    batch_items: int = 0
    status: int = 1
    accuracy: float = math.nan
    cost: float = 0.0


@dataclass
class Worker:
    hardware: int
    models: list[int]
    idle: bool = True
    batch: list[int] = field(default_factory=list)
    started: int = 0
    busy_ns: int = 0


class Cluster:
    """The view and the actions, with the C++ engine's checks."""

    def __init__(self, workers: int, service_ns: list[int], price_per_hour: float) -> None:
        self.workers = [Worker(0, [0]) for _ in range(workers)]
        self.idle = set(range(workers))
        self.central: deque[int] = deque()
        self.records: list[Record] = []
        self.service_ns = service_ns  # by batch size
        self.price_per_ns = price_per_hour / 3.6e12
        self.now = 0
        self.events: list[tuple[int, int, int, int]] = []  # (time, kind, seq, worker)
        self.seq = 0

    def max_batch(self, worker: int, model: int) -> int:
        return len(self.service_ns) - 1

    def dispatch(self, worker: int, model: int, queries: list[int]) -> None:
        w = self.workers[worker]
        if not w.idle:
            raise ValueError(f"dispatch: worker={worker} is busy")
        if model not in w.models:
            raise ValueError(f"dispatch: model {model} is not loaded on worker={worker}")
        items = sum(self.records[q].size for q in queries)
        if items > self.max_batch(worker, model):
            raise ValueError(f"dispatch: batch of {items} items exceeds the profile")
        for q in queries:
            if self.records[q].dispatch >= 0:
                raise ValueError(f"dispatch: query={q} is not pending")
            self.records[q].dispatch = self.now
        w.idle = False
        w.batch = list(queries)
        w.started = self.now
        self.idle.discard(worker)
        heapq.heappush(self.events, (self.now + self.service_ns[items], 0, self.seq, worker))
        self.seq += 1

    def finish_batch(self, worker: int) -> None:
        w = self.workers[worker]
        start = w.started
        items = sum(self.records[q].size for q in w.batch)
        cost = self.price_per_ns * (self.now - start)
        for q in w.batch:
            r = self.records[q]
            r.start, r.finish, r.worker, r.model = start, self.now, worker, 0
            r.batch_items, r.status, r.accuracy = items, 0, 0.76
            r.cost = cost * r.size / items
        w.busy_ns += self.now - start
        w.idle = True
        self.idle.add(worker)


class Fcfs:
    """Central FIFO queue; an idle worker takes the oldest query; the lowest id wins ties."""

    def on_arrival(self, query: int, cluster: Cluster) -> None:
        if not cluster.central and cluster.idle:
            cluster.dispatch(min(cluster.idle), 0, [query])
        else:
            cluster.central.append(query)

    def on_batch_done(self, worker: int, cluster: Cluster) -> None:
        if cluster.central and cluster.idle:
            cluster.dispatch(min(cluster.idle), 0, [cluster.central.popleft()])


def simulate(
    arrivals_ns: list[int], sizes: list[int], slo_ns: int, service_ns: list[int], workers: int
) -> list[Record]:
    """Runs FCFS; service_ns[b] is the service time of a batch of b items (entry 0 unused)."""
    cluster = Cluster(workers, service_ns, price_per_hour=0.1)
    policy = Fcfs()
    i, n = 0, len(arrivals_ns)
    while i < n or cluster.events:
        if i < n and (not cluster.events or arrivals_ns[i] < cluster.events[0][0]):
            cluster.now = arrivals_ns[i]
            cluster.records.append(Record(arrivals_ns[i], sizes[i], arrivals_ns[i] + slo_ns))
            policy.on_arrival(i, cluster)
            i += 1
            continue
        time, _, _, worker = heapq.heappop(cluster.events)
        cluster.now = time
        cluster.finish_batch(worker)
        policy.on_batch_done(worker, cluster)
    return cluster.records
