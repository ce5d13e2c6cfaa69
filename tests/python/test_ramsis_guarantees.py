"""RAMSIS's guarantees (Sec. 5.1): the stationary distribution against a direct Monte Carlo of one
worker, and the expected accuracy against the simulator (the paper's Fig. 7)."""

import numpy as np
import pytest

from servelab import ramsis

from .shared_data import shared_path
from .test_ramsis_mdp import SMALL, small_table


@pytest.fixture(scope="module")
def image():
    return ramsis.image_task(shared_path("ramsis"))


def test_guarantees_are_consistent():
    p = ramsis.solve(small_table(), **SMALL)
    g = ramsis.expected_performance(p, small_table())
    assert g["expected_accuracy"] == pytest.approx(p.expected_accuracy, rel=1e-12)
    assert g["expected_violation"] == pytest.approx(p.expected_violation, rel=1e-12, abs=1e-15)
    dist = g["distribution"]
    assert dist.sum() == pytest.approx(1.0, abs=1e-12) and (dist >= 0).all()
    assert g["converged"] and g["mean_batch"] >= 1
    assert min(small_table().accuracy) <= g["expected_accuracy"] <= max(small_table().accuracy)
    # the empty states are only a starting point: the chain leaves them for good
    assert dist[: p.num_levels].sum() < 1e-9
    # the same policy under a heavier load than it was made for violates more
    heavier = ramsis.expected_performance(p, small_table(), load_qps=SMALL["load_qps"] * 1.5)
    assert heavier["expected_violation"] > g["expected_violation"]
    # expected_performance(mdp, policy) is the same thing
    mdp = ramsis.build_mdp(small_table(), **SMALL)
    assert ramsis.expected_performance(mdp, p)["expected_accuracy"] == pytest.approx(
        g["expected_accuracy"], rel=1e-12
    )
    assert ramsis.expected_performance(mdp, mdp.choice_of(p))[
        "expected_violation"
    ] == pytest.approx(g["expected_violation"], rel=1e-12, abs=1e-15)


def total_variation(a, b):
    return 0.5 * np.abs(np.asarray(a) - np.asarray(b)).sum()


def test_monte_carlo_visits_match_the_stationary_distribution_small():
    p = ramsis.solve(small_table(), **SMALL)
    g = ramsis.expected_performance(p, small_table())
    mc = ramsis.simulate_worker(p, small_table(), decisions=40_000, seed=3)
    again = ramsis.simulate_worker(p, small_table(), decisions=40_000, seed=3)
    assert np.array_equal(mc["visits"], again["visits"])  # same seed, same run
    assert total_variation(mc["visits"], g["distribution"]) < 0.05
    assert mc["accuracy"] == pytest.approx(g["expected_accuracy"], rel=0.01)
    # the expected violation is an upper bound (Sec. 5.1)
    assert mc["violation"] <= g["expected_violation"] + 0.002


def test_monte_carlo_visits_match_the_stationary_distribution_image(image):
    p = ramsis.solve(image, slo_ms=150, load_qps=2000, workers=60)
    g = ramsis.expected_performance(p, image)
    mc = ramsis.simulate_worker(p, image, decisions=50_000, seed=1)
    tv = total_variation(mc["visits"], g["distribution"])
    assert tv < 0.05, tv
    assert mc["accuracy"] == pytest.approx(g["expected_accuracy"], rel=0.01)
    assert mc["violation"] <= g["expected_violation"] + 0.002


# (workers, load QPS) of the image task at 150 ms that the policies serve (expected violation
# well under 1%), as in Fig. 7's 40 / 60 / 80 workers.
FIG7 = [(40, 800), (60, 800), (60, 2000), (80, 2000), (80, 3200)]


def test_expectation_matches_simulation_fig7(image):
    data = shared_path("ramsis")
    rows = []
    for workers, load in FIG7:
        p = ramsis.solve(image, slo_ms=150, load_qps=load, workers=workers)
        assert p.feasible and p.expected_violation < 0.005
        run = ramsis.run_experiment("image", "ramsis", workers=workers, load=load, data=data)
        simulated = run.summary["accuracy_per_satisfied_query"]  # a fraction, as expected_accuracy
        expected = p.expected_accuracy
        rows.append((workers, load, expected, simulated))
        assert abs(expected - simulated) <= 0.01 * simulated, rows
        assert run.summary["violation_rate"] <= p.expected_violation + 0.002, rows


def test_monte_carlo_erlang_arrivals():
    # D = 40: with D = 10 the coarse slack levels alone keep the expectation ~1% below
    options = {**SMALL, "intervals": 40, "arrivals": "erlang", "shape": 3}
    p = ramsis.solve(small_table(), **options)
    assert p.arrivals == "erlang3"
    g = ramsis.expected_performance(p, small_table())
    mc = ramsis.simulate_worker(p, small_table(), decisions=40_000, seed=5)
    assert total_variation(mc["visits"], g["distribution"]) < 0.05
    assert mc["accuracy"] == pytest.approx(g["expected_accuracy"], rel=0.01)
    # smoother arrivals than Poisson at the same load: no worse
    poisson = ramsis.solve(small_table(), **{**SMALL, "intervals": 40})
    assert p.expected_accuracy >= poisson.expected_accuracy - 1e-9
