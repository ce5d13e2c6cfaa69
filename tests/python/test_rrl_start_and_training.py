"""The two settings issue 36 tested against the paper's Fig. 11 and Sec. 6.3: where Q starts
(Algorithm 1's optimistic 1/|C|, which forces a sweep of the space, or the artifact's first
measured latency) and how much the estimator trains per observation (one FTRL step, more, or
until its loss over the memory stops improving, as the artifact retrains)."""

from __future__ import annotations

import numpy as np
import pytest

from servelab import rrl
from servelab.reproduction.rrl import _grid, sweep_end

SPACE = rrl.cpu_space(4)  # 64 configurations
MODEL = rrl.PerfModel(cores=4)
SMALL = {"steps": 120, "model": MODEL, "oracle_episodes": 5}


def tune(method: str = "rrl", seed: int = 0, **learner):
    return rrl.tune(SPACE, "poisson(rate=3.5)", method, learner=learner, seed=seed, **SMALL)


def test_the_optimistic_start_sweeps_every_configuration_first():
    # Q = 1/|C| is below every cost: point-based learning measures each configuration once
    # before any twice, and the region learner covers the space in fewer episodes.
    point = tune("qlearning")
    configs = point.columns["config"][: SPACE.size]
    assert len(set(configs.tolist())) == SPACE.size
    grid = _grid(SPACE)
    assert sweep_end(grid, point.columns["config"], 0.0) == SPACE.size
    assert 0 < sweep_end(grid, tune(radius=1.0).columns["config"], 1.0) < SPACE.size


def test_the_artifacts_start_forces_no_sweep_and_costs_less_over_a_run():
    optimistic = [tune(radius=1.0, seed=s) for s in range(3)]
    first = [tune(radius=1.0, seed=s, initial="first") for s in range(3)]
    # From the first measured latency, far fewer configurations are tried in a run.
    assert np.mean([len(set(r.columns["config"].tolist())) for r in first]) < np.mean(
        [len(set(r.columns["config"].tolist())) for r in optimistic]
    )
    mean = [np.mean([r.summary()["mean_chosen_latency_ms"] for r in runs])
            for runs in (optimistic, first)]  # fmt: skip
    assert mean[1] < mean[0]
    assert tune(radius=1.0, initial="first").settings["learner"]["initial"] == "first"


def test_training_to_a_plateau_takes_more_steps_and_is_deterministic():
    a = tune(radius=1.0, plateau_patience=3, plateau_every=5, max_train_steps=40, batch=8)
    b = tune(radius=1.0, plateau_patience=3, plateau_every=5, max_train_steps=40, batch=8)
    np.testing.assert_array_equal(a.columns["config"], b.columns["config"])
    np.testing.assert_array_equal(a.columns["metric_ms"], b.columns["metric_ms"])
    # The estimator itself: more steps than the one per observation, at most the cap.
    plateau = {"plateau_patience": 3, "plateau_every": 5, "max_train_steps": 40}
    est = rrl.LatencyEstimator(4, plateau)
    for i in range(6):
        est.observe([0.1 * i, 0.2, 0.3, 0.5], 10.0 + i)
    assert 6 * (1 + 3 * 5) <= est.steps_trained <= 6 * 40
    one = rrl.LatencyEstimator(4, {})
    for i in range(6):
        one.observe([0.1 * i, 0.2, 0.3, 0.5], 10.0 + i)
    assert one.steps_trained == 6


@pytest.mark.parametrize(
    ("learner", "match"),
    [
        ({"initial": "pessimistic"}, r"initial='pessimistic'.*'optimistic'.*'first'"),
        ({"plateau_patience": -1}, "plateau_patience=-1"),
        ({"plateau_every": 0}, "plateau_every=0"),
        ({"max_train_steps": 0}, "max_train_steps=0"),
    ],
)
def test_bad_settings_are_named(learner, match):
    with pytest.raises(ValueError, match=match):
        tune(radius=1.0, **learner)
