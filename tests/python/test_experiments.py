"""QoS targets, the allowable-throughput search (against M/M/1 formulas) and parameter sweeps
(in this process and in worker processes)."""

import math
import os
import sys

import numpy as np
import pytest

from servelab.experiments import AllowableThroughput, QoS, allowable_throughput, tail_latency_ms
from servelab.sweeps import SweepError, grid_points, sweep

from . import fake_results
from .fake_results import (
    MS,
    failing_point,
    fifo_point,
    make_result,
    mm1_p99_run,
    shifted_point,
    square_point,
)

ARRIVAL = np.array([0, 10, 20, 30, 40]) * MS
FINISH = np.array([5, 25, 45, 150, 41]) * MS


def tiny():
    """Latencies 5, 15, 25, 120 ms and one drop, with a 100 ms SLO (2 of 5 violate it)."""
    start = np.array([0, 10, 25, 45, -1]) * MS
    return make_result(ARRIVAL, FINISH, start_ns=start, status=[0, 0, 0, 0, 1])


# ---- QoS ----------------------------------------------------------------------------------------


def test_tail_latency_counts_drops_as_infinitely_late():
    result = tiny()
    assert tail_latency_ms(result, 50) == pytest.approx(25.0)  # median of 5, 15, 25, 120, inf
    assert tail_latency_ms(result, 75) == pytest.approx(120.0)
    assert tail_latency_ms(result, 76) == math.inf  # interpolates towards the dropped query
    assert tail_latency_ms(result, 99) == math.inf
    no_drops = make_result(ARRIVAL[:4], FINISH[:4])
    assert tail_latency_ms(no_drops, 99) == pytest.approx(np.percentile([5, 15, 25, 120], 99))
    assert tail_latency_ms(result, 50, warmup_s=0.015) == pytest.approx(120.0)  # 25, 120, inf


def test_qos_percentile_and_violation_targets():
    result = tiny()
    assert QoS(percentile=50, target_ms=30).holds(result)
    assert not QoS(percentile=50, target_ms=10).holds(result)
    assert not QoS(percentile=99, target_ms=1e9).holds(result)  # 20% dropped
    assert QoS(max_violation_rate=0.4).holds(result)
    assert not QoS(max_violation_rate=0.39).holds(result)
    both = QoS(percentile=50, target_ms=30, max_violation_rate=0.39)
    assert not both.holds(result)
    assert both.measure(result) == {"p50_ms": pytest.approx(25.0), "violation_rate": 0.4}
    assert both.describe() == "p50 latency <= 30 ms and SLO violations <= 0.39"
    assert QoS(percentile=99.9, target_ms=350).describe() == "p99.9 latency <= 350 ms"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"percentile": 99}, r"percentile=99 and target_ms=None go together"),
        ({}, r"QoS needs a target"),
        ({"percentile": 0, "target_ms": 10}, r"percentile=0 must be in \(0, 100\]"),
        ({"percentile": 101, "target_ms": 10}, r"percentile=101 must be in \(0, 100\]"),
        ({"percentile": 99, "target_ms": -5}, r"target_ms=-5 must be > 0"),
        ({"percentile": 99, "target_ms": math.nan}, r"target_ms=nan must be finite"),
        ({"max_violation_rate": 1.5}, r"max_violation_rate=1.5 must be in \[0, 1\]"),
        ({"max_violation_rate": "1%"}, r"max_violation_rate='1%' must be a number"),
    ],
)
def test_bad_qos_raises_naming_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        QoS(**kwargs)


def test_qos_cannot_judge_a_run_without_queries():
    empty = make_result([], [], duration_ns=10)
    with pytest.raises(ValueError, match="no query arrived after the warmup"):
        QoS(percentile=99, target_ms=10).holds(empty)


# ---- allowable throughput -----------------------------------------------------------------------

QOS = QoS(percentile=99, target_ms=350)
THRESHOLD = fake_results.mm1_threshold(350)  # about 86.8 qps for mu = 100 qps


def test_finds_the_mm1_threshold_within_rel_tol():
    found = allowable_throughput(mm1_p99_run, QOS, low=10, rel_tol=0.01)
    assert isinstance(found, AllowableThroughput)
    assert found.feasible and found.converged
    lo, hi = found.bracket
    assert found.rate == lo <= THRESHOLD < hi
    assert (hi - lo) / hi <= 0.01
    assert found.qos == "p99 latency <= 350 ms"
    # Every evaluation agrees with the formula.
    for ev in found.evaluations:
        assert ev.passed == (ev.rate <= THRESHOLD)


def test_bracket_doubles_from_low_then_bisects():
    found = allowable_throughput(mm1_p99_run, QOS, low=10, rel_tol=0.001)
    rates = [ev.rate for ev in found.evaluations]
    assert rates[:5] == [10, 20, 40, 80, 160]
    assert [ev.passed for ev in found.evaluations[:5]] == [True, True, True, True, False]
    assert rates[5] == 120  # the first bisection of (80, 160)
    assert (found.bracket[1] - found.bracket[0]) / found.bracket[1] <= 0.001
    frame = found.to_frame()
    assert list(frame.columns) == ["step", "rate", "passed", "seed", "p99_ms"]
    assert len(frame) == len(found.evaluations)


def test_given_high_skips_the_doubling():
    found = allowable_throughput(mm1_p99_run, QOS, low=10, high=95, rel_tol=0.005)
    assert [ev.rate for ev in found.evaluations[:3]] == [10, 95, 52.5]
    assert found.rate <= THRESHOLD < found.bracket[1] and found.converged


def test_high_that_passes_is_a_lower_bound():
    found = allowable_throughput(mm1_p99_run, QOS, low=10, high=50)
    assert found.rate == 50 and found.bracket == (50, math.inf)
    assert found.feasible and not found.converged and len(found.evaluations) == 2


def test_infeasible_low_gives_zero():
    found = allowable_throughput(mm1_p99_run, QOS, low=95)
    assert found.rate == 0.0 and not found.feasible and not found.converged
    assert found.bracket == (0.0, 95) and len(found.evaluations) == 1
    p99 = found.evaluations[0].metrics[0]["p99_ms"]
    assert p99 == pytest.approx(math.log(100) / (100 - 95) * 1000)  # M/M/1 p99 sojourn time
    unstable = allowable_throughput(mm1_p99_run, QOS, low=120)  # every query dropped
    assert not unstable.feasible and unstable.evaluations[0].metrics[0]["p99_ms"] == math.inf


def test_a_rate_passes_only_if_every_seed_passes():
    seeds = (0, 20)  # seed 20 lowers mu by 2 qps, and so the threshold
    found = allowable_throughput(mm1_p99_run, QOS, low=10, seeds=seeds, rel_tol=0.001)
    lower = fake_results.mm1_threshold(350, service_rate=98.0)
    assert found.rate <= lower < found.bracket[1]
    assert found.seeds == seeds
    for ev in found.evaluations:
        # All seeds run when the first passes; the second is skipped once the first fails.
        assert len(ev.metrics) == (2 if ev.rate <= THRESHOLD else 1)


def test_max_iter_stops_the_search_unconverged():
    found = allowable_throughput(mm1_p99_run, QOS, low=10, max_iter=3)
    assert len(found.evaluations) == 3 and not found.converged
    assert found.rate == 40 and found.bracket == (40, math.inf)  # never saw a failure


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"low": 0}, r"low=0.0 must be > 0"),
        ({"low": -3}, r"low=-3.0 must be > 0"),
        ({"low": math.nan}, r"low=nan must be finite"),
        ({"low": 10, "high": 5}, r"high=5.0 must be > low=10.0"),
        ({"low": 10, "rel_tol": 0}, r"rel_tol=0.0 must be in \(0, 1\)"),
        ({"low": 10, "max_iter": 1}, r"max_iter=1 must be an integer >= 2"),
        ({"low": 10, "seeds": ()}, r"seeds=\(\) must name at least one seed"),
    ],
)
def test_bad_search_arguments_raise_naming_them(kwargs, message):
    with pytest.raises(ValueError, match=message):
        allowable_throughput(mm1_p99_run, QOS, **kwargs)


def test_run_must_return_a_result():
    with pytest.raises(TypeError, match=r"run\(10.0, 0\) returned dict, not a Result"):
        allowable_throughput(lambda rate, seed: {}, QOS, low=10)
    with pytest.raises(ValueError, match=r"qos='p99' must be a QoS"):
        allowable_throughput(mm1_p99_run, "p99", low=10)


# ---- sweeps -------------------------------------------------------------------------------------


def test_grid_points_are_a_cartesian_product_in_order():
    points = grid_points({"a": [1, 2], "b": ["x", "y", "z"]})
    assert points[:4] == [
        {"a": 1, "b": "x"},
        {"a": 1, "b": "y"},
        {"a": 1, "b": "z"},
        {"a": 2, "b": "x"},
    ]
    assert len(points) == 6
    assert grid_points([{"a": 1}, {"a": 5, "b": 2}]) == [{"a": 1}, {"a": 5, "b": 2}]
    assert grid_points({"a": range(3)}) == [{"a": 0}, {"a": 1}, {"a": 2}]


def test_sweep_in_process_keeps_grid_order():
    frame = sweep(square_point, {"x": [3, 1, 2], "y": [0, 10]}, processes=1, progress=False)
    assert list(frame.columns[:2]) == ["x", "y"]
    assert list(frame["x"]) == [3, 3, 1, 1, 2, 2]
    assert list(frame["square"]) == [9, 9, 1, 1, 4, 4]
    assert list(frame["y_plus"]) == [1, 11] * 3
    assert set(frame["pid"]) == {os.getpid()}


def test_sweep_flattens_a_returned_result_into_its_summary():
    grid = [{"rate_qps": 50.0, "workers": 1}, {"rate_qps": 150.0, "workers": 2}]
    frame = sweep(fifo_point, grid, processes=1, progress=False)
    expected = fifo_point(50.0, 1).summary()
    assert frame.loc[0, "latency_ms.p99"] == pytest.approx(expected["latency_ms"]["p99"])
    assert frame.loc[0, "throughput_qps"] == pytest.approx(expected["throughput_qps"])
    assert list(frame["workers"]) == [1, 2] and len(frame.loc[1, "utilisation.per_worker"]) == 2


def test_sweep_in_worker_processes_matches_in_process(capsys):
    grid = {"x": list(range(6))}
    frame = sweep(square_point, grid, processes=2, progress=True, desc="squares")
    assert list(frame["square"]) == [x * x for x in range(6)]
    assert os.getpid() not in set(frame["pid"])  # the points ran elsewhere
    assert "squares" in capsys.readouterr().err  # the tqdm bar
    serial = sweep(square_point, grid, processes=1, progress=False)
    assert frame.drop(columns="pid").equals(serial.drop(columns="pid"))


@pytest.mark.parametrize("processes", [1, 2])
def test_a_failing_point_is_named(processes):
    with pytest.raises(SweepError, match=r"sweep point 3 \{'x': 3\} failed: ZeroDivisionError"):
        sweep(failing_point, {"x": [0, 1, 2, 3, 4]}, processes=processes, progress=False)


def test_bad_sweep_arguments():
    with pytest.raises(ValueError, match=r"cannot be sent to worker processes"):
        sweep(lambda x: {"y": x}, {"x": [1, 2]}, processes=2, progress=False)
    with pytest.raises(ValueError, match=r"grid\['x'\]=5 must be a list of values"):
        sweep(square_point, {"x": 5}, processes=1)
    with pytest.raises(ValueError, match=r"grid\['x'\]='abc' must be a list of values"):
        sweep(square_point, {"x": "abc"}, processes=1)
    with pytest.raises(ValueError, match=r"grid\[1\]=3 must be a dict of parameters"):
        sweep(square_point, [{"x": 1}, 3], processes=1)
    with pytest.raises(ValueError, match=r"processes=0 must be an integer >= 1"):
        sweep(square_point, {"x": [1]}, processes=0)
    with pytest.raises(ValueError, match=r"fn returned x=2, clashing with the grid's x=1"):
        sweep(shifted_point, {"x": [1]}, processes=1, progress=False)


def test_functions_defined_in_a_notebook_cannot_go_to_workers(monkeypatch):
    import types

    def in_notebook(x):
        return {"x2": x}

    in_notebook.__module__ = "__main__"
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))  # no __file__
    with pytest.raises(ValueError, match=r"fn='.*in_notebook' is defined interactively"):
        sweep(in_notebook, {"x": [1, 2]}, processes=2, progress=False)
    assert list(sweep(in_notebook, {"x": [1, 2]}, processes=1, progress=False)["x2"]) == [1, 2]
