"""Executors written in Python (servelab.register_executor): they join the executor registry with
typed parameters, run in the real serving loop under any scheduler with the GIL taken only for
their call, fail one batch at a time when they raise, receive knobs through set_config, and stop
with the run on Ctrl-C.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import servelab
from servelab.results import COMPLETED, DROPPED
from servelab.schedulers import Param

from .gil import ticks_during

MS = 1_000_000


def _scenario(
    executor: str, count: int = 80, rate: float = 200, config: dict | None = None
) -> dict:
    group = {"hardware": "c5n.2xlarge", "count": 2, "models": ["rm2"], "executor": executor}
    if config:
        group["config"] = config
    return {
        "profile": "example:hetero_cpu_gpu",
        "workers": [group],
        "workload": {
            "arrivals": f"poisson(rate={rate})",
            "count": count,
            "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "uniform(low=1, high=20)"}],
        },
        "drain_s": 5,
    }


class Recorder:
    """Sleeps `delay_ms` per batch and records each batch in a list shared by the workers."""

    def __init__(self, log: list, delay_ms: float = 0.0):
        self.log = log
        self.delay = delay_ms / 1e3

    def run(self, batch):
        if self.delay:
            time.sleep(self.delay)
        self.log.append(batch)


@pytest.fixture
def registered():
    """Registers executors for one test and removes them afterwards."""
    names = []

    def register(name, factory, **kwargs):
        servelab.register_executor(name, factory, **kwargs)
        names.append(name)
        return name

    yield register
    for name in names:
        servelab.unregister_executor(name)


@pytest.mark.parametrize("scheduler", ["fcfs", "batching(max_batch=8, timeout_ms=2)"])
def test_a_python_executor_serves_every_query_under_a_scheduler(registered, scheduler):
    log: list = []
    registered(
        "recorder",
        lambda delay_ms: Recorder(log, delay_ms),
        doc="Records its batches.",
        params=[Param("delay_ms", float, 0.0, doc="sleep per batch", min=0)],
    )
    entry = next(e for e in servelab.list_executors() if e["name"] == "recorder")
    assert (entry["origin"], entry["module"], entry["doc"]) == (
        "python",
        __name__,
        "Records its batches.",
    )
    assert [p["name"] for p in entry["params"]] == ["delay_ms"]

    r = servelab.serve(_scenario("recorder(delay_ms=0.5)"), scheduler=scheduler)
    r.check_consistency()
    assert r.meta["executors"] == ["recorder(delay_ms=0.5)"]
    c = r.columns
    assert (c["status"] == COMPLETED).all() and r.summary()["completed"] == 80
    # Every query ran in exactly one batch, with its own size, on the worker the records name.
    seen = np.concatenate([b.queries for b in log])
    assert sorted(seen.tolist()) == list(range(80))
    for b in log:
        assert b.model_name == "rm2" and b.inputs is None and len(b) == len(b.queries)
        assert b.sizes.tolist() == c["size"][b.queries].tolist() and b.items == b.sizes.sum()
        assert (c["worker"][b.queries] == b.worker).all()
    assert (c["exec_ns"] >= 0.5 * MS).all()  # the batch's wall time, sleep included
    if scheduler.startswith("batching"):
        assert max(len(b) for b in log) > 1


def test_an_executor_that_raises_every_nth_batch_drops_those_batches_only(registered):
    class Flaky:
        def __init__(self, every: int = 3):
            self.every, self.batches = every, 0

        def run(self, batch):
            self.batches += 1
            if self.batches % self.every == 0:
                raise ValueError("every third batch fails")

    registered("flaky", Flaky)
    r = servelab.serve(_scenario("flaky(every=3)", count=120), scheduler="fcfs")
    r.check_consistency()
    c = r.columns
    done, dropped = c["status"] == COMPLETED, c["status"] == DROPPED
    assert (done | dropped).all() and done.sum() > 0 and dropped.sum() > 0
    reasons = {r.meta["drop_reasons"][i] for i in np.unique(c["drop_reason"][dropped])}
    assert reasons == {"executor failed: flaky(every=3): ValueError: every third batch fails"}
    # fcfs runs one query per batch and each worker fails every third of its batches: a worker
    # that completed k batches failed f of k + f, with f == (k + f) // 3.
    failed = [
        {f for f in range(int(k) + 1) if (int(k) + f) // 3 == f} for k in r.workers["batches"]
    ]
    assert int(dropped.sum()) in {a + b for a in failed[0] for b in failed[1]}
    assert (c["exec_ns"][dropped] == -1).all()


def test_knobs_reach_the_executor_through_set_config(registered):
    calls: list = []

    class Tunable:
        knobs = ("threads",)

        def __init__(self):
            self.threads = 1

        def set_config(self, key, value):
            calls.append((key, value))
            self.threads = value

        def run(self, batch):
            assert batch.config == {"threads": self.threads}

    registered("tunable", Tunable)
    r = servelab.serve(_scenario("tunable", count=30, config={"threads": 3}), scheduler="fcfs")
    assert r.summary()["completed"] == 30
    # Once per worker that ran a batch (fcfs may leave the second idle): only a changed value is
    # delivered.
    used = len(set(r.columns["worker"].tolist()))
    assert used >= 1 and calls == [("threads", 3)] * used
    assert servelab.make_executor("tunable").open().knobs() == ["threads"]


def test_an_opened_python_executor_times_batches_like_any_executor(registered):
    log: list = []
    registered("timed", lambda: Recorder(log, 1.0), params=[])
    t = servelab.make_executor("timed").open().time_batches([2, 1], repeats=4, warmup=1)
    assert len(t["wall_ns"]) == 4 and (t["wall_ns"] >= MS).all()
    assert [b.queries.tolist() for b in log] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]
    assert all(b.model_name == "" and b.sizes.tolist() == [2, 1] and b.items == 3 for b in log)
    # The profiler measures it like any executor: a profile the simulator reads.
    p = servelab.profile("timed", batches=[1, 4], repeats=3, warmup=0)
    assert p.batches("cpu", "timed") == [1, 4]
    assert all(s >= 1e-3 for s in p.latency("cpu", "timed", [1, 4], "p50"))


def test_bad_registrations_name_the_field_and_value(registered):
    registered("twice", lambda: Recorder([]), params=[])
    with pytest.raises(ValueError, match="name='twice': executor 'twice' is already registered"):
        servelab.register_executor("twice", lambda: Recorder([]), params=[])
    with pytest.raises(ValueError, match="name='constant'.*already registered"):
        servelab.register_executor("constant", lambda: Recorder([]), params=[])
    if servelab.backends.status("torch").usable:  # a backend's name, even before it loads
        with pytest.raises(ValueError, match="name='torchscript'.*already registered"):
            servelab.register_executor("torchscript", lambda: Recorder([]), params=[])
    with pytest.raises(ValueError, match=r"name='bad name\(' must be"):
        servelab.register_executor("bad name(", lambda: Recorder([]), params=[])
    with pytest.raises(TypeError, match="factory=5 of executor 'nope' is not callable"):
        servelab.register_executor("nope", 5)
    with pytest.raises(TypeError, match="parameter 'x': type <class 'dict'>"):
        servelab.register_executor("nope", Recorder, params=[Param("x", dict)])
    with pytest.raises(ValueError, match="n=-1"):
        servelab.register_executor("nope", Recorder, params=[Param("n", int, -1, min=0)])
    with pytest.raises(TypeError, match="parameter 'log': type 'list' is not one of bool"):
        servelab.register_executor("nope", Recorder)

    def untyped(n):
        return Recorder([])

    with pytest.raises(TypeError, match="executor 'nope': parameter 'n' needs a type annotation"):
        servelab.register_executor("nope", untyped)
    with pytest.raises(TypeError, match="params='delay_ms' of executor 'nope' must be a list"):
        servelab.register_executor("nope", Recorder, params="delay_ms")
    assert "nope" not in {e["name"] for e in servelab.list_executors()}
    with pytest.raises(KeyError, match="'constant' is not an executor registered from Python"):
        servelab.unregister_executor("constant")


def test_a_bad_spec_or_executor_object_is_refused_before_serving(registered):
    registered("sized", lambda n: Recorder([]), params=[Param("n", int, 1, min=1)])
    with pytest.raises(ValueError, match="n=0"):
        servelab.make_executor("sized(n=0)")
    with pytest.raises(KeyError, match="unknown parameter|'m'"):
        servelab.make_executor("sized(m=1)")
    registered("runless", lambda: object(), params=[])
    with pytest.raises(
        TypeError, match=r"runless\(\): the factory returned <object.*no run\(batch\) method"
    ):
        servelab.serve(_scenario("runless", count=5))

    class NoSetConfig:
        knobs = ["threads"]

        def run(self, batch):
            pass

    registered("no_set_config", NoSetConfig)
    with pytest.raises(TypeError, match=r"no_set_config\(\): knobs=\['threads'\].*set_config"):
        servelab.serve(_scenario("no_set_config", count=5))

    def broken(n: int = 2):
        raise ValueError(f"n={n} is not supported here")

    registered("broken", broken)
    with pytest.raises(
        ValueError, match=r"broken\(n=2\): the factory raised ValueError: n=2 is not supported"
    ):
        servelab.serve(_scenario("broken", count=5))


def test_serving_with_a_python_executor_releases_the_gil(registered):
    registered("sleepy", lambda: Recorder([], 2.0), params=[])
    # The workers sleep in Python (releasing the GIL) and the loop waits without it.
    assert ticks_during(lambda: servelab.serve(_scenario("sleepy", count=100, rate=200))) > 50


def test_ctrl_c_stops_a_run_with_a_python_executor_and_joins_its_workers(registered):
    started: list = []

    class Slow:
        def run(self, batch):
            started.append(time.monotonic())
            time.sleep(0.02)

    registered("slow", Slow)
    timer = threading.Timer(0.5, os.kill, args=(os.getpid(), signal.SIGINT))
    begin = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            servelab.serve(_scenario("slow", count=20_000, rate=200))  # 100 s if nothing stopped it
    finally:
        timer.cancel()
    stopped = time.monotonic()
    assert stopped - begin < 5.0 and started
    # No worker thread is left running batches once serve() has raised.
    count = len(started)
    time.sleep(0.2)
    assert len(started) == count and max(started) < stopped
    # The interpreter (and the registry) still work.
    assert servelab.serve(_scenario("slow", count=5)).summary()["completed"] == 5


class PythonRoundRobin(servelab.Scheduler):
    """Each query joins the next worker's queue: a policy in Python, taking the GIL per hook on the
    controller while the Python executors take it on the worker threads."""

    def on_start(self, view, actions):
        self.next = 0

    def on_arrival(self, query, view, actions):
        worker = self.next % view.num_workers
        self.next += 1
        actions.enqueue_to_worker(worker, query.id)
        self.serve_next(worker, view, actions)

    def on_batch_done(self, done, view, actions):
        self.serve_next(done.worker, view, actions)

    def serve_next(self, worker, view, actions):
        queue = view.worker_queue(worker)
        if queue and view.is_idle(worker):
            actions.dispatch(worker, view.models(worker)[0], queue[0])


def test_a_python_executor_serves_under_a_python_scheduler(registered):
    log: list = []
    registered("recorder_py", lambda: Recorder(log, 0.2), params=[])
    r = servelab.serve(_scenario("recorder_py", count=60), scheduler=PythonRoundRobin())
    r.check_consistency()
    assert r.summary()["completed"] == 60
    assert sorted(np.concatenate([b.queries for b in log]).tolist()) == list(range(60))
    assert (r.columns["worker"] == np.arange(60) % 2).all()
