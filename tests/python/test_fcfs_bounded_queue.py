"""fcfs(max_queue=N): a bounded central queue drops arrivals that find it full (tail drop), in
both worlds, so an overloaded run keeps bounded waits."""

import math

import numpy as np
import pytest

import servelab
from servelab.results import COMPLETED

SERVICE_S = 0.01
WORKERS = 4


def scenario(scheduler: str, rate: float = 800, count: int = 4000) -> dict:
    # Capacity is WORKERS / SERVICE_S = 400 q/s: 800 q/s is twice that.
    profile = servelab.Profile("fixed 10 ms")
    profile.set_price("cpu", 0.1)
    profile.set_latency("cpu", "m", 1, samples_s=[SERVICE_S])
    return {
        "profile": profile,
        "workers": [{"hardware": "cpu", "count": WORKERS}],
        "workload": {
            "arrivals": f"poisson(rate={rate})",
            "count": count,
            "apps": [{"name": "a", "slo_ms": 1000}],
        },
        "scheduler": scheduler,
        "service": "mean",
        "seed": 3,
    }


def waits_s(r) -> np.ndarray:
    c = r.columns
    done = c["status"] == COMPLETED
    return (c["start_ns"][done] - c["arrival_ns"][done]) / 1e9


@pytest.mark.parametrize("max_queue", [1, 8, 40])
def test_a_full_queue_drops_arrivals_and_bounds_the_wait(max_queue):
    r = servelab.simulate(scenario(f"fcfs(max_queue={max_queue})"))
    r.check_consistency()
    s = r.summary()
    assert s["completed"] + s["dropped"] == 4000
    names = r.drop_reason_names
    reasons = {
        names[i] for i in np.unique(r.columns["drop_reason"][r.columns["status"] != COMPLETED])
    }
    assert reasons == {"queue full (max_queue)"}, reasons
    # At 2x capacity about half the queries are turned away; the workers stay busy.
    assert 0.3 < s["dropped"] / 4000 < 0.7, s
    # Strict FCFS: an admitted query has at most max_queue - 1 ahead of it in the queue, so it
    # waits at most ceil(max_queue / workers) service times (plus a batch in progress).
    bound = (math.ceil(max_queue / WORKERS) + 1) * SERVICE_S
    assert waits_s(r).max() <= bound + 1e-9, (waits_s(r).max(), bound)


def test_unbounded_is_the_default_and_unchanged():
    default = servelab.simulate(scenario("fcfs"))
    explicit = servelab.simulate(scenario("fcfs(max_queue=0)"))
    for name in ("worker", "start_ns", "finish_ns", "status"):
        assert np.array_equal(default.columns[name], explicit.columns[name])
    assert default.summary()["dropped"] == 0 and waits_s(default).max() > 1.0  # the queue grows
    assert default.meta["scheduler"] == "fcfs(prefer='')"


def test_the_bound_holds_in_the_real_serving_loop():
    r = servelab.serve(scenario("fcfs(max_queue=8)", count=600))
    s = r.summary()
    assert s["completed"] + s["dropped"] == 600 and s["dropped"] > 0
    # Real time adds scheduling delays: the same bound, with slack for a loaded machine.
    assert waits_s(r).max() <= (math.ceil(8 / WORKERS) + 1) * SERVICE_S + 0.05


def test_a_negative_bound_is_named():
    with pytest.raises(ValueError, match="max_queue=-1"):
        servelab.simulate(scenario("fcfs(max_queue=-1)"))
