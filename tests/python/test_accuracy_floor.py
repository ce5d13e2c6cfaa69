"""An application's accuracy floor admits a model whose accuracy equals it: queries carry the floor
in 32 bits, rounded down, so 0.749 (0.74900001... as the nearest float) does not rule out a model
of accuracy 0.749. Every policy that filters by accuracy sees the same floor."""

import numpy as np
import pytest

import servelab
from servelab.results import COMPLETED

PROFILE = {
    "format": "servelab.profile",
    "version": 1,
    "hardware": {"cpu": {"price_per_hour": 1.0}},
    "models": {"low": {"accuracy": 0.70}, "exact": {"accuracy": 0.749}},
    "latency": [
        {"hardware": "cpu", "model": m, "batch": 1, "samples_ms": [2.0]} for m in ("low", "exact")
    ],
}


@pytest.mark.parametrize("floor", [0.749, 0.1 + 0.2, 1 / 3])
@pytest.mark.parametrize("scheduler", ["fcfs", "edf", "jsq", "least_finish_time", "batching"])
def test_a_model_exactly_at_the_floor_serves_the_application(floor, scheduler):
    profile = dict(PROFILE, models={"low": {"accuracy": 0.2}, "exact": {"accuracy": floor}})
    scenario = {
        "profile": servelab.profiles.from_dict(profile),
        "workers": [{"hardware": "cpu", "count": 2, "models": ["low", "exact"]}],
        "workload": {
            "arrivals": "poisson(rate=100)",
            "count": 200,
            "apps": [
                {"name": "any", "slo_ms": 500},
                {"name": "strict", "slo_ms": 500, "accuracy_floor": floor},
            ],
        },
    }
    r = servelab.simulate(scenario, scheduler=scheduler, seed=0)
    c = r.columns
    assert np.all(c["status"] == COMPLETED), r.meta["drop_reasons"]
    strict = c["app"] == 1
    assert np.all(c["model"][strict] == 1)  # "exact", the second model of the profile
