"""The real serving loop under overload and faults: twice its capacity for a sustained period,
executors that raise or are slow, and Ctrl-C at random moments.

The default run is short (10 s of overload, 20 Ctrl-C trials); SERVELAB_RELIABILITY_LONG=1 runs
the full size (60 s, 100 trials). Each test prints its figures (see them with ``pytest -s``).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import servelab
from servelab import backends
from servelab.results import COMPLETED, DROPPED

if not os.path.isdir("/proc/self/task"):
    pytest.skip("needs Linux /proc to count threads and read memory", allow_module_level=True)

LONG = os.environ.get("SERVELAB_RELIABILITY_LONG", "") not in ("", "0")
OVERLOAD_S = 60.0 if LONG else 10.0
CTRL_C_TRIALS = 100 if LONG else 20

# One worker type serving one model in SERVICE_MS a batch: WORKERS / SERVICE_MS is the capacity.
SERVICE_MS = 10.0
WORKERS = 2
SLO_MS = 50.0
CAPACITY_QPS = WORKERS * 1000.0 / SERVICE_MS
NS = 1_000_000_000


PROFILE = {
    "format": "servelab.profile",
    "version": 1,
    "hardware": {"cpu": {"price_per_hour": 1.0}},
    "models": {"m": {}},
    # The same time whatever the batch (up to 8 items).
    "latency": [
        {"hardware": "cpu", "model": "m", "batch": b, "samples_ms": [SERVICE_MS]} for b in (1, 8)
    ],
}


def _overload(horizon_s: float, executor: str | None = None, drain_s: float = 1.0) -> dict:
    """Twice the capacity, one-item queries, EDF that drops what can no longer meet its deadline:
    the registered policy that bounds its queue (no policy takes a queue-length limit; with
    drop_late a query waits at most until its deadline is out of reach)."""
    workers = {"hardware": "cpu", "count": WORKERS}
    if executor:
        workers["executor"] = executor
    return {
        "profile": servelab.profiles.from_dict(PROFILE),
        "workers": [workers],
        "workload": {
            "arrivals": f"poisson(rate={2 * CAPACITY_QPS})",
            "horizon_s": horizon_s,
            "apps": [{"name": "m", "slo_ms": SLO_MS, "sizes": "constant(value=1)"}],
        },
        "scheduler": "edf(drop_late=True)",
        "drain_s": drain_s,
    }


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS line in /proc/self/status")


def _check_every_query_ended_once(r: servelab.Result, expected: int) -> None:
    c = r.columns
    assert len(r) == expected  # the same workload and seed as the simulation: no query lost
    np.testing.assert_array_equal(c["id"], np.arange(expected))
    status = c["status"]
    assert np.all((status == COMPLETED) | (status == DROPPED))
    reasons = r.meta["drop_reasons"]
    dropped = status == DROPPED
    assert np.all(c["drop_reason"][~dropped] == -1)
    assert np.all((c["drop_reason"][dropped] >= 0) & (c["drop_reason"][dropped] < len(reasons)))
    assert all(isinstance(why, str) and why for why in reasons)


def _max_queue_length(c: dict) -> int:
    """Most queries waiting at once: each waits from arrival until it starts (or is dropped)."""
    leave = np.where(c["status"] == COMPLETED, c["start_ns"], c["finish_ns"])
    times = np.concatenate([c["arrival_ns"], leave])
    steps = np.concatenate([np.ones(len(leave), np.int64), -np.ones(len(leave), np.int64)])
    order = np.lexsort((steps, times))  # at equal times, leaving before arriving
    return int(np.cumsum(steps[order]).max())


def test_overload_keeps_queue_and_memory_bounded_and_accounts_for_every_query():
    sc = _overload(OVERLOAD_S)
    expected = len(servelab.simulate(sc))
    r, samples, wall, (before, after) = _serve_sampling_rss(sc, OVERLOAD_S)
    assert after == before  # every worker thread joined

    _check_every_query_ended_once(r, expected)
    c = r.columns
    done = c["status"] == COMPLETED
    # Overloaded: both served and shed, the workers kept busy.
    assert done.any() and (~done).any()
    assert set(r.meta["drop_reasons"]) == {"cannot meet its deadline"}
    # The queue is bounded by the deadline: a served query left it (was dispatched) when its
    # predicted finish still met the deadline, and a dropped one left it by the time a worker
    # freed after its deadline went by.
    predicted = int(SERVICE_MS * 1e6)
    assert np.all(c["dispatch_ns"][done] + predicted <= c["deadline_ns"][done])
    service = c["finish_ns"][done] - c["start_ns"][done]
    late = c["finish_ns"][~done] - c["deadline_ns"][~done]
    assert np.all(late <= 2 * service.max())
    # Shutdown: serve returned within a second of the last arrival (no drain of a long queue).
    last_arrival_s = c["arrival_ns"].max() / NS
    assert wall - last_arrival_s < 1.0, (wall, last_arrival_s)

    # Memory: the growth after the first fifth of the run, per query that arrived meanwhile.
    t0 = next(i for i, (t, _) in enumerate(samples) if t >= OVERLOAD_S / 5)
    grown = samples[-1][1] - samples[t0][1]
    arrived = int(np.sum(c["arrival_ns"] >= samples[t0][0] * NS))
    per_query = grown / max(arrived, 1)
    # The records' columns take about 100 bytes a query; a leak of a query's state or an
    # unbounded queue of batches shows as kilobytes.
    assert per_query < 2048, f"RSS grew {grown} bytes over {arrived} queries"
    s = r.summary()
    print(
        f"\noverload {OVERLOAD_S:.0f} s at {2 * CAPACITY_QPS:.0f} qps"
        f" (capacity {CAPACITY_QPS:.0f}):"
        f" {len(r)} queries, {s['completed']} completed, {s['dropped']} dropped,"
        f" throughput {s['throughput_qps']:.1f} qps, utilisation {s['utilisation']['mean']:.3f},"
        f" max queue {_max_queue_length(c)}, p99 latency {s['latency_ms']['p99']:.1f} ms,"
        f" RSS {samples[0][1] / 2**20:.1f} -> {max(m for _, m in samples) / 2**20:.1f} MiB"
        f" (+{per_query:.0f} B/query after {samples[t0][0]:.1f} s),"
        f" returned {wall - last_arrival_s:.3f} s after the last arrival"
    )


# The bounded central queue of fcfs(max_queue=N): an arrival that finds N waiting is dropped.
MAX_QUEUE = 40


def _serve_sampling_rss(sc: dict, horizon_s: float) -> tuple[servelab.Result, list, float, tuple]:
    """serve(sc) on a thread while this one samples RSS every 0.25 s: the result, the samples
    (seconds, bytes), the wall time and the thread counts before and after the run."""
    out: dict = {}

    def serve() -> None:
        threads_before = _threads()  # counted in this thread: its own exit may lag in /proc
        try:
            out["result"] = servelab.serve(sc, spin_us=0)
        except BaseException as e:  # reported by the main thread
            out["error"] = e
        out["threads"] = (threads_before, _threads())

    samples: list[tuple[float, int]] = []
    start = time.monotonic()
    runner = threading.Thread(target=serve, daemon=True)
    runner.start()
    while runner.is_alive() and time.monotonic() - start < horizon_s + 30:
        samples.append((time.monotonic() - start, _rss_bytes()))
        runner.join(0.25)
    wall = time.monotonic() - start
    assert not runner.is_alive(), f"serve still running {wall:.1f} s after a {horizon_s} s run"
    assert "error" not in out, out.get("error")
    return out["result"], samples, wall, out["threads"]


def _max_waiting(c: dict) -> tuple[int, int]:
    """The most admitted queries waiting for a worker at once, bracketed from the records: a query
    joins the queue when the controller takes up its arrival, which the records do not keep.
    Arrivals are taken up in order and a drop is stamped when taken up, so that moment is no
    earlier than the query's arrival and any earlier query's drop (the upper count), and no later
    than its dispatch and any later query's drop (the lower count)."""
    done = c["status"] == COMPLETED
    drops = np.where(done, 0, c["finish_ns"])
    earliest = np.maximum(c["arrival_ns"], np.maximum.accumulate(drops))[done]
    later_drops = np.minimum.accumulate(np.where(done, np.iinfo(np.int64).max, drops)[::-1])[::-1]
    latest = np.minimum(c["dispatch_ns"], np.append(later_drops[1:], np.iinfo(np.int64).max))[done]

    def most(joined: np.ndarray) -> int:
        times = np.concatenate([joined, c["dispatch_ns"][done]])
        steps = np.concatenate([np.ones(len(joined), np.int64), -np.ones(len(joined), np.int64)])
        order = np.lexsort((steps, times))  # at equal times, leaving before joining
        return int(np.cumsum(steps[order]).max())

    return most(latest), most(earliest)


def test_overload_with_a_bounded_fcfs_queue_holds_the_bound_and_accounts_for_every_query():
    sc = _overload(OVERLOAD_S)
    sc["scheduler"] = f"fcfs(max_queue={MAX_QUEUE})"
    expected = len(servelab.simulate(sc))
    r, samples, wall, (before, after) = _serve_sampling_rss(sc, OVERLOAD_S)
    assert after == before  # every worker thread joined
    _check_every_query_ended_once(r, expected)
    c = r.columns
    done = c["status"] == COMPLETED
    assert done.any() and (~done).any()
    assert set(r.meta["drop_reasons"]) == {"queue full (max_queue)"}
    # The bound held: never more than MAX_QUEUE queries waiting for a worker (the lower count
    # already shows a breach; controller lag widens the bracket's upper end).
    low, high = _max_waiting(c)
    assert low <= MAX_QUEUE, (low, high)
    last_arrival_s = c["arrival_ns"].max() / NS
    assert wall - last_arrival_s < 1.0, (wall, last_arrival_s)
    t0 = next(i for i, (t, _) in enumerate(samples) if t >= OVERLOAD_S / 5)
    grown = samples[-1][1] - samples[t0][1]
    arrived = int(np.sum(c["arrival_ns"] >= samples[t0][0] * NS))
    per_query = grown / max(arrived, 1)
    assert per_query < 2048, f"RSS grew {grown} bytes over {arrived} queries"
    s = r.summary()
    wait_ms = (c["dispatch_ns"][done] - c["arrival_ns"][done]) / 1e6
    print(
        f"\nfcfs(max_queue={MAX_QUEUE}) overload {OVERLOAD_S:.0f} s at {2 * CAPACITY_QPS:.0f} qps:"
        f" {len(r)} queries, {s['completed']} completed, {s['dropped']} dropped,"
        f" throughput {s['throughput_qps']:.1f} qps, utilisation {s['utilisation']['mean']:.3f},"
        f" most waiting between {low} and {high}, max wait {wait_ms.max():.1f} ms,"
        f" p99 latency {s['latency_ms']['p99']:.1f} ms,"
        f" RSS {samples[0][1] / 2**20:.1f} -> peak {max(m for _, m in samples) / 2**20:.1f} MiB"
        f" (+{per_query:.0f} B/query after {samples[t0][0]:.1f} s),"
        f" returned {wall - last_arrival_s:.3f} s after the last arrival"
    )


def test_ctrl_c_during_overload_stops_within_a_second_and_joins_threads():
    sc = _overload(30.0)
    rng = random.Random(17)
    for _ in range(3):
        threads_before = _threads()
        delay = rng.uniform(0.1, 2.0)
        timer = threading.Timer(delay, os.kill, args=(os.getpid(), signal.SIGINT))
        start = time.monotonic()
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                servelab.serve(sc, spin_us=0)
        finally:
            timer.cancel()
        stopped = time.monotonic() - start - delay
        assert stopped < 1.0, f"stopped {stopped:.3f} s after Ctrl-C at {delay:.2f} s"
        assert _threads() == threads_before


def test_a_slow_executor_is_cut_off_at_the_drain_limit_and_stops_at_once():
    # Every batch would take a minute: the run ends at horizon + drain, its batches stopped.
    sc = _overload(1.0, executor="constant(latency_ms=60000)", drain_s=0.5)
    expected = len(servelab.simulate(sc))
    threads_before = _threads()
    start = time.monotonic()
    r = servelab.serve(sc, spin_us=0)
    wall = time.monotonic() - start
    assert _threads() == threads_before
    _check_every_query_ended_once(r, expected)
    assert r.summary()["completed"] == 0
    assert r.meta["drop_reasons"] == ["cut off at end of run"]
    assert r.summary()["duration_s"] <= 1.5 + 0.1
    assert wall < 1.5 + 1.0, f"returned {wall:.2f} s after the start of a 1.5 s run"


def _torch_or_skip() -> None:
    status = backends.status("torch")
    if not status.usable:
        pytest.skip(f"torch backend not usable: {status.reason}")


def test_an_executor_that_raises_under_overload_drops_its_batches_and_the_run_goes_on(tmp_path):
    _torch_or_skip()
    from .torch_models import save_failing

    path = save_failing(tmp_path, width=8, max_rows=2)
    sc = _overload(3.0, executor=f"torchscript(path={str(path)!r}, intra_op=1)")
    # Sizes 1..4: a batch of more than 2 items raises; smaller ones are served.
    sc["workload"]["apps"][0]["sizes"] = "uniform(low=1, high=4)"
    expected = len(servelab.simulate(sc))
    threads_before = _threads()
    r = servelab.serve(sc, spin_us=0)
    assert _threads() == threads_before
    _check_every_query_ended_once(r, expected)
    c = r.columns
    reasons = r.meta["drop_reasons"]
    failed = [i for i, why in enumerate(reasons) if why.startswith("executor failed: torchscript(")]
    assert failed and all("over the limit" in reasons[i] for i in failed), reasons
    by_failure = np.isin(c["drop_reason"], failed)
    assert np.all(c["size"][by_failure] > 2)
    assert np.all(c["size"][c["status"] == COMPLETED] <= 2)
    assert (c["status"] == COMPLETED).any()


# One trial in a fresh interpreter: serve an overloaded second, Ctrl-C at a random moment.
_TRIAL = r"""
import json, os, signal, sys, time
import servelab

def _overload(horizon_s):
    sc = json.loads({scenario!r})
    sc["profile"] = servelab.profiles.from_dict(sc["profile"])
    sc["workload"]["horizon_s"] = horizon_s
    return sc

def threads():
    return len(os.listdir("/proc/self/task"))

sc = _overload(1.0)
servelab.serve(_overload(0.05))  # loads the module; lazily started threads start now
before = threads()
caught = None
try:
    try:
        print("READY", flush=True)
        servelab.serve(sc, spin_us=0)
        outcome = "finished"
    except KeyboardInterrupt:
        caught = time.monotonic()
        outcome = "interrupted"
    signal.signal(signal.SIGINT, signal.SIG_IGN)
except KeyboardInterrupt:  # the signal came just after serve returned
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    outcome = "finished"
print("END", outcome, caught, before, threads(), flush=True)
"""


def _one_ctrl_c_trial(delay: float) -> dict:
    scenario = dict(_overload(1.0), profile=PROFILE)
    child = subprocess.Popen(
        [sys.executable, "-c", _TRIAL.format(scenario=json.dumps(scenario))],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert child.stdout.readline().strip() == "READY", child.stderr.read()
        time.sleep(delay)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    exited = time.monotonic() - sent
    assert child.returncode == 0, f"rc={child.returncode} after Ctrl-C at {delay:.3f} s: {err}"
    assert err == "", err
    _, outcome, caught, before, after = out.split()
    assert after == before, f"{after} threads left of {before} (Ctrl-C at {delay:.3f} s)"
    return {
        "outcome": outcome,
        "stop_s": float(caught) - sent if caught != "None" else None,
        "exit_s": exited,
    }


def test_ctrl_c_at_random_moments_always_joins_threads_and_exits_cleanly():
    rng = random.Random(20261123)
    trials = [_one_ctrl_c_trial(rng.uniform(0.0, 1.3)) for _ in range(CTRL_C_TRIALS)]
    stops = [t["stop_s"] for t in trials if t["stop_s"] is not None]
    assert stops, "no trial landed inside serve"
    assert max(stops) < 1.0, f"Ctrl-C took {max(stops):.3f} s to stop serve"
    exits = [t["exit_s"] for t in trials]
    print(
        f"\nCtrl-C trials: {len(trials)}, {len(stops)} interrupted inside serve, "
        f"{len(trials) - len(stops)} after it finished; stop after the signal: median "
        f"{np.median(stops) * 1e3:.1f} ms, max {max(stops) * 1e3:.1f} ms; process exit: median "
        f"{np.median(exits) * 1e3:.0f} ms, max {max(exits) * 1e3:.0f} ms"
    )
