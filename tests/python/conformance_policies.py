"""Small Python policies for the conformance suite and the bad-input sweep.

``PyFcfs`` is a working policy (strict FCFS over the central queue, lowest idle worker id first)
that joins the scheduler registry as ``py_fcfs``. ``Misuse`` performs one invalid action on a
chosen arrival, so a test can check the error the world raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import servelab
from servelab import rrl

PY_FCFS = "py_fcfs"


def serving_model(view: servelab.ClusterView, worker: int, query: servelab.Query) -> int:
    """The first model on `worker` whose profile covers the query's size; -1 if none."""
    for model in view.models(worker):
        if query.size <= view.max_batch(worker, model):
            return model
    return -1


class PyFcfs(servelab.Scheduler):
    """First come, first served from the central queue to the lowest-numbered idle worker."""

    def __init__(self) -> None:
        super().__init__()

    def describe(self) -> str:
        return PY_FCFS

    def on_arrival(self, query, view, actions) -> None:
        if not view.central_queue():  # else it waits its turn behind older queries
            self._serve(query, view, actions)

    def on_batch_done(self, done, view, actions) -> None:
        self._drain(view, actions)

    def on_worker_ready(self, worker, view, actions) -> None:
        self._drain(view, actions)

    def _serve(self, query, view, actions) -> bool:
        for worker in view.idle_workers():  # ascending ids
            model = serving_model(view, worker, query)
            if model >= 0:
                actions.dispatch(worker, model, query.id)
                return True
        return False

    def _drain(self, view, actions) -> None:
        queue = view.central_queue()
        for qid in queue:
            if not view.idle_workers() or not self._serve(view.query(qid), view, actions):
                return


def register() -> str:
    """Registers PyFcfs as ``py_fcfs`` once per process, and the systems' policies written in
    Python (RRL's ``rrl_tuner`` and ``rrl_batch_tuner``), so that the suite runs them like every
    other; returns the name of PyFcfs."""
    if PY_FCFS not in {e["name"] for e in servelab.list_schedulers()}:
        servelab.register_scheduler(PY_FCFS, PyFcfs)
    rrl.register_tuner()
    rrl.register_batch_tuner()
    return PY_FCFS


# --- misuse ------------------------------------------------------------------------------------

Action = Callable[[servelab.Query, servelab.ClusterView, servelab.Actions], Any]


class Misuse(servelab.Scheduler):
    """Serves like PyFcfs, but on arrival number `on_arrival_id` runs `action(query, view,
    actions)` instead, which is expected to raise."""

    def __init__(self, action: Action, on_arrival_id: int = 0) -> None:
        super().__init__()
        self.action = action
        self.on_arrival_id = on_arrival_id
        self.inner = PyFcfs()

    def on_arrival(self, query, view, actions) -> None:
        if query.id == self.on_arrival_id:
            self.action(query, view, actions)
        else:
            self.inner.on_arrival(query, view, actions)

    def on_batch_done(self, done, view, actions) -> None:
        self.inner.on_batch_done(done, view, actions)


def dispatch_to_busy_worker(query, view, actions) -> None:
    """Query 0 went to worker 0, which is still busy when query 1 arrives."""
    actions.dispatch(0, "rm2", query.id)


def dispatch_unknown_model_name(query, view, actions) -> None:
    actions.dispatch(0, "no_such_model", query.id)


def dispatch_unknown_model_index(query, view, actions) -> None:
    actions.dispatch(0, 99, query.id)


def dispatch_model_not_loaded(query, view, actions) -> None:
    actions.dispatch(0, "dien", query.id)  # workers load only rm2


def dispatch_unknown_worker(query, view, actions) -> None:
    actions.dispatch(99, "rm2", query.id)


def dispatch_empty_batch(query, view, actions) -> None:
    actions.dispatch(0, "rm2", [])


def dispatch_query_twice(query, view, actions) -> None:
    actions.dispatch(0, "rm2", [query.id, query.id])


def dispatch_dropped_query(query, view, actions) -> None:
    actions.drop(query.id, "testing")
    actions.dispatch(0, "rm2", query.id)


def dispatch_running_query(query, view, actions) -> None:
    """Query 0 is still running on worker 0 when query 1 arrives."""
    actions.dispatch(1, "rm2", 0)


def dispatch_future_query(query, view, actions) -> None:
    actions.dispatch(0, "rm2", query.id + 1)


def dispatch_beyond_max_batch(query, view, actions) -> None:
    actions.dispatch(0, "rm2", query.id)  # the workload's sizes exceed the profile's max batch


def drop_twice(query, view, actions) -> None:
    actions.drop(query.id, "first")
    actions.drop(query.id, "second")


def drop_without_reason(query, view, actions) -> None:
    actions.drop(query.id, "")


def timer_in_the_past(query, view, actions) -> None:
    actions.set_timer(view.now - 1.0, 7)


def timer_at_nan(query, view, actions) -> None:
    actions.set_timer(float("nan"), 7)


def enqueue_to_unknown_worker(query, view, actions) -> None:
    actions.enqueue_to_worker(99, query.id)


def enqueue_twice(query, view, actions) -> None:
    actions.enqueue(query.id)
    actions.enqueue(query.id)


def predicted_latency_beyond_max(query, view, actions) -> None:
    view.predicted_latency(0, "rm2", 10**6)


def add_worker_unknown_hardware(query, view, actions) -> None:
    actions.add_worker("no_such_hw", ["rm2"])


def raise_from_hook(query, view, actions) -> None:
    raise RuntimeError("policy bug on purpose")


class NoOnArrival(servelab.Scheduler):
    """Forgets the one required hook."""


class NoSuperInit(servelab.Scheduler):
    """Forgets super().__init__()."""

    def __init__(self) -> None:
        self.x = 1

    def on_arrival(self, query, view, actions) -> None:
        pass
