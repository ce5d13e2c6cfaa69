"""Applications with their own arrival processes: the Workload API, scenario keys, errors, and runs
in both worlds whose per-application counts follow each application's rate."""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pytest

import servelab
from servelab.scenario import Scenario
from servelab.workload import Application, Poisson, Workload

# Two applications at 30 and 120 queries/s on two GPUs (4 ms per 10-item batch): light load.
SCENARIO: dict[str, Any] = {
    "profile": "example:hetero_cpu_gpu",
    "workers": [{"hardware": "g4dn.xlarge", "count": 2, "models": ["rm2"]}],
    "workload": {
        "horizon_s": 20,
        "apps": [
            {
                "name": "slow",
                "slo_ms": 350,
                "sizes": "constant(value=10)",
                "arrivals": "poisson(rate=30)",
            },
            {
                "name": "fast",
                "slo_ms": 350,
                "sizes": "constant(value=10)",
                "arrivals": "poisson(rate=120)",
            },
        ],
    },
    "scheduler": "fcfs",
}


def _within(count: int, mean: float, sds: float = 4.0) -> bool:
    """A Poisson count within `sds` standard deviations of its mean."""
    return abs(count - mean) <= sds * math.sqrt(mean)


def _per_app(columns: dict[str, np.ndarray]) -> list[int]:
    return np.bincount(columns["app"], minlength=2).tolist()


def test_each_application_arrives_at_its_own_rate_merged_by_time():
    w = Workload(
        None,
        [
            Application("a", 0.1, arrivals="poisson(rate=50)"),
            Application("b", 0.2, arrivals=Poisson(200)),
        ],
        horizon_s=20,
    )
    assert w.arrivals is None
    assert w.mean_rate == 250
    np.testing.assert_allclose(w.shares, [0.2, 0.8])
    q = w.generate(seed=3)
    np.testing.assert_array_equal(q["id"], np.arange(len(q["id"])))
    assert np.all(np.diff(q["arrival_s"]) >= 0) and q["arrival_s"][-1] < 20
    a, b = _per_app(q)
    assert _within(a, 1000) and _within(b, 4000), (a, b)
    # Application b (index 1, stream "arrivals/1") arrives the same whatever application a does.
    other = Workload(
        None,
        [
            Application("a", 0.1, arrivals="gamma(rate=3, cv=3)"),
            Application("b", 0.2, arrivals=Poisson(200)),
        ],
        horizon_s=20,
    ).generate(seed=3)
    np.testing.assert_array_equal(
        q["arrival_s"][q["app"] == 1], other["arrival_s"][other["app"] == 1]
    )
    again = w.generate(seed=3)
    for name in q:
        np.testing.assert_array_equal(q[name], again[name])
    stream = [query.arrival_s for query in w.start(seed=3)]
    np.testing.assert_array_equal(stream, q["arrival_s"])


def test_application_reports_its_process_and_refuses_a_share_beside_it():
    app = Application("a", 0.1, arrivals="gamma(rate=5, cv=2)")
    assert app.arrivals.describe() == "gamma(rate=5, cv=2)"
    assert "arrivals='gamma(rate=5, cv=2)'" in repr(app)
    assert Application("b", 0.1).arrivals is None
    with pytest.raises(
        ValueError, match=r"application 'a': share=2\.0 given with arrivals=poisson"
    ):
        Application("a", 0.1, share=2, arrivals="poisson(rate=1)")
    with pytest.raises(ValueError, match=r"application 'a': poisson: rate=-1 must be > 0"):
        Application("a", 0.1, arrivals="poisson(rate=-1)")


def test_mixed_or_doubled_arrivals_are_refused_naming_the_application():
    own, plain = Application("a", 0.1, arrivals="poisson(rate=5)"), Application("b", 0.1)
    with pytest.raises(
        ValueError, match=r"apps\[1\] \('b'\): arrivals=None while apps\[0\] \('a'\)"
    ):
        Workload(None, [own, plain], count=10)
    with pytest.raises(
        ValueError, match=r"apps\[0\] \('a'\): arrivals=poisson\(rate=5\) given while"
    ):
        Workload(
            "poisson(rate=1)", [own, Application("c", 0.1, arrivals="poisson(rate=5)")], count=10
        )
    with pytest.raises(ValueError, match="arrivals is null"):
        Workload(None, [plain], count=10)


def test_scenario_round_trips_and_simulate_counts_follow_each_rate():
    r = servelab.simulate(SCENARIO, seed=1)
    slow, fast = _per_app(r.columns)
    assert _within(slow, 600) and _within(fast, 2400), (slow, fast)
    replay = Scenario.from_dict(r.meta["scenario"])
    assert replay.workload["apps"][1]["arrivals"] == "poisson(rate=120)"
    again = servelab.simulate(replay)
    np.testing.assert_array_equal(again.columns["arrival_ns"], r.columns["arrival_ns"])
    as_dict = copy.deepcopy(SCENARIO)
    as_dict["workload"]["apps"][0]["arrivals"] = {"name": "poisson", "rate": 30}
    np.testing.assert_array_equal(
        servelab.simulate(as_dict, seed=1).columns["app"], r.columns["app"]
    )


def test_serve_reads_the_same_merged_stream():
    sc = copy.deepcopy(SCENARIO)
    sc["workload"]["horizon_s"] = 2.0
    sim = servelab.simulate(sc, seed=4)
    real = servelab.serve(sc, seed=4, executor="constant(latency_ms=1)")
    np.testing.assert_array_equal(real.columns["arrival_ns"], sim.columns["arrival_ns"])
    np.testing.assert_array_equal(real.columns["app"], sim.columns["app"])
    slow, fast = _per_app(real.columns)
    assert _within(slow, 60) and _within(fast, 240), (slow, fast)


def _bad(path: list[Any], value: Any) -> dict[str, Any]:
    """SCENARIO with the key at `path` (under workload) set to `value`; ... deletes it."""
    sc = copy.deepcopy(SCENARIO)
    node = sc["workload"]
    for key in path[:-1]:
        node = node[key]
    if value is ...:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return sc


@pytest.mark.parametrize(
    ("path", "value", "error", "message"),
    [
        (["apps", 1, "arrivals"], ..., KeyError, r"workload.apps\[1\]: missing key 'arrivals'"),
        (
            ["arrivals"],
            "poisson(rate=5)",
            ValueError,
            r"workload.apps\[0\].arrivals='poisson\(rate=30\)' is given while "
            r"workload.arrivals='poisson\(rate=5\)'",
        ),
        (["apps", 0, "share"], 2, ValueError, r"workload.apps\[0\].share=2 is given with"),
        (["apps", 1, "arrivals"], 5, ValueError, r"workload.apps\[1\].arrivals=5 must be a spec"),
        (
            ["apps", 1, "arrivals"],
            "poison(rate=1)",
            KeyError,
            r"workload.apps\[1\].arrivals='poison\(rate=1\)': unknown arrival process 'poison'",
        ),
        (
            ["apps", 0, "arrivals"],
            "poisson(rate=-2)",
            ValueError,
            r"workload.apps\[0\].arrivals='poisson\(rate=-2\)': poisson: rate=-2 must be > 0",
        ),
    ],
)
def test_bad_per_application_arrivals_name_the_key_and_value(path, value, error, message):
    with pytest.raises(error, match=message):
        servelab.simulate(_bad(path, value))


def test_no_arrivals_anywhere_names_both_places():
    sc = _bad(["apps", 0, "arrivals"], ...)
    del sc["workload"]["apps"][1]["arrivals"]
    with pytest.raises(KeyError, match=r"missing key 'arrivals' \(or give every application"):
        servelab.simulate(sc)
