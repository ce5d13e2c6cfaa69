"""servelab.solvers.search: search over integer configuration spaces with a Python objective."""

import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from servelab.solvers import search
from servelab.solvers.search import SearchSpace, maximize, minimize_cost

METHODS = ["exhaustive", "random", "genetic", "bayesian", "annealing", "hill_climbing"]


def kairos_space() -> SearchSpace:
    return SearchSpace(
        [5, 8, 10],
        unit_cost=[0.526, 0.252, 0.168],
        names=["g4dn", "c5n", "r5n"],
        budget=2.5,
        at_least={"g4dn": 1},
    )


def throughput(x) -> float:
    gpu = 100.0 * math.sqrt(x[0])
    return gpu + min(38.0 * x[1] ** 0.8 + 21.0 * x[2] ** 0.75, 1.5 * gpu)


def ribbon_space() -> SearchSpace:
    return SearchSpace(
        [8, 11, 9], unit_cost=[0.616, 0.384, 0.3328], names=["c5a", "m5", "t3"], min_total=1
    )


def qos(x) -> float:
    return 100.0 * (1.0 - math.exp(-(x[0] + 0.55 * x[1] + 0.5 * x[2]) / 1.4))


def test_space_enumerates_feasible_points():
    space = kairos_space()
    points = space.enumerate()
    assert points.dtype == np.int64 and points.shape[1] == 3
    expected = [
        (a, b, c)
        for a in range(1, 6)
        for b in range(9)
        for c in range(11)
        if 0.526 * a + 0.252 * b + 0.168 * c <= 2.5 + 1e-9
    ]
    assert [tuple(p) for p in points] == expected
    assert space.cost((1, 2, 3)) == pytest.approx(0.526 + 2 * 0.252 + 3 * 0.168)
    assert (
        space.feasible((1, 0, 0))
        and not space.feasible((0, 1, 0))
        and not space.feasible((5, 8, 10))
    )
    assert space.names == ["g4dn", "c5n", "r5n"] and space.at_least == [(0, 1)] and len(space) == 3
    assert "g4dn=[0, 5]" in repr(space)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"upper": []}, "dimensions is empty"),
        ({"upper": [2], "lower": [3]}, "upper=2 is below lower=3"),
        ({"upper": [2], "unit_cost": [-1.0]}, "unit_cost=-1"),
        (
            {"upper": [2], "unit_cost": [1.0], "lower": [1], "budget": 0.5},
            "budget=0.5 is below the cheapest",
        ),
        ({"upper": [2], "budget": float("nan")}, "budget=nan"),
        ({"upper": [2, 2], "names": ["a", "a"]}, "repeated"),
        ({"upper": [2], "at_least": {0: 3}}, "count=3"),
        ({"upper": [2], "at_least": {4: 1}}, "at_least key 4"),
        ({"upper": [2], "lower": [0, 0]}, "same length"),
        ({"upper": [2], "min_total": -1}, "min_total=-1"),
    ],
)
def test_space_rejects_bad_input_naming_the_field(kwargs, message):
    upper = kwargs.pop("upper")
    with pytest.raises(ValueError, match=message):
        SearchSpace(upper, **kwargs)


def test_space_unknown_name_is_a_key_error():
    with pytest.raises(KeyError, match="gpu"):
        SearchSpace([2], names=["cpu"], at_least={"gpu": 1})


def test_kairos_plus_finds_the_optimum_with_few_evaluations():
    space = kairos_space()
    reference = maximize(space, throughput, method="exhaustive")
    bounds = {tuple(int(v) for v in p): 1.15 * throughput(p) + 3.0 for p in space.enumerate()}
    result = maximize(space, throughput, method="kairos_plus", upper_bound=bounds)
    assert result.best_config == reference.best_config
    assert result.best_value == pytest.approx(reference.best_value)
    assert result.evaluations * 5 < result.space_points
    assert result.evaluations_to_reach(reference.best_value) == result.best_index
    assert result.share == result.evaluations / result.space_points
    # Descending bound order.
    order = [bounds[tuple(int(v) for v in c)] for c in result.trace_configs]
    assert order == sorted(order, reverse=True)
    # The same with the bound as a callable.
    again = maximize(space, throughput, upper_bound=lambda c: 1.15 * throughput(c) + 3.0)
    assert np.array_equal(again.trace_configs, result.trace_configs)


def test_kairos_plus_needs_a_bound_and_a_complete_one():
    with pytest.raises(ValueError, match="upper_bound"):
        maximize(kairos_space(), throughput)
    with pytest.raises(KeyError, match=r"no entry for config \(1, 0, 0\)"):
        maximize(kairos_space(), throughput, upper_bound={(5, 0, 0): 1.0})


@pytest.mark.parametrize("method", METHODS)
def test_every_method_finds_both_optima_evaluating_each_config_once(method):
    space = ribbon_space()
    optimum = minimize_cost(space, qos, 99.0, method="exhaustive")
    calls: dict[tuple, int] = {}

    def counted(x):
        calls[x] = calls.get(x, 0) + 1
        return qos(x)

    result = minimize_cost(space, counted, 99.0, method=method, seed=5)
    assert result.found and result.best_cost == pytest.approx(optimum.best_cost)
    assert all(n == 1 for n in calls.values()) and len(calls) == result.evaluations
    assert all(isinstance(v, int) for c in calls for v in c)
    assert result.evaluations + result.pruned + result.unexplored == result.space_points
    best = maximize(kairos_space(), throughput, method=method, seed=5)
    assert best.best_config == maximize(kairos_space(), throughput, method="exhaustive").best_config


@pytest.mark.parametrize("method", METHODS[1:])
def test_same_seed_same_trace(method):
    a = minimize_cost(ribbon_space(), qos, 99.0, method=method, seed=11)
    b = minimize_cost(ribbon_space(), qos, 99.0, method=method, seed=11)
    c = minimize_cost(ribbon_space(), qos, 99.0, method=method, seed=12)
    assert np.array_equal(a.trace_configs, b.trace_configs)
    assert not np.array_equal(a.trace_configs, c.trace_configs)


def test_limits_and_stop_at():
    optimum = minimize_cost(ribbon_space(), qos, 99.0, method="exhaustive")
    limited = minimize_cost(ribbon_space(), qos, 99.0, method="random", max_evaluations=4)
    assert limited.evaluations == 4 and limited.stop_reason == "max_evaluations"
    early = minimize_cost(ribbon_space(), qos, 99.0, method="bayesian", stop_at=optimum.best_cost)
    assert early.stop_reason == "stop_at" and early.best_index == early.evaluations


def test_trace_frame_and_result_fields():
    result = minimize_cost(ribbon_space(), qos, 99.0, method="random", seed=1)
    frame = search.trace_frame(result, names=ribbon_space().names)
    assert list(frame.columns) == ["index", "c5a", "m5", "t3", "value", "cost", "feasible"]
    assert len(frame) == result.evaluations
    assert frame["feasible"].tolist() == (frame["value"] >= 99.0).tolist()
    assert result.goal == "minimize_cost" and result.method == "random()"
    assert "best_config=" in repr(result)


def test_no_feasible_configuration_is_reported_not_raised():
    space = SearchSpace([3, 3], unit_cost=[1.0, 1.0], budget=1.0, min_total=2)
    result = maximize(space, lambda x: 1.0, method="random")
    assert not result.found and result.best_config is None and result.stop_reason == "empty"
    assert result.space_points == 0 and np.isnan(result.share)
    # Nothing meets the target: violations prune what they dominate until nothing is left.
    impossible = minimize_cost(ribbon_space(), qos, 101.0, method="bayesian")
    assert (
        not impossible.found
        and impossible.stop_reason == "exhausted"
        and impossible.unexplored == 0
    )


def test_registry_and_bad_arguments():
    names = {m["name"] for m in search.list_search_methods()}
    assert names == {"kairos_plus", *METHODS}
    with pytest.raises(KeyError, match="no_such"):
        minimize_cost(ribbon_space(), qos, 99.0, method="no_such")
    with pytest.raises(KeyError, match="population_size"):
        minimize_cost(ribbon_space(), qos, 99.0, method="genetic", population_size=3)
    with pytest.raises(ValueError, match="population=1"):
        minimize_cost(ribbon_space(), qos, 99.0, method="genetic", population=1)
    with pytest.raises(ValueError, match="max_evaluations=0"):
        minimize_cost(ribbon_space(), qos, 99.0, max_evaluations=0)
    with pytest.raises(ValueError, match="not callable"):
        minimize_cost(ribbon_space(), 3, 99.0)
    with pytest.raises(ValueError, match="seed"):
        minimize_cost(ribbon_space(), qos, 99.0, seed=-1)
    with pytest.raises(KeyError, match="gpu"):
        minimize_cost(ribbon_space(), qos, 99.0, strict_dimensions=["gpu"])


def test_objective_exceptions_propagate_unchanged():
    class Boom(Exception):
        pass

    def objective(x):
        if x[1] == 2:
            raise Boom(f"bad config {x}")
        return qos(x)

    with pytest.raises(Boom, match="bad config"):
        minimize_cost(ribbon_space(), objective, 99.0, method="exhaustive")
    with pytest.raises(ValueError, match=r"objective\(.*\) returned 'fast'"):
        minimize_cost(ribbon_space(), lambda x: "fast", 99.0)
    with pytest.raises(ValueError, match="returned nan"):
        minimize_cost(ribbon_space(), lambda x: float("nan"), 99.0)


def test_keyboard_interrupt_from_the_objective_is_not_swallowed():
    def objective(x):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        minimize_cost(ribbon_space(), objective, 99.0, method="bayesian")


def test_ctrl_c_stops_a_long_search_promptly():
    space = SearchSpace([99, 99, 9], min_total=1)  # 100,000 points

    def slow(x):
        time.sleep(0.001)
        return 0.0

    timer = threading.Timer(0.2, os.kill, args=(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            maximize(space, slow, method="exhaustive")
    finally:
        timer.cancel()
    assert time.monotonic() - start < 5.0
    # The interpreter and the module still work afterwards.
    assert (
        minimize_cost(ribbon_space(), qos, 99.0, method="random", max_evaluations=3).evaluations
        == 3
    )


def test_search_benchmark_smoke():
    """The benchmark checks both implementations reach the optimum before printing its ratios."""
    bench = Path(__file__).parents[2] / "benchmarks" / "python" / "bench_search.py"
    proc = subprocess.run(
        [sys.executable, str(bench), "--smoke"], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ratio" in proc.stdout
