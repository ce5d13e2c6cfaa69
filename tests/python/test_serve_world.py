"""The real serving loop: the same schedulers as the simulator, on the wall clock."""

import os
import signal
import threading
import time

import numpy as np
import pytest

from servelab import _core

MIN_SERVICE_S = 0.003  # the smallest latency sample of the profile below


def make_profile() -> _core.Profile:
    profile = _core.Profile("test")
    profile.set_price("cpu", 0.36)
    profile.set_accuracy("small", 0.7)
    profile.set_latency("cpu", "small", 1, samples_s=[0.003, 0.004, 0.0045, 0.005, 0.006])
    profile.set_latency("cpu", "small", 8, samples_s=[0.006, 0.008, 0.009, 0.010, 0.012])
    return profile


def make_workload(rate: float, seconds: float) -> _core.Workload:
    return _core.Workload(
        f"poisson(rate={rate})", [_core.Application("app", slo_s=0.05)], horizon_s=seconds
    )


def thread_count() -> int:
    """OS threads of this process (Linux), to show that a run leaves none behind."""
    return len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else -1


def check_run(result: dict, workload: _core.Workload, seed: int) -> np.ndarray:
    """Checks the conformance rules; returns the completed queries' latencies in seconds."""
    cols = result["columns"]
    expected = workload.generate(seed=seed)
    assert len(cols["id"]) == len(expected["id"]) > 0
    np.testing.assert_allclose(cols["arrival_ns"] / 1e9, expected["arrival_s"], atol=1e-9)
    done = cols["status"] == 0
    assert set(np.unique(cols["status"])) <= {0, 1}
    assert (cols["drop_reason"][~done] >= 0).all()
    assert (cols["arrival_ns"][done] <= cols["dispatch_ns"][done]).all()
    assert (cols["dispatch_ns"][done] <= cols["start_ns"][done]).all()
    assert (cols["finish_ns"][done] - cols["start_ns"][done] >= MIN_SERVICE_S * 1e9).all()
    assert (cols["finish_ns"] <= result["meta"]["duration_ns"]).all()
    for w in np.unique(cols["worker"][done]):  # no worker runs two batches at once
        mine = done & (cols["worker"] == w)
        spans = np.unique(
            np.stack([cols["start_ns"][mine], cols["finish_ns"][mine]], axis=1), axis=0
        )
        assert (spans[1:, 0] >= spans[:-1, 1]).all()
    return (cols["finish_ns"][done] - cols["arrival_ns"][done]) / 1e9


class FirstIdle(_core.Scheduler):
    """Sends each query to the lowest idle worker, else the central queue; records its clock."""

    def __init__(self):
        super().__init__()
        self.times = []
        self.hooks = 0

    def describe(self):
        return "first_idle"

    def _serve_queue(self, view, actions):
        while view.central_queue() and view.idle_workers():
            actions.dispatch(view.idle_workers()[0], "small", view.central_queue()[0])

    def on_arrival(self, query, view, actions):
        self.times.append(view.now_ns)
        self.hooks += 1
        idle = view.idle_workers()
        if idle and not view.central_queue():
            actions.dispatch(idle[0], "small", query.id)
        else:
            actions.enqueue(query.id)

    def on_batch_done(self, done, view, actions):
        self.times.append(view.now_ns)
        assert done.measured_s >= MIN_SERVICE_S
        self._serve_queue(view, actions)


def test_serve_run_with_a_registry_scheduler():
    workload = make_workload(300, 0.5)
    start = time.monotonic()
    result = _core.serve_run(
        make_profile(),
        [_core.WorkerGroup("cpu", count=3, models=["small"])],
        workload,
        _core.make_scheduler("fcfs"),
        seed=5,
    )
    # Arrivals are released at their workload times: the run takes about the workload's length.
    assert 0.4 < time.monotonic() - start < 5.0
    meta = result["meta"]
    assert meta["world"] == "serve"
    assert meta["scheduler"].startswith("fcfs")
    assert meta["seed"] == 5
    latencies = check_run(result, workload, seed=5)
    assert len(latencies) == len(result["columns"]["id"])  # nothing dropped at this load
    assert result["workers"]["batches"].sum() == len(latencies)


def test_a_python_scheduler_runs_unchanged_in_both_worlds():
    workload = make_workload(200, 1.0)
    groups = [_core.WorkerGroup("cpu", count=2, models=["small"])]
    simulated = _core.simulate_run(make_profile(), groups, workload, FirstIdle(), seed=3)
    sim_lat = check_run(simulated, workload, seed=3)
    p50_sim, p95_sim = np.percentile(sim_lat, [50, 95])

    def close(p50_serve: float, p95_serve: float) -> bool:
        # |p50 diff| <= max(2 ms, 10%), |p95 diff| <= max(5 ms, 25%). The tail is taken at p95
        # (ten queries of about 200): the p99 is two, and a few milliseconds of the machine's
        # other work (on a 2-core machine its cores may be one core's two hardware threads) moved
        # it by 10 ms in 2 runs of 20. Such an episode can last a few runs, and moves even the p95
        # by 6 ms now and then (1 run in 40): three runs are allowed.
        return abs(p50_serve - p50_sim) <= max(0.002, 0.1 * p50_sim) and abs(
            p95_serve - p95_sim
        ) <= max(0.005, 0.25 * p95_sim)

    for _attempt in range(3):
        policy = FirstIdle()
        served = _core.serve_run(make_profile(), groups, workload, policy, seed=3)
        assert served["meta"]["world"] == "serve"
        assert served["meta"]["scheduler"] == "first_idle"
        assert policy.hooks == len(served["columns"]["id"])
        assert policy.times == sorted(policy.times)  # time never goes backwards
        p50_serve, p95_serve = np.percentile(check_run(served, workload, seed=3), [50, 95])
        if close(p50_serve, p95_serve):
            break
    assert close(p50_serve, p95_serve), (p50_serve, p95_serve, p50_sim, p95_sim)


def test_an_exception_in_a_python_hook_propagates_and_stops_the_run():
    class Failing(FirstIdle):
        def on_arrival(self, query, view, actions):
            if query.id == 10:
                raise RuntimeError("policy bug at query 10")
            super().on_arrival(query, view, actions)

    before = thread_count()
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="policy bug at query 10"):
        _core.serve_run(
            make_profile(),
            [_core.WorkerGroup("cpu", count=4)],
            make_workload(200, 30.0),
            Failing(),
        )
    assert time.monotonic() - start < 5.0  # not the workload's 30 s
    assert thread_count() == before


@pytest.mark.parametrize("policy", ["registry", "python"])
def test_ctrl_c_stops_a_serving_run_promptly_and_cleanly(policy):
    scheduler = _core.make_scheduler("fcfs") if policy == "registry" else FirstIdle()
    before = thread_count()
    timer = threading.Timer(0.3, os.kill, args=(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            _core.serve_run(
                make_profile(),
                [_core.WorkerGroup("cpu", count=4)],
                make_workload(300, 30.0),
                scheduler,
            )
    finally:
        timer.cancel()
        timer.join()
    # Stopped within a fraction of a second of the signal, not after the workload's 30 s.
    assert time.monotonic() - start < 3.0
    assert thread_count() == before  # every worker thread was joined
    # The interpreter and the module still work.
    result = _core.serve_run(
        make_profile(),
        [_core.WorkerGroup("cpu")],
        make_workload(100, 0.05),
        _core.make_scheduler("fcfs"),
    )
    assert result["meta"]["world"] == "serve"


def test_a_view_kept_after_the_run_is_safe():
    class Keeper(FirstIdle):
        def on_start(self, view, actions):
            self.view, self.actions = view, actions

    keeper = Keeper()
    result = _core.serve_run(
        make_profile(), [_core.WorkerGroup("cpu")], make_workload(100, 0.1), keeper
    )
    assert keeper.view.now_ns >= max(keeper.times)
    with pytest.raises(RuntimeError, match="run has ended"):
        keeper.actions.set_timer(keeper.view.now + 1.0, 0)
    assert result["meta"]["duration_ns"] >= keeper.times[-1]


def test_drain_limit_cuts_off_what_is_left():
    profile = make_profile()
    profile.set_latency("cpu", "small", 1, samples_s=[20.0])  # only the cut-off ends a batch
    start = time.monotonic()
    result = _core.serve_run(
        profile,
        [_core.WorkerGroup("cpu")],
        make_workload(100, 0.1),
        _core.make_scheduler("fcfs"),
        drain_s=0.05,
    )
    assert time.monotonic() - start < 3.0
    cols = result["columns"]
    assert (cols["status"] == 1).all()
    assert result["meta"]["drop_reasons"] == ["cut off at end of run"]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"decision_statistic": "median"}, "decision_statistic"),
        ({"service": "p42"}, "service"),
        ({"drain_s": -1.0}, "drain_s=-1"),
    ],
)
def test_bad_arguments_name_the_field_and_value(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _core.serve_run(
            make_profile(),
            [_core.WorkerGroup("cpu")],
            make_workload(100, 0.1),
            _core.make_scheduler("fcfs"),
            **kwargs,
        )


def test_unknown_hardware_is_a_key_error_naming_it():
    with pytest.raises(KeyError, match="tpu"):
        _core.serve_run(
            make_profile(),
            [_core.WorkerGroup("tpu")],
            make_workload(100, 0.1),
            _core.make_scheduler("fcfs"),
        )
