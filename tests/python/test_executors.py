"""The executor registry and the serving loop's executors (no optional backend needed).

Executors are registered by name with typed parameters like schedulers; ``servelab.serve`` takes
one per worker group, records each batch's exec time as the ``exec_ns`` column, and a spec a
simulation cannot use is refused.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import servelab
from servelab.results import COMPLETED

from .gil import ticks_during

MS = 1_000_000


def _scenario(workers: list[dict], count: int = 80) -> dict:
    return {
        "profile": "example:hetero_cpu_gpu",
        "workers": workers,
        "workload": {
            "arrivals": "poisson(rate=200)",
            "count": count,
            "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "uniform(low=1, high=20)"}],
        },
        "drain_s": 5,
    }


CPU = {"hardware": "c5n.2xlarge", "count": 2, "models": ["rm2"]}


def test_list_executors_describes_the_built_in_entries():
    entries = {e["name"]: e for e in servelab.list_executors()}
    assert {"emulated", "constant"} <= set(entries)
    constant = entries["constant"]
    assert constant["module"] == "servelab._core" and constant["doc"]
    (latency,) = constant["params"]
    assert (latency["name"], latency["type"], latency["default"], latency["min"]) == (
        "latency_ms",
        "float",
        0.0,
        0.0,
    )
    assert [p["name"] for p in entries["emulated"]["params"]] == ["service"]


def test_make_executor_from_a_spec_keywords_or_a_dict_describes_every_parameter():
    for spec in (
        servelab.make_executor("constant(latency_ms=2)"),
        servelab.make_executor("constant", latency_ms=2.0),
        servelab.make_executor({"name": "constant", "latency_ms": 2}),
    ):
        assert spec.describe() == "constant(latency_ms=2)"
    built = servelab.make_executor("constant")
    assert servelab.make_executor(built) is built
    assert servelab.make_executor("emulated").describe() == "emulated(service='run')"


def test_bad_executor_specs_raise_naming_the_executor_and_value():
    with pytest.raises(KeyError, match=r"unknown executor 'nope'; registered: .*constant"):
        servelab.make_executor("nope(x=1)")
    with pytest.raises(ValueError, match=r"constant: latency_ms=-1 .*>= 0"):
        servelab.make_executor("constant(latency_ms=-1)")
    with pytest.raises(KeyError, match="constant has no parameter 'lat'"):
        servelab.make_executor("constant(lat=1)")
    with pytest.raises(ValueError, match="emulated: service='p42'"):
        servelab.make_executor("emulated(service='p42')")
    with pytest.raises(ValueError, match="'latency_ms' is given in the spec and as a keyword"):
        servelab.make_executor("constant(latency_ms=1)", latency_ms=2)
    with pytest.raises(ValueError, match=r"executor=42 is not an executor"):
        servelab.make_executor(42)
    with pytest.raises(ValueError, match="runs only inside a serving run"):
        servelab.make_executor("emulated").open()


def test_an_opened_executor_times_batches_and_checks_its_arguments():
    ex = servelab.make_executor("constant(latency_ms=0.5)").open(seed=1)
    assert ex.describe() == "constant(latency_ms=0.5)" and ex.knobs() == []
    t = ex.time_batches([1, 2], repeats=3, warmup=1)
    assert t["wall_ns"].shape == (3,) and np.all(t["wall_ns"] >= MS // 2)
    np.testing.assert_array_equal(t["exec_ns"], t["wall_ns"])  # it reports no measure of its own
    for kwargs, match in [
        ({"sizes": [1], "repeats": 0}, "repeats=0"),
        ({"sizes": [1], "warmup": -1}, "warmup=-1"),
        ({"sizes": []}, r"sizes=\[\]"),
        ({"sizes": [1, 0]}, r"sizes\[1\]=0"),
    ]:
        with pytest.raises(ValueError, match=match):
            ex.time_batches(**kwargs)


def test_timing_releases_the_gil_and_stops_on_ctrl_c():
    ex = servelab.make_executor("constant(latency_ms=20)").open()
    assert ticks_during(lambda: ex.time_batches([1], repeats=10)) > 10
    timer = threading.Timer(0.2, os.kill, args=(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            ex.time_batches([1], repeats=10_000)  # 200 s if nothing stopped it
    finally:
        timer.cancel()
    assert time.monotonic() - start < 5.0


def test_serve_runs_every_group_on_its_executor_and_records_exec_ns():
    sc = _scenario([dict(CPU, executor="constant(latency_ms=1)"), {"hardware": "t3.xlarge"}])
    r = servelab.serve(sc, scheduler="fcfs")
    r.check_consistency()
    assert r.meta["executors"] == ["constant(latency_ms=1)", "emulated"]
    assert r.meta["scenario"]["workers"][0]["executor"] == "constant(latency_ms=1)"
    c = r.columns
    done = c["status"] == COMPLETED
    assert done.sum() > 0
    on_constant = done & (c["worker"] < 2)
    assert on_constant.any()
    # A constant batch takes 1 ms (and a little) whatever its size.
    exec_ns = c["exec_ns"]
    assert np.all(exec_ns[on_constant] >= MS)
    service = c["finish_ns"] - c["start_ns"]
    assert np.all(exec_ns[done] <= service[done])  # without an own measure: run()'s wall time
    assert np.all(exec_ns[~done] == -1)


def test_serve_executor_keyword_applies_to_groups_without_their_own():
    sc = _scenario([CPU, dict(CPU, hardware="r5n.large", count=1, executor="constant")], count=40)
    ex = servelab.make_executor("constant(latency_ms=2)")
    r = servelab.serve(sc, scheduler="fcfs", executor=ex)
    assert r.meta["executors"] == ["constant(latency_ms=2)", "constant(latency_ms=0)"]
    assert "exec_ns" in r.columns


def test_a_controller_that_never_spins_still_serves_everything():
    r = servelab.serve(_scenario([dict(CPU, executor="constant")], count=40), spin_us=0)
    r.check_consistency()
    assert r.summary()["completed"] == 40
    with pytest.raises(ValueError, match="spin_us=-1"):
        servelab.serve(_scenario([CPU], count=5), spin_us=-1)
    with pytest.raises(ValueError, match="spin_us= is for servelab.serve"):
        servelab.simulate(_scenario([CPU], count=5), spin_us=0)


def test_executor_outside_serve_or_of_the_wrong_type_is_refused():
    with pytest.raises(ValueError, match="executor= is for servelab.serve"):
        servelab.simulate(_scenario([CPU]), executor="constant")
    with pytest.raises(ValueError, match=r"workers\[0\].executor=5"):
        servelab.serve(_scenario([dict(CPU, executor=5)]))
    with pytest.raises(KeyError, match="unknown executor 'nope'"):
        servelab.serve(_scenario([dict(CPU, executor="nope")]))


def test_simulate_ignores_a_groups_executor_so_one_scenario_runs_in_both_worlds():
    sc = _scenario([dict(CPU, executor="constant(latency_ms=1)")], count=40)
    r = servelab.simulate(sc, scheduler="fcfs")
    assert "exec_ns" not in r.columns and r.summary()["completed"] == 40


def test_profile_from_run_keeps_the_service_times_a_serving_run_measured():
    sc = _scenario([dict(CPU, executor="constant(latency_ms=2)")], count=60)
    r = servelab.serve(sc, scheduler="fcfs")
    base = servelab.profiles.example("hetero_cpu_gpu")
    p = servelab.profile_from_run(r, base=base, min_samples=3)
    c = r.columns
    done = c["status"] == COMPLETED
    items, counts = np.unique(c["batch_items"][done], return_counts=True)  # fcfs: a query a batch
    profiled = [int(i) for i, n in zip(items, counts, strict=True) if n >= 3]
    assert profiled
    for i in profiled:
        service = (c["finish_ns"] - c["start_ns"])[done & (c["batch_items"] == i)] / 1e9
        got = p.latency("c5n.2xlarge", "rm2", [i], "mean")[0]
        assert got == pytest.approx(service.mean(), rel=1e-6) and got >= 2e-3
    # Everything else comes from the base profile.
    other = ("t3.xlarge", "rm2", [4], "mean")
    assert list(p.latency(*other)) == list(base.latency(*other))
    with pytest.raises(ValueError, match="is not a serving run"):
        servelab.profile_from_run(servelab.simulate(_scenario([CPU], count=20)))
    with pytest.raises(ValueError, match="min_samples=1000 completed batches"):
        servelab.profile_from_run(r, min_samples=1000)
    with pytest.raises(ValueError, match="min_samples=0"):
        servelab.profile_from_run(r, min_samples=0)


def test_sim_vs_real_can_simulate_on_a_pilot_runs_service_times():
    c = servelab.sim_vs_real(
        "constant(latency_ms=1)", utilisation=0.3, queries=150, repeats=5, warmup=1,
        profile_from="serve", pilot_queries=100,
    )  # fmt: skip
    assert c.meta["profile_from"] == "serve" and c.meta["pilot_batches"] == 100
    assert c.simulated.summary()["completed"] == c.measured.summary()["completed"] == 150
    # The simulated service time is the pilot's measured one, not the back-to-back profile's.
    pilot_mean = c.profile.latency("cpu", "model", [1], "mean")[0]
    assert pilot_mean != c.meta["base_profile"].latency("cpu", "model", [1], "mean")[0]
    assert c.simulated.summary()["service_ms"]["mean"] == pytest.approx(pilot_mean * 1e3, rel=0.2)
    with pytest.raises(ValueError, match="profile_from='disk' must be"):
        servelab.sim_vs_real("constant", profile_from="disk")
