"""Interference between co-located variants (the `infaas_interference` config model), the
Interfered state and the VM-Autoscaler's all-interfered rule (Sec. 4.2.3, rule 2)."""

from __future__ import annotations

import numpy as np
import pytest

import servelab
from servelab import infaas

PROFILE = infaas.to_profile(infaas.resnet50_variants())
TRT = "resnet50_tensorrt_gpu_b1"


def machine(rate: float, workers: int = 2, same_machine: bool = True) -> dict:
    return {
        "profile": PROFILE,
        "workers": [
            {
                "hardware": "gpu",
                "count": 1,
                "models": [TRT],
                "config": {"machine": 0 if same_machine else w},
            }
            for w in range(workers)
        ],
        "workload": {
            "arrivals": f"poisson(rate={rate})",
            "count": int(rate * 20),
            "apps": [{"name": "classify", "slo_ms": 100, "accuracy_floor": 0.7}],
        },
        "drain_s": 60,
    }


def service_ms(res: servelab.Result) -> np.ndarray:
    b = res.batches()
    return (b["finish_ns"] - b["start_ns"]).to_numpy() / 1e6


def test_co_located_busy_workers_slow_each_other_in_proportion_to_alpha():
    scenario = machine(100)
    plain = servelab.simulate(scenario, scheduler="clipper_plus", seed=0)
    half = servelab.simulate(
        scenario, scheduler="clipper_plus", config_model="infaas_interference(alpha=0.5)", seed=0
    )
    apart = servelab.simulate(
        machine(100, same_machine=False),
        scheduler="clipper_plus",
        config_model="infaas_interference(alpha=0.5)",
        seed=0,
    )
    p, h, a = service_ms(plain), service_ms(half), service_ms(apart)
    print(
        f"\nmean batch ms: alone {p.mean():.2f}, co-located alpha 0.5 {h.mean():.2f}, "
        f"separate machines {a.mean():.2f}"
    )
    assert np.allclose(p, 15.0) and np.allclose(a, 15.0)  # no co-location, no slowdown
    assert set(np.round(h, 3)) <= {15.0, 22.5}  # 15 ms x (1 + 0.5 x busy share of the other)
    assert (np.round(h, 3) == 22.5).any()


def test_bad_alpha_names_the_field():
    with pytest.raises(ValueError, match="alpha"):
        servelab.simulate(
            machine(10), scheduler="clipper_plus", config_model="infaas_interference(alpha=-1)"
        )


def test_all_interfered_starts_a_worker_rule_2():
    # Two co-located GPU workers slowed 3x when both run: every instance turns Interfered, and the
    # VM-Autoscaler starts a GPU worker although neither worker is over 80 % busy.
    scenario = machine(60)
    spec = "infaas(max_workers=3, startup_s=1, poll_s=0.5, idle_s=600, autoscale_s=0)"
    hit = servelab.simulate(
        scenario, scheduler=spec, config_model="infaas_interference(alpha=2)", seed=0
    )
    calm = servelab.simulate(scenario, scheduler=spec, seed=0)
    print(
        f"\nworkers: interfered {hit.summary()['workers']}, without interference "
        f"{calm.summary()['workers']}"
    )
    assert hit.summary()["workers"] > calm.summary()["workers"]


def test_fitting_alpha_from_co_located_real_executors():
    # Real runs of a small recsys model: the fit must be consistent with its own measurements
    # (no timing is asserted: the figures depend on the machine and its load).
    from servelab.systems.infaas import experiments

    fit = experiments.fit_interference(
        models=["ncf"], batches_per_run=[8, 32], backend="reference", repeats=1, batches=4
    )
    assert len(fit["points"]) == 2
    for p in fit["points"]:
        assert p["median_alone_ms"] > 0 and p["median_together_ms"] > 0
        assert p["alpha"] == pytest.approx(p["median_together_ms"] / p["median_alone_ms"] - 1)
    alphas = [p["alpha"] for p in fit["points"]]
    assert fit["median_alpha"] == pytest.approx(float(np.median(alphas)))
    assert fit["alpha"] == max(0.0, fit["median_alpha"])
    # The fitted spec is one the simulator takes.
    servelab.simulate(machine(10), scheduler="clipper_plus", config_model=fit["spec"], seed=0)


def test_fitting_nothing_is_refused():
    from servelab.systems.infaas import experiments

    with pytest.raises(ValueError, match="models=\\[\\]"):
        experiments.fit_interference(models=[])
