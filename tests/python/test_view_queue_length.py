"""ClusterView.worker_queue_length: the length of a worker's own queue without copying it, equal
to len(worker_queue(w)) after every change a policy makes to the queues."""

from __future__ import annotations

import pytest

import servelab

SCENARIO = {
    "profile": "example:hetero_cpu_gpu",
    "workers": [{"hardware": "c5n.2xlarge", "count": 3, "models": ["rm2"]}],
    "workload": {
        "arrivals": "poisson(rate=200)",
        "count": 300,
        "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "constant(value=10)"}],
    },
    "seed": 3,
}


class QueueEveryQuery(servelab.Scheduler):
    """Queries join the workers' queues in turn; every fifth moves on to the central queue and
    every seventh is dropped; an idle worker serves its queue. Checks the lengths at every hook."""

    def on_start(self, view, actions):
        self.arrivals = 0
        self.longest = 0

    def on_arrival(self, query, view, actions):
        self.check(view)
        self.arrivals += 1
        actions.enqueue_to_worker(self.arrivals % view.num_workers, query.id)
        self.check(view)
        if self.arrivals % 5 == 0:
            actions.enqueue(query.id)
        elif self.arrivals % 7 == 0:
            actions.drop(query.id, "dropped by the test")
        self.check(view)
        self.serve_idle(view, actions)

    def on_batch_done(self, done, view, actions):
        self.check(view)
        self.serve_idle(view, actions)

    def serve_idle(self, view, actions):
        for worker in range(view.num_workers):
            if view.is_idle(worker) and view.worker_queue_length(worker) > 0:
                actions.dispatch(worker, view.models(worker)[0], view.worker_queue(worker)[0])
                self.check(view)

    def check(self, view):
        for worker in range(view.num_workers):
            length = view.worker_queue_length(worker)
            assert length == len(view.worker_queue(worker))
            self.longest = max(self.longest, length)


def test_the_length_follows_every_change_to_the_queues():
    policy = QueueEveryQuery()
    result = servelab.simulate(SCENARIO, scheduler=policy)
    result.check_consistency()
    assert policy.longest >= 3  # the queues did build up
    summary = result.summary()
    assert summary["dropped"] > 0 and summary["completed"] > 200


class AskOutOfRange(servelab.Scheduler):
    def on_arrival(self, query, view, actions):
        view.worker_queue_length(view.num_workers)


def test_a_worker_out_of_range_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="worker=3"):
        servelab.simulate(SCENARIO, scheduler=AskOutOfRange())
