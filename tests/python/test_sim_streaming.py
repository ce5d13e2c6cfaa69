"""Streamed runs (records="none" / "sample(p)"): the online summary agrees with the summary of
the full records on the conformance scenarios (counts exact, percentiles within the sketch's
stated relative error), the same seed gives the same result, sampled records are the full
records' rows, and memory does not grow with the number of queries."""

from __future__ import annotations

import math

import numpy as np
import pytest

import servelab
from servelab.results import _flatten

from .test_conformance import CASES, SCHEDULERS, make

SIM_CASES = [case for (world, case) in CASES if world == "sim"]
APPROX = (
    "latency_ms.p50",
    "latency_ms.p90",
    "latency_ms.p95",
    "latency_ms.p99",
    "queue_ms.p50",
    "queue_ms.p99",
    "service_ms.p50",
    "service_ms.p99",
)


def _sim(name: str, case: str, records: str, seed: int = 0) -> servelab.Result:
    return servelab.simulate(CASES[("sim", case)], scheduler=make(name), seed=seed, records=records)


def _assert_agree(full: dict, streamed: dict, alpha: float, where: str) -> None:
    a, b = _flatten(full), _flatten(streamed)
    assert a.keys() == b.keys(), where
    for key, x in a.items():
        y = b[key]
        if x is None or y is None:
            assert x is None and y is None, f"{where} {key}: {x} vs {y}"
        elif key in APPROX:
            assert abs(y - x) <= alpha * abs(x) + 1e-9, f"{where} {key}: {x} vs {y}"
        elif isinstance(x, float) or isinstance(y, float):
            assert math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12), f"{where} {key}: {x} vs {y}"
        else:
            assert x == y, f"{where} {key}: {x} vs {y}"


@pytest.mark.parametrize("case", SIM_CASES)
@pytest.mark.parametrize("name", SCHEDULERS)
def test_streamed_summary_agrees_with_the_full_records(name, case):
    full = _sim(name, case, "all")
    streamed = _sim(name, case, "none")
    alpha = streamed.streamed["relative_error"]
    assert sorted(streamed.streamed["approximate"]) == sorted(APPROX)
    _assert_agree(full.summary(), streamed.summary(), alpha, f"{name}/{case}")
    for app, metrics in full.summary(by="app").items():
        _assert_agree(metrics, streamed.summary(by="app")[app], alpha, f"{name}/{case}/{app}")
    ta, tb = full.timeseries(), streamed.timeseries()
    assert list(ta.columns) == list(tb.columns)
    assert np.array_equal(ta.index, tb.index)
    for col in ta.columns:
        x, y = ta[col].to_numpy(), tb[col].to_numpy()
        assert np.array_equal(np.isnan(x), np.isnan(y)), col
        ok = ~np.isnan(x)
        tol = alpha * np.abs(x[ok]) + 1e-9 if col.startswith("latency_") else 1e-9 * np.abs(x[ok])
        assert np.all(np.abs(x[ok] - y[ok]) <= tol + 1e-12), col


def test_same_seed_same_streamed_result_and_seeds_differ():
    a = _sim("fcfs", "two_apps", "none", seed=4)
    b = _sim("fcfs", "two_apps", "none", seed=4)
    c = _sim("fcfs", "two_apps", "none", seed=5)
    assert a.summary() == b.summary()
    assert a.summary(by="app") == b.summary(by="app")
    assert a.timeseries().equals(b.timeseries())
    assert a.summary() != c.summary()


def test_sample_keeps_the_full_records_of_a_seeded_bernoulli_sample():
    full = _sim("jsq", "overloaded", "all", seed=2)
    sample = _sim("jsq", "overloaded", "sample(0.25)", seed=2)
    ids = sample.columns["id"]
    assert np.all(np.diff(ids) > 0)
    n = len(full)
    # Bernoulli(0.25) of n queries: within 5 standard deviations of n/4.
    assert abs(len(ids) - n / 4) <= 5 * math.sqrt(n * 0.25 * 0.75)
    for name, col in sample.columns.items():
        assert np.array_equal(full.columns[name][ids], col, equal_nan=col.dtype.kind == "f"), name
    again = _sim("jsq", "overloaded", "sample(0.25)", seed=2)
    assert np.array_equal(again.columns["id"], ids)
    assert len(sample) == n  # the summary covers every query, not just the sample
    assert sample.summary()["queries"] == n
    assert len(_sim("jsq", "overloaded", "sample(0)", seed=2).columns["id"]) == 0
    assert np.array_equal(
        _sim("jsq", "overloaded", "sample(1)", seed=2).columns["id"], np.arange(n)
    )


def test_records_none_refuses_per_query_arrays_and_warmup_with_a_clear_error():
    res = _sim("fcfs", "moderate", "none")
    with pytest.raises(ValueError, match="records='none'"):
        res.columns  # noqa: B018
    with pytest.raises(ValueError, match="records='none'"):
        res.to_pandas()
    with pytest.raises(ValueError, match="warmup_s"):
        res.summary(warmup_s=1.0)
    with pytest.raises(ValueError, match="window_s"):
        res.timeseries(window_s=2.0)
    with pytest.raises(ValueError, match="check_consistency"):
        res.check_consistency()
    assert "completed=" in repr(res)


@pytest.mark.parametrize(
    "bad", ["bogus", "sample(1.5)", "sample(-0.1)", "sample()", "sample(x)", 3]
)
def test_bad_records_value_names_the_key_and_value(bad):
    with pytest.raises(ValueError, match=r"records=.*must be 'all', 'none' or 'sample\(p\)'"):
        servelab.simulate(CASES[("sim", "moderate")], records=bad)


def test_serve_refuses_streamed_records():
    with pytest.raises(ValueError, match="records='none'"):
        servelab.serve(CASES[("serve", "two_apps")], records="none")


def test_records_key_round_trips_through_the_scenario():
    res = servelab.simulate({**CASES[("sim", "moderate")], "records": "sample(0.5)"})
    assert res.meta["scenario"]["records"] == "sample(0.5)"
    assert res.meta["records"] == "sample(0.5)"
    assert "records" not in servelab.simulate(CASES[("sim", "moderate")]).meta["scenario"]


def _fcfs_peak(count: int) -> int:
    res = servelab.simulate(
        {
            "profile": "example:hetero_cpu_gpu",
            "workers": [{"hardware": "c5n.2xlarge", "count": 200, "models": ["rm2"]}],
            "workload": {
                "arrivals": "poisson(rate=1000)",
                "count": count,
                "apps": [{"name": "rm2", "slo_ms": 350, "sizes": "kairos_mix()"}],
            },
        },
        records="none",
    )
    assert res.summary()["queries"] == count
    return res.streamed["peak_bytes"]


def test_memory_does_not_grow_with_the_number_of_queries():
    # The run's own accounting of what it holds (records not yet streamed out, sketches,
    # windows): ten times the queries may add only the time series' windows.
    small, large = _fcfs_peak(200_000), _fcfs_peak(2_000_000)
    assert large <= small * 1.25
    assert large < 2_000_000 * 10  # far below a record (70 bytes) per query
