"""servelab.serve(batch_timeout_ms=...): a batch that has not returned in time ends its queries
dropped with one reason naming the executor, the worker and the timeout; the worker is out of
service for the rest of the run; its thread is abandoned without blocking serve, and joined once
the batch returns. Python executors (which sleep past the timeout) and C++ ones, under fcfs and a
batching policy.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import servelab
from servelab import _core
from servelab.results import COMPLETED, DROPPED
from servelab.schedulers import Param

from .cli_errors import run_main
from .gil import ticks_during

SERVICE_MS = 10.0
TIMEOUT_MS = 100.0
SCHEDULERS = ["fcfs", "batching(max_batch=4, timeout_ms=5)"]

PROFILE = {
    "format": "servelab.profile",
    "version": 1,
    "hardware": {"cpu": {"price_per_hour": 1.0}},
    "models": {"m": {}},
    "latency": [
        {"hardware": "cpu", "model": "m", "batch": b, "samples_ms": [SERVICE_MS]} for b in (1, 8)
    ],
}


def _scenario(executor: str | None, scheduler: str = "fcfs", horizon_s: float = 1.0) -> dict:
    workers = {"hardware": "cpu", "count": 2}
    if executor:
        workers["executor"] = executor
    return {
        "profile": servelab.profiles.from_dict(PROFILE),
        "workers": [workers],
        "workload": {
            "arrivals": "poisson(rate=80)",
            "horizon_s": horizon_s,
            "apps": [{"name": "m", "slo_ms": 500, "sizes": "constant(value=1)"}],
        },
        "scheduler": scheduler,
        "drain_s": 2.0,
    }


class Sleeper:
    """Worker 0's first batch sleeps `hang_s`; every other batch SERVICE_MS."""

    def __init__(self, hang_s: float):
        self.hang_s = hang_s
        self.hung = False
        self.returned = threading.Event()

    def run(self, batch):
        if batch.worker == 0 and not self.hung:
            self.hung = True
            time.sleep(self.hang_s)
            self.returned.set()
            return
        time.sleep(SERVICE_MS / 1e3)


@pytest.fixture
def sleeper():
    """Registers `sleeper(hang_s=...)` for one test; yields the objects it made."""
    made: list[Sleeper] = []

    def factory(hang_s: float) -> Sleeper:
        made.append(Sleeper(hang_s))
        return made[-1]

    servelab.register_executor(
        "sleeper", factory, doc="Hangs once on worker 0.", params=[Param("hang_s", float, 1.0)]
    )
    yield made
    servelab.unregister_executor("sleeper")
    _wait_for_abandoned_threads()


def _wait_for_abandoned_threads(limit_s: float = 30.0) -> int:
    """Waits (boundedly) until every abandoned worker thread has returned and been joined."""
    give_up = time.monotonic() + limit_s
    left = _core.abandoned_worker_threads()
    while left and time.monotonic() < give_up:
        time.sleep(0.01)
        left = _core.abandoned_worker_threads()
    return left


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _timeout_reason(executor: str, worker: int, timeout_ms: float = TIMEOUT_MS) -> str:
    return (
        f"executor failed: {executor}: worker {worker} ran a batch past "
        f"batch_timeout_ms={timeout_ms:g}; the worker is out of service for the rest of the run"
    )


def _check_every_query_ended_once(r: servelab.Result, expected: int) -> None:
    c = r.columns
    assert len(r) == expected  # as many as the simulator makes of the same workload: none lost
    np.testing.assert_array_equal(c["id"], np.arange(expected))  # none recorded twice
    status = c["status"]
    assert np.all((status == COMPLETED) | (status == DROPPED))
    dropped = status == DROPPED
    assert np.all(c["drop_reason"][~dropped] == -1)
    assert np.all(c["drop_reason"][dropped] >= 0)
    assert np.all(c["drop_reason"][dropped] < len(r.meta["drop_reasons"]))


def _check_worker_0_timed_out(r: servelab.Result, reason: str) -> np.ndarray:
    """Worker 0's hung batch ended with the timeout reason, and only that batch: the worker left
    the cluster, so no later batch went to it; worker 1 served the rest. The timed-out mask."""
    c = r.columns
    assert reason in r.meta["drop_reasons"], r.meta["drop_reasons"]
    timed_out = c["drop_reason"] == r.meta["drop_reasons"].index(reason)
    assert 1 <= timed_out.sum() <= 4  # one batch (batching's max_batch is 4)
    done = c["status"] == COMPLETED
    assert done.any() and np.all(c["worker"][done] == 1)
    return timed_out


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_a_hung_python_executor_is_dropped_and_serve_does_not_wait_for_it(sleeper, scheduler):
    sc = _scenario("sleeper(hang_s=2.0)", scheduler)
    expected = len(servelab.simulate(dict(sc, workers=[{"hardware": "cpu", "count": 2}])))
    out = {}

    def run():
        out["result"] = servelab.serve(sc, batch_timeout_ms=TIMEOUT_MS, spin_us=0)
        out["abandoned"] = _core.abandoned_worker_threads()

    # The GIL is free while the loop waits on the hung batch: a Python thread keeps ticking.
    ticks = ticks_during(run)
    r = out["result"]
    spec = r.meta["executors"][0]
    timed_out = _check_worker_0_timed_out(r, _timeout_reason(spec, 0))
    _check_every_query_ended_once(r, expected)
    assert r.meta["batch_timeout_ms"] == TIMEOUT_MS
    # The hung batch's queries ended at its deadline, not when it returned.
    c = r.columns
    first = np.flatnonzero(timed_out)[0]
    assert c["finish_ns"][first] - c["arrival_ns"][first] >= TIMEOUT_MS * 1e6
    assert c["finish_ns"][first] - c["arrival_ns"][first] < 2.0e9
    # serve returned while worker 0's batch still slept: its thread was left running.
    hung = [s for s in sleeper if s.hung]
    assert len(hung) == 1
    assert out["abandoned"] == 1 and not hung[0].returned.is_set()
    assert ticks > 50, ticks
    # Once the batch returns, its thread ends and is joined.
    assert _wait_for_abandoned_threads() == 0
    assert hung[0].returned.is_set()


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_a_batch_returning_late_is_ignored_and_its_thread_joined_by_the_end_of_the_run(
    sleeper, scheduler
):
    sc = _scenario("sleeper(hang_s=0.3)", scheduler)
    expected = len(servelab.simulate(dict(sc, workers=[{"hardware": "cpu", "count": 2}])))
    threads_before = _threads()
    r = servelab.serve(sc, batch_timeout_ms=TIMEOUT_MS, spin_us=0)
    _check_every_query_ended_once(r, expected)
    _check_worker_0_timed_out(r, _timeout_reason(r.meta["executors"][0], 0))
    assert r.workers["batches"][0] == 0  # the late return did not count as a served batch
    assert [s.returned.is_set() for s in sleeper if s.hung] == [True]
    assert _core.abandoned_worker_threads() == 0
    assert _threads() == threads_before


def test_a_cpp_executor_past_the_timeout_is_stopped_and_both_workers_leave_service():
    sc = _scenario("constant(latency_ms=5000)", horizon_s=0.5)
    expected = len(servelab.simulate(dict(sc, workers=[{"hardware": "cpu", "count": 2}])))
    threads_before = _threads()
    r = servelab.serve(sc, batch_timeout_ms=50, spin_us=0)
    _check_every_query_ended_once(r, expected)
    assert r.summary()["completed"] == 0
    # Each worker's first batch timed out and the worker left the cluster; with no worker left,
    # every other query ended unserved.
    assert sorted(r.meta["drop_reasons"]) == [
        _timeout_reason("constant(latency_ms=5000)", w, 50) for w in (0, 1)
    ] + ["unserved at end of run"]
    # constant() watches the stop token: its threads returned at once and were joined.
    assert _core.abandoned_worker_threads() == 0
    assert _threads() == threads_before


def test_ctrl_c_with_a_hung_batch_stops_after_the_grace_period_and_leaves_the_thread(sleeper):
    sc = _scenario("sleeper(hang_s=3.0)", horizon_s=10.0)
    sent_at: list[float] = []
    done = threading.Event()

    def interrupt_once_hung() -> None:
        # Ctrl-C 0.3 s into worker 0's hung batch, timed from the batch, not from the test's start
        # (a slow start, e.g. under a sanitizer, must not send it before the batch hangs).
        while not any(s.hung for s in sleeper) and not done.wait(0.001):
            pass
        if not done.wait(0.3):
            sent_at.append(time.monotonic())
            os.kill(os.getpid(), signal.SIGINT)

    interrupter = threading.Thread(target=interrupt_once_hung)
    interrupter.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            servelab.serve(sc, batch_timeout_ms=2000, spin_us=0)
        stopped = time.monotonic()
    finally:
        done.set()
        interrupter.join()
    assert sent_at, "the batch never hung"
    print(f"\nCtrl-C with a hung batch: serve raised {stopped - sent_at[0]:.3f} s after it")
    # Worker 0 was still in its 3 s batch: after the grace period (1 s) its thread was left.
    assert _core.abandoned_worker_threads() == 1
    assert _wait_for_abandoned_threads() == 0


# A child that serves with a Python executor hanging on worker 0 for HANG_S, then exits at once:
# the abandoned thread wakes while the interpreter shuts down, or after the process is gone.
_EXIT_CHILD = r"""
import sys, time
import servelab
from servelab.schedulers import Param

class Sleeper:
    def __init__(self, hang_s):
        self.hang_s, self.hung = hang_s, False
    def run(self, batch):
        if batch.worker == 0 and not self.hung:
            self.hung = True
            time.sleep(self.hang_s)
        else:
            time.sleep(0.01)

servelab.register_executor("sleeper", Sleeper, params=[Param("hang_s", float, 1.0)])
sc = {scenario}
sc["profile"] = servelab.profiles.from_dict(sc["profile"])
sc["workers"][0]["executor"] = f"sleeper(hang_s={{sys.argv[1]}})"
servelab.serve(sc, batch_timeout_ms=50, spin_us=0)
print("left", servelab._core.abandoned_worker_threads(), flush=True)
"""


@pytest.mark.parametrize("hang_s", [0.3, 0.6, 1.0])
def test_exiting_while_an_abandoned_python_batch_sleeps_is_clean(hang_s):
    sc = dict(_scenario(None, horizon_s=0.2), profile=PROFILE)
    child = subprocess.run(
        [sys.executable, "-c", _EXIT_CHILD.format(scenario=repr(sc)), str(hang_s)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == 0, (child.returncode, child.stderr)
    assert child.stderr == ""
    assert child.stdout.split() in (["left", "0"], ["left", "1"])


@pytest.mark.parametrize(
    "value, error",
    [
        (0, ValueError),
        (-5, ValueError),
        (math.nan, ValueError),
        (math.inf, ValueError),
        (1e12, ValueError),  # past the core's limit (about 11.6 days)
        ("100", TypeError),
        (True, TypeError),
        ([100], TypeError),
    ],
)
def test_bad_batch_timeouts_are_refused_naming_the_option(value, error):
    with pytest.raises(error, match="batch_timeout_ms"):
        servelab.serve(_scenario(None, horizon_s=0.1), batch_timeout_ms=value)


def test_the_simulator_refuses_a_batch_timeout():
    with pytest.raises(ValueError, match="batch_timeout_ms= is for servelab.serve"):
        servelab.simulate(_scenario(None, horizon_s=0.1), batch_timeout_ms=100)


def _scenario_file(tmp_path, executor: str) -> str:
    sc = _scenario(executor, horizon_s=0.3)
    sc["profile"] = PROFILE
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(sc))
    return str(path)


def test_the_command_line_takes_batch_timeout_ms(tmp_path, capsys):
    from servelab.cli import main

    path = _scenario_file(tmp_path, "constant(latency_ms=5000)")
    assert main(["serve", path, "--batch-timeout-ms", "50", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"]["completed"] == 0 and out["summary"]["dropped"] > 0
    run_main(capsys, ["serve", path, "--batch-timeout-ms", "0"], "--batch-timeout-ms", "positive")
