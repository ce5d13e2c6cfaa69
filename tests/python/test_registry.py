"""Arrival processes by name: typed, defaulted, validated, documented parameters."""

import re

import numpy as np
import pytest

import servelab
from servelab import workload


def test_list_describes_every_entry_with_typed_parameters():
    entries = {e["name"]: e for e in servelab.list_arrival_processes()}
    assert set(entries) == {
        "dynamic_poisson",
        "gamma",
        "mmpp",
        "piecewise_rate",
        "poisson",
        "poisson_integer_ms",
        "replay",
        "spiky",
    }
    for entry in entries.values():
        assert entry["doc"], entry["name"]
        for p in entry["params"]:
            assert p["type"] in {"bool", "int", "float", "str", "list of float"}, p
            assert p["doc"], (entry["name"], p["name"])
            assert p["required"] == (p["default"] is None)
    cv = next(p for p in entries["gamma"]["params"] if p["name"] == "cv")
    assert (cv["default"], cv["min"], cv["min_exclusive"]) == (1.0, 0.0, True)


@pytest.mark.parametrize(
    "spec",
    [
        "poisson(rate=100)",
        "poisson_integer_ms(rate=95.2)",
        "gamma(rate=50, cv=2)",
        "mmpp(rate_on=200, rate_off=5, mean_on_s=1, mean_off_s=4)",
    ],
)
def test_describe_round_trips_through_the_registry(spec):
    process = workload.make_arrival_process(spec)
    assert repr(process) == spec
    again = workload.make_arrival_process(repr(process))
    np.testing.assert_array_equal(
        again.generate(seed=3, count=50), process.generate(seed=3, count=50)
    )


def test_spec_and_keywords_build_the_same_process():
    a = workload.make_arrival_process("gamma(rate=50, cv=2)")
    b = workload.make_arrival_process("gamma", rate=50, cv=2)
    c = workload.Gamma(rate=50, cv=2)
    for p in (b, c):
        np.testing.assert_array_equal(p.generate(seed=9, count=100), a.generate(seed=9, count=100))


def test_registry_builds_traces_from_lists():
    trace = workload.make_arrival_process("piecewise_rate", interval_s=1, rates=[0, 100, 0])
    times = trace.generate(seed=1, horizon_s=10)
    assert ((times >= 1) & (times < 2)).all()
    replay = workload.make_arrival_process("replay(timestamps_s=[0.1, 0.2], period_s=1)")
    np.testing.assert_allclose(replay.generate(seed=0, count=4), [0.1, 0.2, 1.1, 1.2])


@pytest.mark.parametrize(
    ("call", "exception", "message"),
    [
        (
            lambda: workload.make_arrival_process("poison(rate=1)"),
            KeyError,
            "unknown arrival process 'poison'",
        ),
        (
            lambda: workload.make_arrival_process("gamma(rte=1)"),
            KeyError,
            "gamma has no parameter 'rte'",
        ),
        (
            lambda: workload.make_arrival_process("gamma(rate=-1)"),
            ValueError,
            "gamma: rate=-1 must be > 0",
        ),
        (
            lambda: workload.make_arrival_process("gamma(rate=nan)"),
            ValueError,
            "gamma: rate=nan is NaN",
        ),
        (
            lambda: workload.make_arrival_process("gamma(rate=inf)"),
            ValueError,
            "gamma: rate=inf must be finite",
        ),
        (
            lambda: workload.make_arrival_process("gamma(rate=x)"),
            ValueError,
            "gamma: rate='x' is not a float",
        ),
        (
            lambda: workload.make_arrival_process("mmpp(rate_on=1)"),
            ValueError,
            "parameter 'mean_on_s' is required",
        ),
        (
            lambda: workload.make_arrival_process("poisson(rate=1"),
            ValueError,
            "at character 15: expected ')'",
        ),
        (
            lambda: workload.make_arrival_process("poisson(rate=1)", rate=2),
            ValueError,
            "parameter 'rate' is given in the spec and as a keyword",
        ),
        (
            lambda: workload.make_arrival_process("poisson", rate={"a": 1}),
            ValueError,
            "rate={'a': 1} is not a bool, int, float, str or list of floats",
        ),
        (
            lambda: workload.make_arrival_process("piecewise_rate", interval_s=1, rates=[1, -2]),
            ValueError,
            "element 1 of rates",
        ),
        (
            lambda: workload.make_arrival_process("poisson", rate=True),
            ValueError,
            "rate=true is not a float",
        ),
    ],
)
def test_bad_specs_name_the_field_and_value(call, exception, message):
    with pytest.raises(exception, match=re.escape(message)):
        call()
