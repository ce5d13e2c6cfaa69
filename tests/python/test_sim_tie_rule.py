"""fcfs(tie=...): which of several idle workers gets a query, from Python."""

import numpy as np
import pytest

import servelab


def scenario(scheduler: str) -> dict:
    profile = servelab.Profile("fixed 10 ms")
    profile.set_price("cpu", 0.1)
    profile.set_latency("cpu", "m", 1, samples_s=[0.01])
    return {
        "profile": profile,
        "workers": [{"hardware": "cpu", "count": 10}],
        "workload": {
            "arrivals": "poisson(rate=300)",
            "count": 3000,
            "apps": [{"name": "a", "slo_ms": 100}],
        },
        "scheduler": scheduler,
        "service": "mean",
        "seed": 5,
    }


def per_worker(result) -> np.ndarray:
    return np.bincount(result.columns["worker"], minlength=10)


def test_default_is_lowest_id_and_other_rules_spread_the_work():
    default = servelab.simulate(scenario("fcfs"))
    explicit = servelab.simulate(scenario("fcfs(tie='lowest_id')"))
    assert np.array_equal(default.columns["worker"], explicit.columns["worker"])
    assert per_worker(default)[0] > 5 * per_worker(default)[-1]
    for rule in ("round_robin", "lru", "random"):
        r = servelab.simulate(scenario(f"fcfs(tie='{rule}')"))
        r.check_consistency()  # each query once, no worker runs two batches at once, ...
        counts = per_worker(r)
        assert counts.max() < 2 * counts.min(), (rule, counts)
        # Identical workers, fixed service: only the worker changes, never the finish time.
        assert np.array_equal(r.columns["finish_ns"], default.columns["finish_ns"])
        assert rule in r.meta["scheduler"]


def test_an_unknown_tie_rule_names_the_parameter_and_value():
    with pytest.raises(ValueError, match=r"tie.*'first'"):
        servelab.simulate(scenario("fcfs(tie='first')"))
