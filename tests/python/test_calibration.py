"""The loop's stages in served records, the loop models, and calibrate (observe, replay, fit).

The accuracy of calibrated predictions on real models is a benchmark's job
(benchmarks/python/bench_sim_vs_real.py, quoted in docs/executors.md), never a timed test: these
tests check that the stages are stamped consistently, that a loop model shifts the simulated world
exactly as documented, and that calibrate fits what the run measured.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import servelab
from servelab.results import COMPLETED

CONSTANT = "constant(latency_ms=2)"


def _scenario(count=150, rate=300.0, workers=2):
    profile = servelab.profile(
        CONSTANT, batches=[1], repeats=5, warmup=1, hardware="cpu", model="model"
    )
    return {
        "profile": profile,
        "workers": [{"hardware": "cpu", "count": workers, "models": ["model"]}],
        "workload": {
            "arrivals": f"poisson(rate={rate})",
            "count": count,
            "apps": [{"name": "model", "slo_ms": 1000, "sizes": "constant(value=1)"}],
        },
        "scheduler": "fcfs",
        "seed": 3,
    }


@pytest.fixture(scope="module")
def served():
    sc = _scenario()
    return sc, servelab.serve(sc, executor=CONSTANT)


def test_every_completed_query_has_its_stages_in_order(served):
    _, r = served
    c = r.columns
    done = c["status"] == COMPLETED
    assert done.all()
    for a, b in [
        ("arrival_ns", "taken_ns"),
        ("taken_ns", "dispatch_ns"),
        ("dispatch_ns", "start_ns"),
        ("start_ns", "finish_ns"),
        ("finish_ns", "noticed_ns"),
    ]:
        assert (c[b][done] >= c[a][done]).all(), (a, b)
    stages = servelab.loop_stages(r)
    parts = stages[["arrival_ms", "queue_ms", "wake_ms", "staging_ms", "exec_ms"]].sum(axis=1)
    assert np.allclose(parts, stages["latency_ms"])
    assert np.allclose(stages["staging_ms"] + stages["exec_ms"], stages["service_ms"])
    table = servelab.loop_breakdown(r)
    assert list(table.index) == ["arrival", "queue", "wake", "staging", "exec", "notice"]
    # The constant executor waits 2 ms: the batch's execution is at least that every time.
    assert stages["exec_ms"].min() >= 2.0


def test_calibrate_fits_what_the_run_measured(served):
    sc, r = served
    cal = servelab.calibrate(r, quantiles=9)
    assert cal.batches == int(r.workers["batches"].sum())
    spec = cal.loop_model.describe()
    assert spec.startswith("measured_loop(wake_us=[")
    # The fitted wake-up quantiles are the run's own (min and max, in us, kept to the ns).
    c = r.columns
    wake_us = (c["start_ns"] - c["dispatch_ns"]) / 1e3
    wake = spec.split("wake_us=[")[1].split("]")[0].split(", ")
    assert float(wake[0]) == pytest.approx(wake_us.min(), abs=1e-2)
    assert float(wake[-1]) == pytest.approx(wake_us.max(), abs=1e-2)
    sim = cal.simulate(sc)
    assert sim.meta["loop_model"] == spec
    assert sim.summary()["completed"] == len(r)
    # Every simulated batch starts at least the smallest wake-up after its dispatch.
    s = sim.columns
    assert ((s["start_ns"] - s["dispatch_ns"]) >= int(float(wake[0]) * 1e3) - 1).all()
    # Deterministic: the same seed gives the same records.
    again = cal.simulate(sc)
    assert (again.columns["finish_ns"] == s["finish_ns"]).all()


def test_a_fixed_loop_adds_its_delays_to_an_idle_worker_exactly():
    sc = _scenario(count=20, rate=5.0, workers=1)  # 200 ms apart: never queued
    plain = servelab.simulate(sc, service="mean")
    looped = servelab.simulate(
        sc, service="mean", loop_model="fixed_loop(wake_us=100, notice_us=50, arrival_us=30)"
    )
    a, b = plain.columns, looped.columns
    assert (b["arrival_ns"] == a["arrival_ns"]).all()
    assert (b["dispatch_ns"] - a["dispatch_ns"] == 30_000).all()
    assert (b["start_ns"] - a["start_ns"] == 130_000).all()
    assert (b["finish_ns"] - a["finish_ns"] == 130_000).all()


def test_sim_vs_real_calibrated_uses_the_pilot_loop():
    c = servelab.sim_vs_real(
        CONSTANT,
        workers=2,
        utilisation=0.3,
        queries=120,
        repeats=5,
        warmup=1,
        profile_from="calibrate",
    )
    assert c.simulated.meta["loop_model"].startswith("measured_loop(")
    assert c.meta["calibration"].batches == c.meta["pilot_batches"]
    assert c.measured.summary()["completed"] == 120


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda r: servelab.calibrate(servelab.simulate(_scenario(count=20))),
            "not a serving run",
        ),
        (lambda r: servelab.loop_breakdown("nope"), "not a serving run"),
        (lambda r: servelab.calibrate(r, quantiles=1), "quantiles=1"),
        (lambda r: servelab.calibrate(r, quantiles=True), "quantiles=True"),
        (lambda r: servelab.simulate("default", loop_model="fixed_loop(wake_us=-1)"), "wake_us"),
        (
            lambda r: servelab.simulate("default", loop_model="measured_loop(notice_us=[3, 1])"),
            "notice_us",
        ),
        (lambda r: servelab.simulate("default", loop_model="nope"), "nope"),
        (lambda r: servelab.simulate("default", loop_model=3), "loop_model=3"),
        (lambda r: servelab.serve("default", loop_model="fixed_loop"), "servelab.simulate"),
    ],
)
def test_bad_input_names_the_field(served, call, match):
    with pytest.raises((ValueError, KeyError), match=match):
        call(served[1])


def test_loop_models_are_listed():
    names = [e["name"] for e in servelab.list_loop_models()]
    assert {"fixed_loop", "measured_loop"} <= set(names)


def test_arrival_delays_count_stalls_once_and_only_where_a_worker_was_free():
    from servelab.calibration import _arrival_delays

    # One worker, busy (dispatch to noticed) 5-9, 30-39, 40-90, 90-100, 101-110. The third
    # arrival came while the controller was still late for the second: it inherits that
    # lateness, which the simulator adds itself. The fourth came while the worker was busy: its
    # lateness held nobody up.
    arrival = np.array([0, 10, 20, 50, 100])
    taken = np.array([5, 30, 30, 80, 101])
    batches = pd.DataFrame(
        {"dispatch_ns": [5, 30, 40, 90, 101], "noticed_ns": [9, 39, 90, 100, 110]}
    )
    assert _arrival_delays(arrival, taken, batches, workers=1).tolist() == [5, 20, 1]


def _as_served(result: servelab.Result) -> servelab.Result:
    """A simulated run dressed as a served one (stage stamps at the instants the simulator
    knows), so calibrate's fit can be checked against the world that produced it."""
    c = dict(result.columns)
    c["taken_ns"] = c["arrival_ns"].copy()
    c["noticed_ns"] = c["finish_ns"].copy()
    c["exec_ns"] = c["finish_ns"] - c["start_ns"]
    return servelab.Result(c, result.workers, {**result.meta, "world": "serve"})


@pytest.mark.parametrize("slowdown", [0.0, 0.15, 0.6])
def test_calibrate_recovers_a_corunner_slowdown_and_the_times_alone(slowdown):
    sc = _scenario(count=3000, rate=700.0, workers=3)  # 2 ms alone: about 50% busy, overlapping
    sc["service"] = "mean"
    sc["machines"] = [{"name": "host"}]
    sc["workers"] = [{**sc["workers"][0], "machine": "host"}]
    sc["interference"] = f"per_corunner(slowdown={slowdown})"
    served = _as_served(servelab.simulate(sc))
    cal = servelab.calibrate(served, interference=True)
    fitted = float(cal.interference.split("=")[1].rstrip(")"))
    assert fitted == pytest.approx(slowdown, abs=0.005)
    alone_ms = cal.profile.latency("cpu", "model", 1)
    true_ms = sc["profile"].latency("cpu", "model", 1)
    assert alone_ms == pytest.approx(true_ms, rel=0.002)
    # Replayed on one host with the fitted model, the run comes back (fixed service times).
    again = cal.simulate({k: v for k, v in sc.items() if k not in ("machines", "interference")})
    assert again.meta["interference"] == cal.interference
    assert again.summary()["latency_ms"]["p50"] == pytest.approx(
        served.summary()["latency_ms"]["p50"], rel=0.01
    )


def test_calibrate_without_interference_keeps_the_served_times():
    sc = _scenario(count=400, rate=700.0, workers=3)
    sc["service"] = "mean"
    served = _as_served(servelab.simulate(sc))
    cal = servelab.calibrate(served)
    assert cal.interference is None
    with pytest.raises(ValueError, match="interference='yes' must be True or False"):
        servelab.calibrate(served, interference="yes")
